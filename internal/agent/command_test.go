//go:build unix

package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
)

// TestShellLongCommandRunsWhole: a command over the argv limit behaves
// as a short one. It once went to /bin/sh -s on stdin, where a program
// that reads stdin (cat, read, ssh) ate the rest of the script, whose
// later lines never ran, and the step still succeeded.
func TestShellLongCommandRunsWhole(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("# "+strings.Repeat("x", 98)+"\n", 1500) // 150 KiB
	for _, tc := range []struct {
		name, cmd string
		exit      int
	}{
		{"short", "cat >/dev/null\necho after > marker\n", 0},
		{"long", "cat >/dev/null\n" + pad + "echo after > marker\n", 0},
		{"short, exit", "cat >/dev/null\necho after > marker\nexit 3\n", 3},
		{"long, exit", "cat >/dev/null\n" + pad + "echo after > marker\nexit 3\n", 3},
		{"dash", "-n x 2>/dev/null; echo after > marker\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tmp := t.TempDir()
			res, err := agent.Run(t.Context(), agent.Call{Def: agent.Shell, Prompt: tc.cmd, Dir: dir,
				Env: []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}})
			assert.Equal(t, tc.exit, res.ExitCode)
			var ae *agent.AgentError
			if tc.exit == 0 {
				require.NoError(t, err)
			} else {
				require.True(t, errors.As(err, &ae), "%v", err)
			}
			b, rerr := os.ReadFile(filepath.Join(dir, "marker"))
			require.NoError(t, rerr, "the line after the padding did not run")
			assert.Equal(t, "after\n", string(b))
		})
	}
}
