package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// testChange is a change of files paths, each +4 −1.
func testChange(files int) *types.Change {
	c := &types.Change{Files: files, Added: 4 * files, Removed: files, Paths: []types.PathChange{}}
	for i := range min(files, types.MaxChangePaths) {
		c.Paths = append(c.Paths, types.PathChange{Path: "src/" + strings.Repeat("x", i) + ".go", Status: "M", Added: 4, Removed: 1})
	}
	return c
}

// A step's line ends with what it changed; -v lists the files, at most
// pathsShown; a step that changed nothing, or ran without checkpoints,
// has its line as before.
func TestProgressSaysWhatAStepChanged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		verbose bool
		r       run.NodeResult
		want    string
	}{
		{name: "changed", r: run.NodeResult{ID: "4", Text: "Fix it", Status: run.StatusSucceeded, DurationMS: 12000, Change: testChange(3)},
			want: "✓ 4 Fix it (12s) · 3 files +12 −3\n"},
		{name: "a decision's label first", r: run.NodeResult{ID: "5", Text: "Done?", Status: run.StatusSucceeded, Label: "No", DurationMS: 1000, Change: testChange(1)},
			want: "✓ 5 Done? → No (1s) · 1 file +4 −1\n"},
		{name: "failed", r: run.NodeResult{ID: "4", Text: "Fix it", Status: run.StatusFailed, DurationMS: 1000, Change: testChange(1)},
			want: "✗ 4 Fix it failed (1s) · 1 file +4 −1\n"},
		{name: "interrupted", r: run.NodeResult{ID: "4", Text: "Fix it", Status: run.StatusInterrupted, DurationMS: 1000, Change: testChange(1)},
			want: "✗ 4 Fix it interrupted (1s) · 1 file +4 −1\n"},
		{name: "stopped by the budget", r: run.NodeResult{ID: "4", Text: "Fix it", Status: run.StatusBudget, DurationMS: 1000, Change: testChange(1),
			Attempts: []run.Attempt{{N: 1}}},
			want: "✗ 4 Fix it stopped: the run reached its budget (1s) · 1 file +4 −1\n"},
		{name: "nothing changed", r: run.NodeResult{ID: "4", Text: "Fix it", Status: run.StatusSucceeded, DurationMS: 1000, Change: &types.Change{}},
			want: "✓ 4 Fix it (1s)\n"},
		{name: "checkpoints off", verbose: true, r: run.NodeResult{ID: "4", Text: "Fix it", Status: run.StatusSucceeded, DurationMS: 1000},
			want: "✓ 4 Fix it (1s)\n"},
		{name: "-v lists the files", verbose: true, r: run.NodeResult{ID: "4", Text: "Fix it", Status: run.StatusSucceeded, DurationMS: 1000, Change: testChange(2)},
			want: "✓ 4 Fix it (1s) · 2 files +8 −2\n    M src/.go +4 −1\n    M src/x.go +4 −1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			p := newProgress(&b, false, tc.verbose, false)
			p.NodeFinished(&tc.r)
			assert.Equal(t, tc.want, b.String())
		})
	}
}

// On a terminal too narrow for the step's line and its change, the
// change is a line of its own under it: the line wraps no more than it
// did, and each line fits.
func TestProgressChangeFitsTheTerminal(t *testing.T) {
	t.Parallel()
	r := &run.NodeResult{ID: "fix", Text: "Fix the failing test in the parser and run the whole suite again",
		Status: run.StatusSucceeded, DurationMS: 12000, Change: testChange(3)}
	for _, tc := range []struct {
		cols int
		want string
	}{
		{0, "✓ fix Fix the failing test in the parser and run the whole suite a… (12s) · 3 files +12 −3\n"},
		{120, "✓ fix Fix the failing test in the parser and run the whole suite a… (12s) · 3 files +12 −3\n"},
		{80, "✓ fix Fix the failing test in the parser and run the whole suite a… (12s)\n  · 3 files +12 −3\n"},
		{40, "✓ fix Fix the failing test in the parser and run the whole suite a… (12s)\n  · 3 files +12 −3\n"},
	} {
		var b bytes.Buffer
		p := newProgress(&b, false, false, false)
		cols := tc.cols
		p.cols = func() int { return cols }
		p.NodeFinished(r)
		assert.Equal(t, tc.want, b.String(), "%d columns", tc.cols)
	}
}

// -v lists the first pathsShown files of a large change and counts the
// rest; a file name with a line break stays on its line.
func TestProgressChangedPathsAreBounded(t *testing.T) {
	t.Parallel()
	c := testChange(100_000)
	c.Paths[0].Path = "evil\n::error::x"
	var b bytes.Buffer
	p := newProgress(&b, false, true, false)
	p.NodeFinished(&run.NodeResult{ID: "4", Text: "Vendor", Status: run.StatusSucceeded, Change: c})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	assert.Len(t, lines, 1+pathsShown+1)
	assert.Equal(t, `    M "evil\n::error::x" +4 −1`, lines[1])
	assert.Equal(t, "    … 99,990 more files, not shown (dtree diff lists them)", lines[len(lines)-1])
}

// The run's last lines say what it changed and how to see it, on one
// line at 80 columns and on two that fit at 40; in ASCII under a locale
// that is not UTF-8.
func TestProgressSaysWhatTheRunChanged(t *testing.T) {
	t.Parallel()
	sum := &run.Summary{RunID: "20261126T230655Z-abcdef", Status: run.StatusSucceeded, Change: testChange(3)}
	for _, tc := range []struct {
		cols int
		want string
	}{
		{0, "changed: 3 files +12 −3 · dtree diff 20261126T230655Z-abcdef\n"},
		{80, "changed: 3 files +12 −3 · dtree diff 20261126T230655Z-abcdef\n"},
		{40, "changed: 3 files +12 −3\n  dtree diff 20261126T230655Z-abcdef\n"},
	} {
		var b bytes.Buffer
		p := newProgress(&b, false, false, false)
		cols := tc.cols
		p.cols = func() int { return cols }
		p.runChanged(sum)
		assert.Equal(t, tc.want, b.String(), "%d columns", tc.cols)
		for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if tc.cols > 0 {
				assert.Less(t, textWidth(line), tc.cols, "fits %d columns: %q", tc.cols, line)
			}
		}
	}
	ascii := string(asciiSymbols([]byte("changed: 3 files +12 −3 · dtree diff r\n✓ 4 Fix it (12s) · 3 files +12 −3\n")))
	assert.Equal(t, "changed: 3 files +12 -3 - dtree diff r\nok 4 Fix it (12s) - 3 files +12 -3\n", ascii)

	var b bytes.Buffer
	p := newProgress(&b, false, false, false)
	p.runChanged(&run.Summary{RunID: "r", Change: &types.Change{}})
	p.runChanged(&run.Summary{RunID: "r"})
	assert.Equal(t, "changed: nothing\n", b.String(), "nothing changed; no line without checkpoints")
}

// A checkpoint that failed is a warning even with --quiet.
func TestProgressWorkspaceOffIsAWarning(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := newProgress(&b, true, false, false)
	p.WorkspaceOff("checkpoint: git failed: checkpoints are off for the rest of the run")
	assert.Equal(t, "dtree: warning: checkpoint: git failed: checkpoints are off for the rest of the run\n", b.String())
}
