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
	// Step is the node's step kind, which says what the steps after it
	// see of it (stepKind.soFar, field).
	Step types.Step
	// CommandText is a command step's command as it ran, ExitCode its
	// exit status (-1 when it was killed or never ran).
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

// kind is the kind of the finished step; a step of a chart never loaded
// (a test's) is its role's.
func (p *pastStep) kind() stepKind { return kindFor(p.Step, p.Role) }

// remember adds the finished step to its branch's history.
func (s *step) remember() {
	p := pastStep{ID: s.n.ID, Text: s.n.Text, Role: s.n.Role, Status: s.res.Status, Response: s.res.Response,
		Label: s.res.Label, Step: s.n.Step, CommandText: s.command, ExitCode: s.exitCode, Output: types.TailBytes(s.output, maxOutput)}
	s.b.addHistory(p)
}

// keptHistory bounds the finished visits a branch keeps for the run so
// far: it is built from the newest step back and stops when its
// prompts.RunSoFarBytes are spent, and each step it reads costs at least
// its heading line, over 24 bytes ("### Step 1: node  \"\" ()" and a
// newline), so it never reads more than 8 KiB / 24 = 342 steps.
// TestRunSoFarReadsOnlyKeptHistory holds it to that.
const keptHistory = 512

// addHistory adds a finished visit to the branch's history: the newest
// keptHistory visits, and each node's latest for its variables. The list
// is cut back to keptHistory when it reaches twice that, so that what a
// run holds of its steps stays the same at any length of run.
func (b *branch) addHistory(p pastStep) {
	if b.last == nil {
		b.last = map[string]pastStep{}
	}
	b.last[p.ID] = p
	b.history = append(b.history, p)
	if len(b.history) >= 2*keptHistory {
		drop := len(b.history) - keptHistory
		n := copy(b.history, b.history[drop:])
		clear(b.history[n:])
		b.history = b.history[:n]
		b.historyLeftOut += drop
	}
}

// steps is how many visits the branch has finished, those no longer
// kept included.
func (b *branch) steps() int { return b.historyLeftOut + len(b.history) }

// past is the branch's i-th finished visit, 0 the first; one no longer
// kept (which the run so far never reaches) is a bare heading.
func (b *branch) past(i int) pastStep {
	if i < b.historyLeftOut {
		return pastStep{ID: "?", Status: StatusSucceeded}
	}
	return b.history[i-b.historyLeftOut]
}

// lastOf is the latest finished visit of the node on the branch, false
// when it has not run (yet) on it.
func (b *branch) lastOf(id string) (pastStep, bool) {
	p, ok := b.last[id]
	return p, ok
}
