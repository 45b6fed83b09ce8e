package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

func TestProgressLines(t *testing.T) {
	t.Parallel()
	n := &types.ProcessedNode{Node: &types.Node{ID: "4", Text: "Run the tests\nand more"},
		Settings: &types.Settings{Role: types.RoleProcess, CLI: "claude"}}
	for _, live := range []bool{false, true} {
		var b bytes.Buffer
		p := newProgress(&b, false, false, live)
		p.NodeStarted(n, 1)
		p.AttemptFailed(n, 1, "validation did not pass: the README has no install section\nmore detail")
		p.NodeFinished(&run.NodeResult{ID: "4", Text: "Run the tests\nand more", Status: run.StatusSucceeded, DurationMS: 1500})
		p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded, Nodes: []run.NodeResult{{}}, Logs: run.Logs{Dir: "logs/r1"}})
		out := b.String()
		assert.Contains(t, out, "→ 4 Run the tests… [process, claude]", "live %v", live)
		assert.Contains(t, out, "  ✗ attempt 1: validation did not pass: the README has no install section\n", "the whole first line of the reason")
		assert.Contains(t, out, "✓ 4 Run the tests… (1.5s)\n")
		assert.Contains(t, out, "dtree: run r1 succeeded: 1 step in 0s; logs in logs/r1\n")
		if !live {
			assert.NotContains(t, out, "\x1b", "no control codes when stderr is not a terminal")
			continue
		}
		// The live line is erased before each whole line and drawn again
		// after it, so whole lines never mix with it.
		assert.Contains(t, out, clearLine+"  ✗ attempt 1:")
		assert.True(t, strings.HasSuffix(strings.Split(out, "✓ 4 ")[0], clearLine), "the live line is erased before the node's end line")
		assert.Equal(t, 2, strings.Count(out, clearLine+"→ 4 Run the tests"), "drawn at the start and again after the failure line")
	}
}

func TestIsTerminal(t *testing.T) {
	t.Parallel()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer devnull.Close()
	env := func(string) string { return "" }
	assert.False(t, isTerminal(devnull, env), "/dev/null is a character device, not a terminal")
	assert.False(t, isTerminal(&bytes.Buffer{}, env))
}
