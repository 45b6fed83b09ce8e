package run

import (
	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// observe is what the run does with what a call's agent reports as it
// works (agent.Activity, readme/run.md#what-the-agent-is-doing): it is
// called from the goroutine that reads the agent's output, one activity at
// a time, while the walker waits for the call; an error stops the call.
// s is what the run sees of the call (seen.go).
func (w *walker) observe(n *types.ProcessedNode, attempt int, cli, purpose string, s *seen) func(agent.Activity) error {
	b := w.cur
	return func(a agent.Activity) error {
		// From the call's reader, while the branch waits for the call:
		// what it changes is shared with the other branches.
		w.take(b)
		defer w.mu.Unlock()
		// Seen: the run's events, the live line, the step's record.
		s.activity(a)

		// Metered: the budget and the turns, as usage arrives.
		return w.meter(n, attempt, cli, purpose, a)
	}
}
