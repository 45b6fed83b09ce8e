package run

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
		{"100 runes not ASCII, as they are", []string{"plan/" + strings.Repeat("é", 95), "plan/b"}, `"README" (plan/` + strings.Repeat("é", 95) + `, plan/b)`},
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

func TestBranchKeysNeverCollide(t *testing.T) {
	tests := []struct {
		fork  string
		visit int
		name  string
		want  string
	}{
		{"plan", 1, "tests", "plan/tests"},
		{"plan", 2, "tests", "plan#2/tests"},
		{"plan", 1, "Unit tests", "plan/Unit tests"},
		{"a", 1, "b/x", `a/"b/x"`},
		{"a/b", 1, "x", `"a/b"/x`},
		{"a", 2, "x", "a#2/x"},
		{"a#2", 1, "x", `"a#2"/x`},
		{"a", 1, `q"`, `a/"q\""`},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got := branchKey(tt.fork, tt.visit, tt.name)
		assert.Equal(t, tt.want, got)
		assert.False(t, seen[got], "two branches with the key %s", got)
		seen[got] = true
	}
}

// A fork a with a branch labelled b/x, and in its other branch a fork
// a/b with a branch x: two branches of one id, a/b/x, which shared a
// worktree (the second's removed the first's as it ran) and a
// checkpoint ref, and the run failed at the join.
func TestForkBranchesOfLookAlikeIDsRunApart(t *testing.T) {
	src := `title: look-alike ids
nodes:
  - id: a
    text: Fork a.
    command: "true"
    parallel: {"b/x": slow, "other": "a/b"}
  - id: slow
    text: Slow.
    command: echo slow > slow.txt; sleep 1; echo still > slow2.txt
    next: review
  - id: a/b
    text: Fork a/b.
    command: "true"
    parallel: [inner, inner2]
  - {id: inner, text: Inner., command: echo inner > inner.txt, next: ajoin}
  - {id: inner2, text: Inner2., command: echo inner2 > inner2.txt, next: ajoin}
  - {id: ajoin, text: Join a/b., command: "true", next: review}
  - {id: review, text: Review., command: "true", next: done}
  - {id: done, kind: end, text: Done}
`
	src = strings.Replace(src, "parallel: [inner, inner2]", `parallel: {"x": inner, "y": inner2}`, 1)
	sum, dir, _, err := forkRun(t, src, agent.Run, Options{Env: os.Environ()})
	require.NoError(t, err)
	var ids []string
	for _, b := range sum.Branches {
		ids = append(ids, b.ID)
	}
	// Their ids are one, a/b/x; their worktrees and refs two.
	assert.ElementsMatch(t, []string{"a/b/x", "a/other", "a/b/x", "a/b/y"}, ids)
	refs, rerr := exec.Command("git", "-C", dir, "for-each-ref", "--format=%(refname)", "refs/dtree/runs/").Output()
	require.NoError(t, rerr)
	assert.Len(t, strings.Fields(string(refs)), 5, "the run's ref and one per branch:\n%s", refs)
	for _, f := range []string{"slow.txt", "slow2.txt", "inner.txt", "inner2.txt"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}
