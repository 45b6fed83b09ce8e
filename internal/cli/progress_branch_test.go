package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

func forkNode(id, text string) *types.ProcessedNode {
	return &types.ProcessedNode{Node: &types.Node{ID: id, Text: text},
		Settings: &types.Settings{Role: types.RoleProcess, CLI: "claude"}}
}

// forkCalls plays the walker's calls for a fork plan → tests, docs →
// review, the two branches taking turns: tests starts, docs starts, a tool
// call of each, tests ends, then docs.
func forkCalls(p *progress) {
	plan, tests, docs, review := forkNode("plan", "Plan it"), forkNode("tests", "Write the tests"),
		forkNode("docs", "Write the docs"), forkNode("review", "Review it")
	ok := func(n *types.ProcessedNode) *run.NodeResult {
		return &run.NodeResult{ID: n.ID, Text: n.Text, Status: run.StatusSucceeded, DurationMS: 1000}
	}
	p.NodeStarted(plan, 1)
	p.NodeFinished(ok(plan))
	p.BranchStarted("plan/tests", "plan", "tests")
	p.BranchStarted("plan/docs", "plan", "docs")
	p.OnBranch("plan/tests")
	p.NodeStarted(tests, 1)
	p.AttemptStarted(tests, 1, "claude", "run")
	p.OnBranch("plan/docs")
	p.NodeStarted(docs, 1)
	p.AttemptStarted(docs, 1, "claude", "run")
	p.Event(runlog.ToolCall{Node: "docs", Purpose: "run", Tool: "Edit", Arg: "README.md", Status: runlog.ToolOK})
	p.OnBranch("plan/tests")
	p.Event(runlog.ToolCall{Node: "tests", Purpose: "run", Tool: "Bash", Arg: "go test ./...", Status: runlog.ToolError})
	p.NodeFinished(ok(tests))
	p.BranchEnded("plan/tests", run.StatusSucceeded)
	p.OnBranch("plan/docs")
	p.NodeFinished(ok(docs))
	p.BranchEnded("plan/docs", run.StatusSucceeded)
	p.OnBranch("")
	p.NodeStarted(review, 1)
	p.NodeFinished(ok(review))
}

// Off a terminal, -v starts each line a branch prints with the branch's
// id in brackets, the run's own lines as they were; without -v no line
// changes.
func TestProgressBranchLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verbose bool
		want    string
	}{
		{false, `→ plan Plan it [process, claude]
✓ plan Plan it (1s)
→ tests Write the tests [process, claude]
→ docs Write the docs [process, claude]
✓ tests Write the tests (1s)
✓ docs Write the docs (1s)
→ review Review it [process, claude]
✓ review Review it (1s)
`},
		{true, `→ plan Plan it [process, claude]
✓ plan Plan it (1s)
[plan/tests] → tests Write the tests [process, claude]
[plan/tests]   · run attempt 1 with claude
[plan/docs] → docs Write the docs [process, claude]
[plan/docs]   · run attempt 1 with claude
[plan/docs]     ✓ Edit README.md
[plan/tests]     ✗ Bash go test ./...
[plan/tests] ✓ tests Write the tests (1s)
[plan/docs] ✓ docs Write the docs (1s)
→ review Review it [process, claude]
✓ review Review it (1s)
`},
	} {
		var b bytes.Buffer
		p := newProgress(&b, false, tc.verbose, false)
		forkCalls(p)
		assert.Equal(t, tc.want, b.String(), "-v %v", tc.verbose)
	}
}

// Under GitHub Actions a branch's step is printed whole when it ends: its
// group opens and closes with no other step's line between, as the
// runner's groups cannot nest or interleave.
func TestProgressBranchGroupsWhole(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := newProgress(&b, false, false, false)
	p.actions = true
	forkCalls(p)
	out := b.String()
	assert.Equal(t, `::group::→ plan Plan it [process, claude]
::endgroup::
✓ plan Plan it (1s)
::group::[plan/tests] → tests Write the tests [process, claude]
    ✗ Bash go test ./...
::endgroup::
✓ tests Write the tests (1s)
::group::[plan/docs] → docs Write the docs [process, claude]
    ✓ Edit README.md
::endgroup::
✓ docs Write the docs (1s)
::group::→ review Review it [process, claude]
::endgroup::
✓ review Review it (1s)
`, out)
}

