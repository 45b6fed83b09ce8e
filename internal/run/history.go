package run

import "github.com/dtree-dev/dtree/types"

// pastStep is a finished visit as the steps after it see it: in the run
// so far (readme/context.md#the-run-so-far) and in {{node.ID.field}}.
type pastStep struct {
	ID     string
	Text   string
	Role   string // process or decision
	Status string // StatusSucceeded, StatusFailed, …
	// Response is what the step reported: a types.ProcessResponse, a
	// types.DecisionResponse, or nil.
	Response any
	Label    string // the branch a decision took
	// Command is set for a command step, ExitCode then its exit status
	// (-1 when it was killed or never ran).
	Command     bool
	CommandText string
	ExitCode    int
	// Output is the final text of the step's last attempt, its last
	// maxOutput bytes: the agent's answer, or a command's output.
	Output string
}

// maxOutput bounds what is kept of a step's output for the steps after
// it: a command may print megabytes, and a run may have thousands of
// steps.
const maxOutput = 8 << 10

// remember adds the finished step to the run's history.
func (w *walker) remember(s *step) {
	p := pastStep{ID: s.n.ID, Text: s.n.Text, Role: s.n.Role, Status: s.res.Status, Response: s.res.Response,
		Label: s.res.Label, Command: s.n.Command != "", CommandText: s.command, ExitCode: s.exitCode, Output: types.TailBytes(s.output, maxOutput)}
	w.addHistory(p)
}

// addHistory adds a finished visit to the run's history.
func (w *walker) addHistory(p pastStep) {
	if w.last == nil {
		w.last = map[string]int{}
	}
	w.last[p.ID] = len(w.history)
	w.history = append(w.history, p)
}

// lastOf is the latest finished visit of the node, false when it has not
// run (yet) in this run.
func (w *walker) lastOf(id string) (pastStep, bool) {
	i, ok := w.last[id]
	if !ok {
		return pastStep{}, false
	}
	return w.history[i], true
}
