package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/internal/runlog"
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

// A node the budget stopped says whether it did anything, and is not said
// to have failed.
func TestProgressBudgetLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    run.NodeResult
		want string
	}{
		{name: "before the first call", r: run.NodeResult{ID: "4", Text: "Work", Status: run.StatusBudget},
			want: "✗ 4 Work not started: the run reached its budget\n"},
		{name: "before its validation", r: run.NodeResult{ID: "4", Text: "Work", Status: run.StatusBudget, DurationMS: 2000,
			Attempts: []run.Attempt{{N: 1, Purpose: "run"}}},
			want: "✗ 4 Work stopped: the run reached its budget (2s)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			p := newProgress(&b, false, false, false)
			p.NodeFinished(&tt.r)
			assert.Equal(t, tt.want, b.String())
		})
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

// On a terminal of 40 columns the live line is cut to 39, its elapsed
// time kept, so it never wraps; when the window shrinks below the line
// drawn, the rows it wrapped onto are cleared before the redraw.
func TestProgressLiveLineFitsTheTerminal(t *testing.T) {
	t.Parallel()
	n := &types.ProcessedNode{Node: &types.Node{ID: "4", Text: strings.Repeat("Update every dependency ", 4)},
		Settings: &types.Settings{Role: types.RoleProcess, CLI: "claude"}}
	cols := 80
	var b bytes.Buffer
	p := newProgress(&b, false, false, true)
	p.cols = func() int { return cols }
	p.NodeStarted(n, 1)
	frames := strings.Split(b.String(), clearLine)
	last := frames[len(frames)-1]
	assert.Equal(t, 79, textWidth(last), "cut to the width less one column: %q", last)
	assert.True(t, strings.HasSuffix(last, "… 0s"), "the elapsed time is kept: %q", last)

	cols = 40
	b.Reset()
	p.mu.Lock()
	p.redrawResized()
	p.mu.Unlock()
	assert.True(t, strings.HasPrefix(b.String(), "\x1b[1A\r\x1b[J"), "79 columns wrapped onto 2 rows of 40: one row up, cleared to the end: %q", b.String())
	frames = strings.Split(b.String(), clearLine)
	assert.Equal(t, 39, textWidth(frames[len(frames)-1]))

	b.Reset()
	p.mu.Lock()
	p.redrawResized() // the line fits: nothing to clear above
	p.mu.Unlock()
	assert.True(t, strings.HasPrefix(b.String(), clearLine), "%q", b.String())
	p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded})
}

// The path line of a long run shows its two ends and how many steps are
// between: a 100,000-step run's would be a line of 700 KB.
func TestPathLineIsBounded(t *testing.T) {
	t.Parallel()
	ids := func(n int) []string {
		p := make([]string, n)
		for i := range p {
			p[i] = "a"
		}
		return p
	}
	assert.Equal(t, "a → a → a", pathLine(ids(3)))
	assert.Equal(t, strings.Repeat("a → ", 2*pathShown-1)+"a", pathLine(ids(2*pathShown)))
	long := pathLine(ids(100_000))
	assert.Contains(t, long, " → … 99,900 more … → ")
	assert.Less(t, len(long), 1000)
}

// The live line says what the agent is doing: its latest tool call, its
// turns, tokens and cost; it still fits at 80 and at 40 columns, the
// node's text giving way first, then the figures, then the tool call.
func TestProgressLiveLineSaysWhatTheAgentDoes(t *testing.T) {
	t.Parallel()
	n := &types.ProcessedNode{Node: &types.Node{ID: "fix", Text: "Fix the failing test in the parser and run the whole suite again"},
		Settings: &types.Settings{Role: types.RoleProcess, CLI: "claude"}}
	in, out, cost := int64(12000), int64(345), 0.0412
	for _, tc := range []struct {
		cols int
		want string
	}{
		{0, "→ fix Fix the failing test in the parser and run the whole suite a… [process, claude] · Bash go test ./... · turn 4 · 12.3k tokens · $0.04 0s"},
		{80, "→ fix Fix the failing … · Bash go test ./... · turn 4 · 12.3k tokens · $0.04 0s"},
		{40, "→ fix · Bash g… · t4 · 12.3k · $0.04 0s"},
		{24, "→ fix · Bash go tes… 0s"},
	} {
		var b bytes.Buffer
		p := newProgress(&b, false, false, true)
		cols := tc.cols
		p.cols = func() int { return cols }
		p.NodeStarted(n, 1)
		p.Activity(n, 1, "claude", "run", agent.Activity{Kind: agent.ActivityTool, Tool: "Read", Arg: "go.mod", Turns: 3})
		p.Activity(n, 1, "claude", "run", agent.Activity{Kind: agent.ActivityTool, Tool: "Bash", Arg: "go test ./...", Turns: 4,
			Usage: types.Usage{InputTokens: &in, OutputTokens: &out, CostUSD: &cost}})
		p.mu.Lock()
		p.drawLive()
		p.mu.Unlock()
		frames := strings.Split(b.String(), clearLine)
		last := frames[len(frames)-1]
		assert.Equal(t, tc.want, last, "%d columns", tc.cols)
		if tc.cols > 0 {
			assert.LessOrEqual(t, textWidth(last), tc.cols-1, "fits %d columns", tc.cols)
		}
		p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded})
	}
}

// With -v each tool call is a line under the step, as events.jsonl has
// it; without, none.
func TestProgressToolCallLines(t *testing.T) {
	t.Parallel()
	for _, verbose := range []bool{false, true} {
		var b bytes.Buffer
		p := newProgress(&b, false, verbose, false)
		p.Event(runlog.ToolCall{Node: "fix", Purpose: "run", Tool: "Edit", Arg: "gotenv.go", Status: runlog.ToolOK})
		p.Event(runlog.ToolCall{Node: "fix", Purpose: "run", Tool: "Bash", Arg: "go test ./...", Status: runlog.ToolError})
		p.Event(runlog.ToolCall{Node: "fix", Purpose: "validate", Tool: "Bash", Arg: "sleep 100", Status: runlog.ToolUnfinished})
		p.Event(runlog.ToolCallsLeftOut{Node: "fix", LeftOut: 9800})
		if !verbose {
			assert.Empty(t, b.String())
			continue
		}
		assert.Equal(t, "    ✓ Edit gotenv.go\n    ✗ Bash go test ./...\n    … Bash sleep 100 (unfinished) (validate)\n"+
			"    … 9,800 more tool calls, not shown (events.jsonl counts them: tool_calls_left_out)\n", b.String())
	}
}
