package run

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
)

// A branch's id holds its line's label, which a chart's author wrote:
// the conflict a join names it in is one line, whatever the label holds,
// and bounded.
func TestConflictListShowsHostileBranchLabelsInert(t *testing.T) {
	big := strings.Repeat("L", 10<<10)
	tests := []struct {
		name     string
		branches []string
		want     string
	}{
		{"plain as they are", []string{"plan/a", "plan/Unit tests"}, `"README" (plan/a, plan/Unit tests)`},
		{"a line break", []string{"plan/x\n::error::pwned", "plan/b"}, `"README" ("plan/x\n::error::pwned", plan/b)`},
		{"a terminal escape", []string{"plan/\x1b[31mred", "plan/b"}, `"README" ("plan/\x1b[31mred", plan/b)`},
		{"a comma and parentheses", []string{"plan/a, plan/c)", "plan/b"}, `"README" ("plan/a, plan/c)", plan/b)`},
		{"ten kilobytes", []string{"plan/" + big, "plan/b"}, `"README" ("plan/` + strings.Repeat("L", 95) + `…", plan/b)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := conflictList([]workspace.Conflict{{Path: "README", Branches: tt.branches}})
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "\n")
			assert.NotContains(t, got, "\x1b")
			assert.Less(t, len(got), 300)
		})
	}
}

// A branch ends with the status the run ends with for the same error: a
// limit reached in it is limit_reached, a gate it waits at
// waiting_for_approval, not failed.
func TestForkBranchEndsWithTheRunsStatusForItsError(t *testing.T) {
	gate := `title: gate
nodes:
  - id: plan
    text: Plan.
    parallel: [a, b]
  - id: a
    kind: approval
    text: Ship a?
    branches: {"Yes": review, "No": review}
  - id: b
    text: Write b.
    next: review
  - id: review
    text: Review.
    next: done
  - id: done
    kind: end
    text: Done
`
	tests := []struct {
		name, src, branch, want string
		o                       Options
	}{
		{"a limit", forkYAML("all"), "plan/b", StatusLimit, Options{MaxSteps: 3}},
		{"a gate", gate, "plan/a", StatusWaiting, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runner := newWriter().run
			if tt.src == gate {
				runner = func(context.Context, agent.Call) (agent.Result, error) { return agent.Result{Answer: done}, nil }
			}
			sum, _, evs, err := forkRun(t, tt.src, runner, tt.o)
			require.Error(t, err)
			assert.Equal(t, tt.want, sum.Status)
			got := ""
			for _, b := range sum.Branches {
				if b.ID == tt.branch {
					got = b.Status
				}
			}
			assert.Equal(t, tt.want, got, "the branch's status in the summary")
			var ended []string
			for _, ev := range evs {
				if e, ok := ev.(runlog.BranchEnd); ok {
					ended = append(ended, e.Status)
				}
			}
			assert.Contains(t, ended, tt.want, "a branch_end event's")
		})
	}
}
