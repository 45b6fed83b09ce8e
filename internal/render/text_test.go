package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

const header = "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments\n1,Page,,,,,,,,,,,P,\n"

func load(t *testing.T, csv string) *chart.Chart {
	t.Helper()
	doc, err := document.FromCSV(strings.NewReader(csv))
	require.NoError(t, err)
	doc.Source = "t.csv"
	c := chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}})
	require.Empty(t, c.Errors)
	return c
}

func outline(t *testing.T, c *chart.Chart) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, Flow(&b, c, nil, types.BuiltinDefaults()))
	return b.String()
}

// nestedDecisions is a chain of n decisions, each answering Yes to the next
// one and No to a shared End: n levels of nesting in the outline.
func nestedDecisions(n int) string {
	var b strings.Builder
	b.WriteString(header)
	end := 2 + n
	for i := range n {
		fmt.Fprintf(&b, "%d,Decision,Flowchart Shapes/Containers,1,,,,,,,,,Check %d,\n", 2+i, i)
	}
	fmt.Fprintf(&b, "%d,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,End,\n", end)
	id := end + 1
	for i := range n {
		next := 3 + i
		if i == n-1 {
			next = end
		}
		fmt.Fprintf(&b, "%d,Line,,1,,,%d,%d,None,Arrow,,,Yes,\n", id, 2+i, next)
		fmt.Fprintf(&b, "%d,Line,,1,,,%d,%d,None,Arrow,,,No,\n", id+1, 2+i, end)
		id += 2
	}
	return b.String()
}

func TestFlowDeepNestingStaysNarrow(t *testing.T) {
	t.Parallel()
	for _, n := range []int{5, 30, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			out := outline(t, load(t, nestedDecisions(n)))
			lines := strings.Split(strings.TrimSpace(out), "\n")
			widest := 0
			for _, l := range lines {
				widest = max(widest, len([]rune(l)))
			}
			// Each decision prints itself and its No branch; past the cap
			// lines carry "[depth N]" instead of more indentation.
			assert.Len(t, lines, 3+2*n+1, out)
			assert.Less(t, widest, 3*maxIndent+80, "outline width grows with depth")
			if n > maxIndent {
				assert.Contains(t, out, fmt.Sprintf("[depth %d] ", n))
				assert.NotContains(t, out, "] [depth", "depth tags pile up")
			}
		})
	}
}

func TestFlowMergeAndLoop(t *testing.T) {
	t.Parallel()
	csv := header + `2,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,Start,
3,Process,Flowchart Shapes/Containers,1,,,,,,,,,Work,
4,Decision,Flowchart Shapes/Containers,1,,,,,,,,,Done?,
5,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,End,
6,Process,Flowchart Shapes/Containers,1,,,,,,,,,Tidy up,
10,Line,,1,,,2,3,None,Arrow,,,,
11,Line,,1,,,3,4,None,Arrow,,,,
12,Line,,1,,,4,3,None,Arrow,,,No,
13,Line,,1,,,4,6,None,Arrow,,,Yes,
14,Line,,1,,,6,5,None,Arrow,,,,
15,Line,,1,,,4,5,None,Arrow,,,Skip,`
	out := outline(t, load(t, csv))
	assert.Contains(t, out, "├─ No: ↩ loops back to 3 \"Work\"\n")
	assert.Contains(t, out, "└─ Skip: ↩ joins 5 \"End\"\n")
	assert.Equal(t, 1, strings.Count(out, "5 End  [terminator]"), "a merged node is printed once")
}

// TestLineNamesTheStepKind: a node's line says how it runs as its step
// kind says: an agent's step its CLIs, a command its command, a kind
// with no facts of its own its name after its role.
func TestLineNamesTheStepKind(t *testing.T) {
	t.Parallel()
	csv := header + `2,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,Start,
3,Process,Flowchart Shapes/Containers,1,,,,,,,,,Work,
4,Process,Flowchart Shapes/Containers,1,,,,,,,,,Ship it?,
5,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,End,
10,Line,,1,,,2,3,None,Arrow,,,,
11,Line,,1,,,3,4,None,Arrow,,,,
12,Line,,1,,,4,3,None,Arrow,,,rejected,
13,Line,,1,,,4,5,None,Arrow,,,approved,`
	c := load(t, csv)
	i, ok := c.Graph.Index("4")
	require.True(t, ok)
	c.Doc.Nodes[i].Step = "gate" // a kind the load resolved, not an agent's
	out := outline(t, c)
	assert.Contains(t, out, "3 Work  [process, claude]")
	assert.Contains(t, out, "4 Ship it?  [decision (Process shape), gate]")
}

// TestFlowShowsALabelOnOneLine: a line's label, a fork's branch's name
// too, is shown as a node's text is, its first line and bounded: a line
// break in it does not start a line of the outline, and a long one does
// not make one as long.
func TestFlowShowsALabelOnOneLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("L", 1000)
	src := `title: labels
nodes:
  - id: plan
    text: Plan.
    parallel: {"q\nnew line": a, "` + long + `": b}
  - {id: a, text: A., next: check}
  - {id: b, text: B., next: check}
  - id: check
    kind: decision
    text: Done?
    branches: {"Yes\nsecond line": done, "` + long + `": plan2}
  - {id: plan2, text: Again., next: done}
  - {id: done, kind: end, text: Done}
`
	doc, err := document.FromYAML(strings.NewReader(src))
	require.NoError(t, err)
	c := chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}})
	require.Empty(t, c.Errors)
	out := outline(t, c)
	for _, l := range strings.Split(out, "\n") {
		assert.NotContains(t, l, "new line", "a label's second line is not shown")
		assert.NotContains(t, l, "second line", "a label's second line is not shown")
		assert.Less(t, len([]rune(l)), 300, "a line of the outline")
	}
	assert.Contains(t, out, "‖ q…: a A.")
	assert.Contains(t, out, "├─ Yes…: done Done")
	assert.Contains(t, out, "‖ "+strings.Repeat("L", 100)+"…: b B.")
}
