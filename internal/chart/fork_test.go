package chart_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/types"
)

// TestCheckMarksForksAndJoins loads the fork chart of each format: it is
// clean, its fork runs as a validated process (not a decision whose lines
// need labels), and the load puts the fork's join and branches on the
// fork's node and the join's mode on the join's (readme/parallel.md).
func TestCheckMarksForksAndJoins(t *testing.T) {
	t.Parallel()
	for _, f := range []struct{ file, fork, join, firstBranch string }{
		{"fork.csv", "4", "9", "tests"},
		{"fork.json", "Pl4nF0rkKq2c", "Jn9rEviewQ7h", "tests"},
		{"fork.drawio", "Fk7wQ2pLm9xRt4Zb1sVe-2", "Fk7wQ2pLm9xRt4Zb1sVe-7", "tests"},
		{"fork.mmd", "Plan", "Review", "tests"},
		{"fork.yaml", "plan", "review", "tests"},
	} {
		t.Run(f.file, func(t *testing.T) {
			t.Parallel()
			c, err := chart.Load(filepath.Join("..", "..", "testdata", "charts", "fork", f.file), nil,
				chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}})
			require.NoError(t, err)
			require.Empty(t, c.Errors)
			require.Empty(t, c.Warnings)
			forks, joins := 0, 0
			for i, n := range c.Nodes {
				if n.Fork != nil {
					forks++
					assert.Equal(t, f.fork, n.ID)
					assert.Equal(t, f.join, n.Fork.Join)
					require.Len(t, n.Fork.Branches, 3)
					assert.Equal(t, f.firstBranch, n.Fork.Branches[0].Name)
					assert.Equal(t, types.RoleProcess, n.Role)
					assert.True(t, n.Validate)
					assert.Equal(t, types.StepProcess, c.Doc.Nodes[i].Step)
				}
				if n.Join != "" {
					joins++
					assert.Equal(t, f.join, n.ID)
					assert.Equal(t, types.JoinAll, n.Join)
				}
			}
			assert.Equal(t, 1, forks)
			assert.Equal(t, 1, joins)
		})
	}
}
