package ci

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/run"
)

// JUnit's <system-out> and the job summary give each step's tool calls
// (how many, the last few) and the files it changed, masked; a summary
// of steps without any has no such section.
func TestToolCallsInReports(t *testing.T) {
	sum := summary(run.StatusSucceeded, "succeeded", "succeeded")
	n := &sum.Nodes[0]
	n.ToolCalls = 12
	n.Tools = []run.ToolUse{{Tool: "Read", Arg: "go.mod", Status: "ok"}, {Tool: "Bash", Arg: "curl -H s3cr3t x", Status: "error"},
		{Tool: "Bash", Arg: "sleep 100", Status: "unfinished"}}
	n.Files, n.FilesLeftOut = []string{"gotenv.go", "s3cr3t.txt"}, 3
	mask := func(s string) string { return strings.ReplaceAll(s, "s3cr3t", "***") }

	var j bytes.Buffer
	require.NoError(t, JUnit(&j, sum, Report{Chart: "c.csv", Mask: mask}))
	assert.Contains(t, j.String(), "12 tool calls, the last 3:\n  ✓ Read go.mod\n  ✗ Bash curl -H *** x\n  … Bash sleep 100 (unfinished)\n"+
		"files changed: gotenv.go, ***.txt (and 3 writes not named)\n")
	assert.NotContains(t, j.String(), "s3cr3t")

	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.csv", Mask: mask}}))
	assert.Contains(t, b.String(), "**Tool calls**\n\n- 1 "+md(CaseName(n))+": 12 tool calls, the last: ✓ `Read go.mod`, ✗ `Bash curl -H *** x`, … `Bash sleep 100 (unfinished)`; "+
		"files changed: `gotenv.go`, `***.txt` (and 3 writes not named)\n")
	assert.NotContains(t, b.String(), "s3cr3t")

	b.Reset()
	require.NoError(t, StepSummary(&b, summary(run.StatusSucceeded, "succeeded"), Summary{Report: Report{Chart: "c.csv"}}))
	assert.NotContains(t, b.String(), "Tool calls")
}