// A branch's step that fails under GitHub Actions: its error annotation
// comes after its group, not before it or inside another's.
func TestProgressBranchAnnotationAfterItsGroup(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := newProgress(&b, false, false, false)
	p.actions, p.chart = true, "chart.yaml"
	n := forkNode("tests", "Write the tests")
	n.Line = 12
	p.BranchStarted("plan/tests", "plan", "tests")
	p.OnBranch("plan/tests")
	p.NodeStarted(n, 1)
	p.NodeFinished(&run.NodeResult{ID: "tests", Text: n.Text, Status: run.StatusFailed, Error: "it broke"})
	out := b.String()
	assert.Less(t, strings.Index(out, "::endgroup::"), strings.Index(out, "::error "), out)
	assert.Contains(t, out, "line=12")
}

// The live block costs the same per step whatever the fork's size: 5,000
// branches each start a step and end it, drawn each time, in 0.1 s (10 s
// allowed for -race on a machine at load 26, where it took 4 s; a block
// drawn over every running branch took 260 s for 10,000 without -race).
func TestProgressBranchesHugeFork(t *testing.T) {
	t.Parallel()
	p := newProgress(io.Discard, false, false, true)
	p.cols = func() int { return 80 }
	const n = 5_000
	nodes := make([]*types.ProcessedNode, n)
	start := time.Now()
	for i := range n {
		id := fmt.Sprintf("plan/b%d", i)
		nodes[i] = forkNode(fmt.Sprintf("s%d", i), "Work")
		p.BranchStarted(id, "plan", fmt.Sprintf("b%d", i))
		p.OnBranch(id)
		p.NodeStarted(nodes[i], 1)
	}
	for i := range n {
		id := fmt.Sprintf("plan/b%d", i)
		p.OnBranch(id)
		p.NodeFinished(&run.NodeResult{ID: nodes[i].ID, Text: "Work", Status: run.StatusSucceeded})
		p.BranchEnded(id, run.StatusSucceeded)
	}
	p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded})
	assert.Less(t, time.Since(start), 10*time.Second)
}

// An interrupt's message names a running step and how many more run.
func TestProgressDoingWithBranches(t *testing.T) {
	t.Parallel()
	p := newProgress(io.Discard, false, false, false)
	p.BranchStarted("plan/tests", "plan", "tests")
	p.BranchStarted("plan/docs", "plan", "docs")
	p.OnBranch("plan/tests")
	p.NodeStarted(forkNode("tests", "Write the tests"), 1)
	p.OnBranch("plan/docs")
	p.NodeStarted(forkNode("docs", "Write the docs"), 1)
	assert.Equal(t, `node docs "Write the docs" and 1 step of other branches`, p.doing())
	p.NodeFinished(&run.NodeResult{ID: "docs", Status: run.StatusSucceeded})
	assert.Equal(t, "1 step of the run's branches", p.doing())
	p.OnBranch("plan/tests")
	p.NodeFinished(&run.NodeResult{ID: "tests", Status: run.StatusSucceeded})
	assert.Empty(t, p.doing())
}

// The last lines give each branch's path under the run's, in the order
// the branches started whatever the order they ended, how one that did
// not succeed ended, and at most 20 of them.
func TestProgressBranchPaths(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := newProgress(&b, false, false, false)
	var ended []run.BranchResult
	for i := range 25 {
		id := fmt.Sprintf("plan/b%02d", i)
		p.BranchStarted(id, "plan", fmt.Sprintf("b%02d", i))
		status := run.StatusSucceeded
		if i == 1 {
			status = run.StatusInterrupted
		}
		ended = append([]run.BranchResult{{ID: id, Status: status, Path: []string{fmt.Sprintf("s%02d", i), "t"}}}, ended...)
	}
	p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded, Path: []string{"plan", "review"}, Branches: ended})
	out := b.String()
	assert.Contains(t, out, "path: plan → review\n  branch plan/b00: s00 → t\n  branch plan/b01 (interrupted): s01 → t\n  branch plan/b02: s02 → t\n")
	assert.Contains(t, out, "  branch plan/b19: s19 → t\n  … and 5 more branches (--json and short.json have each one's path)\n")
	assert.NotContains(t, out, "plan/b20")
}

// Where the locale is not UTF-8 a branch's live line is in ASCII.
func TestProgressBranchLiveLineASCII(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := newProgress(&b, false, false, true)
	p.ascii, p.cols = true, func() int { return 80 }
	p.BranchStarted("plan/tests", "plan", "tests")
	p.OnBranch("plan/tests")
	p.NodeStarted(forkNode("tests", "Write the tests"), 1)
	assert.Contains(t, b.String(), clearLine+"|| tests: -> tests Write the tests [process, claude] 0s")
	p.finished(&run.Summary{RunID: "r1", Status: run.StatusSucceeded})
}
