package agent

import "strconv"

// Purposes of an agent call.
const (
	PurposeRun      = "run"      // a process step's work, or a decision
	PurposeValidate = "validate" // the judgement of a process step's work
	PurposeCommand  = "command"  // a command step's command, run by /bin/sh
)

// Request says what an agent call is for: the run, the step and the
// attempt that make it. Whatever answers the call reads it here, in
// process: the runner, the dry run and the replay agent. The agent CLI,
// a child process, sees it as environment variables (Env; readme/run.md
// lists them).
type Request struct {
	RunID   string
	Node    string // the node's id in the chart
	Purpose string // PurposeRun, PurposeValidate or PurposeCommand
	Attempt int    // 1 for the first attempt, 2 for the first retry, …
	// Visit is the visit of the node the call is made for, 1 for the
	// first: the replay agent answers by node and visit. Not in Env.
	Visit int
}

// Env is the request as the child's environment: DTREE_RUN_ID,
// DTREE_NODE_ID, DTREE_ATTEMPT and DTREE_PURPOSE. A call made for no step
// (a probe, a test) has none.
func (r Request) Env() []string {
	if r.Node == "" {
		return nil
	}
	return []string{"DTREE_RUN_ID=" + r.RunID, "DTREE_NODE_ID=" + r.Node,
		"DTREE_ATTEMPT=" + strconv.Itoa(r.Attempt), "DTREE_PURPOSE=" + r.Purpose}
}
