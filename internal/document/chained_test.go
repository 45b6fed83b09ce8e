package document_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
)

// chainedLinesCSV is a page with one step and n lines, each with its
// source end on the next line, the last attached to nothing.
func chainedLinesCSV(n int) string {
	var b strings.Builder
	b.WriteString("Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments\n")
	b.WriteString("1,Page,,,,,,,,,,,P,\n2,Process,Flowchart Shapes/Containers,1,,,,,,,,,Work,\n")
	for k := range n {
		src := ""
		if k < n-1 {
			src = fmt.Sprint(101 + k)
		}
		fmt.Fprintf(&b, "%d,Line,,1,,,%s,2,None,Arrow,,,,\n", 100+k, src)
	}
	return b.String()
}

// Each line of a chain quoted the whole message of the next, so lint
// printed 264 MB for a 1.5 MB CSV of 40,000 lines chained to lines (658
// MB for 3.9 MB): a message now names the first lines followed and counts
// the rest.
func TestChainedLinesMessagesAreBounded(t *testing.T) {
	t.Parallel()
	doc, err := document.FromCSV(strings.NewReader(chainedLinesCSV(3)))
	require.NoError(t, err)
	require.Len(t, doc.Errors, 3)
	assert.Equal(t, `line 100 (between 101 and 2 "Work"): its source end is on line 101, which cannot be followed: it leads on to line 102 (between nothing and 2 "Work"): its source end is attached to nothing`, doc.Errors[0].Message)
	assert.Equal(t, []string{"100", "101", "102", "2"}, doc.Errors[0].IDs, "the lines followed, then the step at the line's good end")
	assert.Equal(t, `line 101 (between 102 and 2 "Work"): its source end is on line 102, which cannot be followed: line 102 (between nothing and 2 "Work"): its source end is attached to nothing`, doc.Errors[1].Message)

	doc, err = document.FromCSV(strings.NewReader(chainedLinesCSV(4)))
	require.NoError(t, err)
	assert.Contains(t, doc.Errors[0].Message, "which cannot be followed: it leads on through line 102 to line 103 (between nothing")

	in := chainedLinesCSV(20000)
	doc, err = document.FromCSV(strings.NewReader(in))
	require.NoError(t, err)
	total := 0
	for _, d := range doc.Errors {
		total += len(d.Message)
		assert.Less(t, len(d.Message), 400, d.Message)
		assert.LessOrEqual(t, len(d.IDs), 1+5+1)
	}
	assert.Contains(t, doc.Errors[0].Message, "it leads on through lines 102, 103, 104, 105, 106 and 57 more to line 164 ")
	assert.Less(t, total, 10*len(in))
}
