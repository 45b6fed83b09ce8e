package checkpoints

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onBranch is an event line of a fork's branch, as Log.EventOn writes it.
func onBranch(branch, l string) string {
	i := strings.Index(l, `","event":"`) + len(`","event":"`)
	j := i + strings.IndexByte(l[i:], '"') + 1
	return l[:j] + `,"branch":"` + branch + `"` + l[j:]
}

// A fork's branches checkpoint their own worktrees: their visits are
// there to diff, but the run's working tree, Last, is its own steps' and
// the join's merge, never a branch's.
func TestReadFork(t *testing.T) {
	t.Parallel()
	head := []string{
		line("run_start", `"run_id":"R"`),
		line("workspace", `"checkpoint":"`+c("1")+`","ref":"refs/dtree/runs/R","repo":"/repo","run_id":"R"`),
		nodeStart("R", "plan", 1), nodeEnd("R", "plan", 1, c("1"), c("2")),
		onBranch("plan/a", nodeStart("R", "a", 1)), onBranch("plan/b", nodeStart("R", "b", 1)),
		onBranch("plan/a", nodeEnd("R", "a", 1, c("a"), c("b"))),
	}
	join := line("join", `"branches":["plan/a","plan/b"],"checkpoint":"`+c("5")+`","fork":"plan","mode":"all","node":"review","run_id":"R"`)
	tests := []struct {
		name  string
		lines []string
		last  string
	}{
		{"killed during the fork", head, c("2")},
		{"both branches done", append(head[:len(head):len(head)], onBranch("plan/b", nodeEnd("R", "b", 1, c("c"), c("d")))), c("2")},
		{"joined (a conflict: no step after)", append(head[:len(head):len(head)], onBranch("plan/b", nodeEnd("R", "b", 1, c("c"), c("d"))), join), c("5")},
		{"a step after the join", append(head[:len(head):len(head)], join, nodeStart("R", "review", 1), nodeEnd("R", "review", 1, c("5"), c("6"))), c("6")},
		{"a nested fork's join, in a branch", append(head[:len(head):len(head)], onBranch("plan/a", join)), c("2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := Read(strings.NewReader(strings.Join(tt.lines, "\n")+"\n"), "R")
			require.NoError(t, err)
			assert.Equal(t, c("1"), rec.Before)
			assert.Equal(t, tt.last, rec.Last)
			v, err := rec.Find("a", nil)
			require.NoError(t, err)
			assert.Equal(t, c("a"), v.From, "a branch's step: its own change")
			assert.Equal(t, c("b"), v.To)
		})
	}
}
