//go:build linux || darwin

package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/run"
)

// The live block as a terminal shows it, played by the vt of the pty
// scripts (scriptcmds_pty_test.go).

// screenOf is what a terminal cols wide shows after out.
func screenOf(t *testing.T, out string, cols int) []string {
	t.Helper()
	v := &vt{cols: cols, rows: [][]rune{nil}, wrapped: []bool{false}}
	for len(out) > 0 {
		n, err := v.feed(out)
		require.NoError(t, err)
		out = out[n:]
	}
	return strings.Split(strings.TrimSuffix(v.String(), "\n"), "\n")
}

// On a terminal each running branch has its live line, prefixed with its
// name, redrawn together under the lines of the steps that ended; at 80
// and at 40 columns no line wraps, and no stale copy stays on the screen.
func TestProgressBranchLiveBlock(t *testing.T) {
	t.Parallel()
	for _, cols := range []int{80, 40} {
		var b bytes.Buffer
		p := newProgress(&b, false, false, true)
		p.cols = func() int { return cols }
		tests, docs := forkNode("tests", "Write the missing tests for the parser and run them"),
			forkNode("docs", "Update the docs for the change")
		p.BranchStarted("plan/tests", "plan", "tests")
		p.BranchStarted("plan/docs", "plan", "docs")
		p.OnBranch("plan/tests")
		p.NodeStarted(tests, 1)
		p.Activity(tests, 1, "claude", "run", agent.Activity{Kind: agent.ActivityTool, Tool: "Bash", Arg: "go test ./internal/parser/...", Turns: 3})
		p.OnBranch("plan/docs")
		p.NodeStarted(docs, 1)
		p.Activity(docs, 1, "claude", "run", agent.Activity{Kind: agent.ActivityTool, Tool: "Edit", Arg: "README.md", Turns: 1})
		p.mu.Lock()
		p.drawLive() // the tick
		p.mu.Unlock()
		screen := screenOf(t, b.String(), cols)
		require.Len(t, screen, 2, "%d columns: %q", cols, screen)
		assert.True(t, strings.HasPrefix(screen[0], "‖ tests: → tests"), "%q", screen[0])
		assert.True(t, strings.HasPrefix(screen[1], "‖ docs: → docs"), "%q", screen[1])
		assert.Contains(t, screen[1], "· Edit", "what docs' agent does is on docs' line")
		for _, row := range screen {
			assert.LessOrEqual(t, textWidth(row), cols-1, "%d columns: %q", cols, row)
		}

		p.OnBranch("plan/tests")
		p.NodeFinished(&run.NodeResult{ID: "tests", Text: tests.Text, Status: run.StatusSucceeded, DurationMS: 2000})
		p.BranchEnded("plan/tests", run.StatusSucceeded)
		screen = screenOf(t, b.String(), cols)
		assert.True(t, strings.HasPrefix(screen[0], "✓ tests Write the missing tests"), "%q", screen[0])
		last := screen[len(screen)-1]
		assert.True(t, strings.HasPrefix(last, "‖ docs: → docs"), "the line ended is above the block: %q", screen)
		assert.LessOrEqual(t, textWidth(last), cols-1)
		assert.Equal(t, 1, strings.Count(strings.Join(screen, "\n"), "‖"), "no stale live line: %q", screen)

		p.OnBranch("plan/docs")
		p.NodeFinished(&run.NodeResult{ID: "docs", Text: docs.Text, Status: run.StatusSucceeded, DurationMS: 3000})
		p.BranchEnded("plan/docs", run.StatusSucceeded)
		p.OnBranch("")
		p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded, Logs: run.Logs{Dir: "logs/r1"}})
		screen = screenOf(t, b.String(), cols)
		assert.NotContains(t, strings.Join(screen, "\n"), "‖", "no live line is left: %q", screen)
		assert.Contains(t, strings.Join(screen, "\n"), "✓ docs Update the docs", "%q", screen)
	}
}

// A fork of 20 branches shows 7 of them and how many more run: the live
// block is 8 lines whatever the fork's size.
func TestProgressBranchLiveBlockBounded(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := newProgress(&b, false, false, true)
	p.cols = func() int { return 80 }
	for i := range 20 {
		id := fmt.Sprintf("plan/b%02d", i)
		p.BranchStarted(id, "plan", fmt.Sprintf("b%02d", i))
		p.OnBranch(id)
		p.NodeStarted(forkNode(fmt.Sprintf("s%02d", i), "Work"), 1)
	}
	screen := screenOf(t, b.String(), 80)
	require.Len(t, screen, liveShown, "%q", screen)
	assert.True(t, strings.HasPrefix(screen[0], "‖ b00: → s00 Work"), "%q", screen[0])
	assert.True(t, strings.HasPrefix(screen[6], "‖ b06: → s06 Work"), "%q", screen[6])
	assert.Equal(t, "… and 13 more branches running", screen[7])
	p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded})

	// A terminal of 5 rows: the block is 4, so the cursor can go up to
	// its first row and erase it.
	b.Reset()
	p = newProgress(&b, false, false, true)
	p.cols, p.rows = func() int { return 80 }, func() int { return 5 }
	for i := range 20 {
		id := fmt.Sprintf("plan/b%02d", i)
		p.BranchStarted(id, "plan", fmt.Sprintf("b%02d", i))
		p.OnBranch(id)
		p.NodeStarted(forkNode(fmt.Sprintf("s%02d", i), "Work"), 1)
	}
	screen = screenOf(t, b.String(), 80)
	require.Len(t, screen, 4, "%q", screen)
	assert.Equal(t, "… and 17 more branches running", screen[3])
	p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded})
}

// When the window shrinks, the terminal reflows each line of the block
// onto more rows: the redraw clears them all, from the first down, and
// draws the block at the new width, leaving no stale copy above.
func TestProgressBranchLiveBlockResized(t *testing.T) {
	t.Parallel()
	cols := 80
	var b bytes.Buffer
	p := newProgress(&b, false, false, true)
	p.cols = func() int { return cols }
	for _, name := range []string{"tests", "docs"} {
		p.BranchStarted("plan/"+name, "plan", name)
		p.OnBranch("plan/" + name)
		p.NodeStarted(forkNode(name, "Write and run every test of the parser, then the docs of the change"), 1)
	}
	screen := screenOf(t, b.String(), 80)
	require.Len(t, screen, 2, "%q", screen)
	assert.Equal(t, 79, textWidth(screen[0]), "cut to the width less one column: %q", screen[0])

	cols = 40
	b.WriteString("\x00resize 40\x00") // the terminal reflows what it shows
	p.mu.Lock()
	p.redrawResized()
	p.mu.Unlock()
	screen = screenOf(t, b.String(), 80)
	require.Len(t, screen, 2, "two lines of 79 columns took 4 rows of 40; all are cleared: %q", screen)
	for _, row := range screen {
		assert.LessOrEqual(t, textWidth(row), 39, "%q", row)
	}
	p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded})
}
