package ci

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// change is a change of n files, the first named as given.
func change(n int, paths ...string) *types.Change {
	c := &types.Change{Files: n, Added: 40 * n, Removed: 2, Paths: []types.PathChange{}}
	for i := range n {
		p := fmt.Sprintf("dir/f%03d.go", i)
		if i < len(paths) {
			p = paths[i]
		}
		c.Paths = append(c.Paths, types.PathChange{Path: p, Status: "M", Added: 40})
	}
	return c
}

func TestChangeBrief(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "no change", ChangeBrief(nil))
	assert.Equal(t, "no change", ChangeBrief(&types.Change{}))
	assert.Equal(t, "1 file +40 −2", ChangeBrief(change(1)))
	assert.Equal(t, "3 files +1,200 −2", ChangeBrief(&types.Change{Files: 3, Added: 1200, Removed: 2}))
	assert.Equal(t, `"a\nb"`, PathText("a\nb"), "a line break stays in its line")
	assert.Equal(t, `"\xff.go"`, PathText("\xff.go"))
	assert.Equal(t, "sp ace.go", PathText("sp ace.go"))
	assert.Equal(t, "A img.png binary", PathLine(types.PathChange{Path: "img.png", Status: "A", Binary: true}))
}

// Each step's case says what it changed, its files bounded; a step with
// checkpoints off says nothing of it.
func TestJUnitSaysWhatEachStepChanged(t *testing.T) {
	t.Parallel()
	sum := summary(run.StatusSucceeded, "succeeded", "succeeded", "succeeded")
	sum.Nodes[0].Change = change(2, "main.go", "hunter2\n]]>.go")
	sum.Nodes[1].Change = change(30)
	var b bytes.Buffer
	mask := func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") }
	require.NoError(t, JUnit(&b, sum, Report{Chart: "c.csv", Mask: mask}))
	assert.NotContains(t, b.String(), "hunter2")
	cases := parseJUnit(t, b.Bytes()).Suites[0].Cases
	assert.Contains(t, cases[0].Out, "changed: 2 files +80 −2\n  M main.go +40 −0\n  M \"***\\n]]>.go\" +40 −0\n")
	assert.Contains(t, cases[1].Out, "changed: 30 files +1,200 −2\n")
	assert.Contains(t, cases[1].Out, "  M dir/f019.go +40 −0\n  … 10 more files\n")
	assert.NotContains(t, cases[1].Out, "f020")
	assert.NotContains(t, cases[2].Out, "changed:")
}

// The job summary says the run's change, a column of each step's, and
// the files of each step that changed any, as inert code; without
// checkpoints it has none of them.
func TestStepSummarySaysWhatChanged(t *testing.T) {
	t.Parallel()
	sum := summary(run.StatusSucceeded, "succeeded", "succeeded")
	sum.Nodes[0].Change = change(2, "`@octocat` <b>x</b>.md", "| pipe.go")
	sum.Nodes[1].Change = &types.Change{Paths: []types.PathChange{}}
	sum.Change = change(2)
	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.csv"}}))
	got := b.String()
	assert.Contains(t, got, "· changed: 2 files \\+80 −2.\n")
	assert.Contains(t, got, "| # | Step | Status | Time | Attempts | Tokens | Cost | Changed |\n")
	assert.Contains(t, got, "| $0.0123 | 2 files \\+80 −2 |\n")
	assert.Contains(t, got, "| $0.0123 | — |\n", "a step that changed nothing")
	assert.Contains(t, got, "**Changes**\n\n- 1 2 Step text…: 2 files \\+80 −2: M \\`\\@octocat\\` \\<b\\>x\\</b\\>.md, M `| pipe.go`\n")
	assert.Contains(t, got, "What it changed: `dtree diff 20261125T010203Z-abcdef`.")

	off := summary(run.StatusSucceeded, "succeeded")
	b.Reset()
	require.NoError(t, StepSummary(&b, off, Summary{Report: Report{Chart: "c.csv"}}))
	assert.NotContains(t, b.String(), "Changed")
	assert.NotContains(t, b.String(), "dtree diff")
}

// A step that changed 100,000 files lists 10 of them.
func TestStepSummaryChangesAreBounded(t *testing.T) {
	t.Parallel()
	sum := summary(run.StatusSucceeded, "succeeded")
	c := change(types.MaxChangePaths)
	c.Files, c.PathsLeftOut = 100_000, 100_000-types.MaxChangePaths
	sum.Nodes[0].Change = c
	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.csv"}}))
	assert.Contains(t, b.String(), "`dir/f009.go` and 99,990 more\n")
	assert.NotContains(t, b.String(), "f010")
}
