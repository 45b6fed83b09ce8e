package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// The page a run walked is the Markdown file's flowchart of the same
// place (--page N is the Nth flowchart block): its body is the author's
// text drawn back, whatever blocks of other diagrams or code lie between.
func TestMermaidBlockIsThePages(t *testing.T) {
	t.Parallel()
	md := "# Release\n\n```mermaid\nflowchart TD\n  a --> b\n```\n\n" +
		"```mermaid\nsequenceDiagram\n  A->>B: hi\n```\n\n```go\nfmt.Println()\n```\n\n" +
		"~~~mermaid\ngraph LR\n  x --> y\n~~~\n"
	two := &types.Document{Source: "README.md", Pages: []types.Page{{ID: "1"}, {ID: "2"}}}
	for _, tc := range []struct {
		name, page string
		doc        *types.Document
		src, want  string
	}{
		{name: "the first flowchart", page: "1", doc: two, src: md, want: "flowchart TD\n  a --> b\n"},
		{name: "the second, past a sequence diagram and code", page: "2", doc: two, src: md, want: "graph LR\n  x --> y\n"},
		{name: "a .mmd file is its whole text", page: "p", src: "%% the release\nflowchart TD\n  a --> b",
			doc: &types.Document{Source: "release.mmd", Pages: []types.Page{{ID: "p"}}}, want: "%% the release\nflowchart TD\n  a --> b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, err := mermaidBlock([]byte(tc.src), tc.doc, tc.page)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(body))
		})
	}
	// A file that no longer has the chart's flowcharts, or a page the
	// chart does not have: nothing is drawn onto a text that may be
	// another's.
	for _, tc := range []struct {
		page, src string
	}{
		{"1", "# Release\n\n```mermaid\nflowchart TD\n  a --> b\n```\n"},
		{"3", md},
	} {
		_, err := mermaidBlock([]byte(tc.src), two, tc.page)
		assert.ErrorIs(t, err, errNotTheText, tc.page)
	}
}

// The block alone names its nodes as the author wrote them: a Markdown
// file's second flowchart reusing the first's START is the chart's
// 2:START, and START in the text. A block that no longer holds the
// page's graph (a node, a kind or a line changed) is refused.
func TestMermaidIDs(t *testing.T) {
	t.Parallel()
	md := "```mermaid\nflowchart TD\n  START([Go]) --> A[Work]\n```\n\n" +
		"```mermaid\nflowchart TD\n  START([Go]) --> B{Ok?}\n  B -->|Yes| END([Done])\n```\n"
	doc, err := document.Read("-", document.FormatMermaid, strings.NewReader(md))
	require.NoError(t, err)
	require.Len(t, doc.Pages, 2)
	body, err := mermaidBlock([]byte(md), doc, "2")
	require.NoError(t, err)
	ids, err := mermaidIDs(body, doc, "2")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"2:START": "START", "B": "B", "END": "END"}, ids)

	tr := &export.Trace{Visits: map[string]int{"2:START": 1, "B": 2}, Stopped: "B", StoppedHow: "failed"}
	got := textTrace(tr, ids)
	assert.Equal(t, map[string]int{"START": 1, "B": 2}, got.Visits)
	assert.Equal(t, "B", got.Stopped)
	assert.True(t, known(ids)("START"))
	assert.False(t, known(ids)("2:START"), "the text has no node 2:START")

	for _, changed := range []string{
		"flowchart TD\n  START([Go]) --> B{Ok?}\n  B -->|Yes| END([Done])\n  B -->|No| C[Fix]\n", // a node and a line more
		"flowchart TD\n  START([Go]) --> B[Ok?]\n  B -->|Yes| END([Done])\n",                     // another kind
		"flowchart TD\n  START([Go]) --> B{Ok?}\n  B -->|Sure| END([Done])\n",                    // another label
		"flowchart TD\n  START([Go]) --> C{Ok?}\n  C -->|Yes| END([Done])\n",                     // another id
	} {
		_, err := mermaidIDs([]byte(changed), doc, "2")
		assert.ErrorIs(t, err, errNotTheText, changed)
	}
}

// The job summary of a Mermaid chart shows the author's text when the
// file still holds the graph that ran, and dtree's own drawing, saying
// why, when it changed while the run ran.
func TestSummaryPictureOfAMermaidChart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "release.mmd")
	src := "flowchart TD\n  start([Start]) --> work[Work]\n  work --> done([Done])\n"
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	doc, err := document.Read(path, "", nil)
	require.NoError(t, err)
	tr := &export.Trace{RunID: "r1", Status: "succeeded", Page: doc.Pages[0].ID, Visits: map[string]int{"start": 1, "work": 1, "done": 1}}

	diagram, note, err := summaryPicture(t.Context(), doc, tr, nil)
	require.NoError(t, err)
	assert.Empty(t, note)
	assert.True(t, strings.HasPrefix(diagram, src+"%% run r1 drawn by dtree graph --run: succeeded\n"), diagram)
	assert.Contains(t, diagram, "\nclass done,start,work dtreeTaken\n")

	// An agent of the run added a step to the chart file.
	require.NoError(t, os.WriteFile(path, []byte(src+"  done --> more[More]\n"), 0o644))
	diagram, note, err = summaryPicture(t.Context(), doc, tr, nil)
	require.NoError(t, err)
	assert.Contains(t, note, "The chart's Mermaid could not be matched to the run (its file changed while the run ran); this is dtree's drawing of the run instead.")
	assert.Contains(t, diagram, `n0(["Start<br/>✓ reached"])`, "dtree's drawing, from the chart that ran")

	// Bounded as the rest of the summary: a text over GitHub's 50,000
	// characters, or a file over 8 MiB, is not shown, and not read past
	// 8 MiB.
	require.NoError(t, os.WriteFile(path, []byte(src+strings.Repeat("  %% a comment line\n", 3000)), 0o644))
	diagram, note, err = summaryPicture(t.Context(), doc, tr, nil)
	require.NoError(t, err)
	assert.Contains(t, note, "The chart's Mermaid is too large for GitHub to draw (60069 characters, over 50000); this is dtree's drawing of the run instead.")
	assert.Contains(t, diagram, `n0(["Start<br/>✓ reached"])`)
	require.NoError(t, os.WriteFile(path, []byte(src+strings.Repeat("%% padding\n", 800_000)), 0o644))
	diagram, note, err = summaryPicture(t.Context(), doc, tr, nil)
	require.NoError(t, err)
	assert.Contains(t, note, "The chart's file is over 8 MiB, too large to read for its Mermaid; this is dtree's drawing of the run instead.")
	assert.Contains(t, diagram, `n0(["Start<br/>✓ reached"])`)

	// A chart from stdin is not read again: dtree's drawing, no note.
	doc.Source = "-"
	diagram, note, err = summaryPicture(t.Context(), doc, tr, nil)
	require.NoError(t, err)
	assert.Empty(t, note)
	assert.Contains(t, diagram, `n0(["Start<br/>✓ reached"])`)
}

// graph --run reads the chart's text with the chart, and refuses a file
// that changed in between (readUnchanged); the ids of a later Markdown
// block are the text's own (pageTextIDs); the links are the page's edges
// in the reader's order, none when the text has an invisible link, which
// Mermaid counts and the reader does not (textLinks).
func TestGraphOntoReadsOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.mmd")
	require.NoError(t, os.WriteFile(path, []byte("flowchart TD\n  a --> b\n"), 0o644))
	before, err := os.Stat(path)
	require.NoError(t, err)
	got, err := readUnchanged(path, before)
	require.NoError(t, err)
	assert.Equal(t, "flowchart TD\n  a --> b\n", string(got))
	require.NoError(t, os.WriteFile(path, []byte("flowchart TD\n  a --> b --> c\n"), 0o644))
	_, err = readUnchanged(path, before)
	require.ErrorIs(t, err, errNotTheText)
	assert.ErrorContains(t, err, "changed while it was read")

	md := "# Two\n\n```mermaid\ngraph TD\n  START --> A\n```\n\n```mermaid\ngraph TD\n  START -->|go| B\n  B --> C & D\n```\n"
	doc, err := document.Read("-", "mermaid", strings.NewReader(md))
	require.NoError(t, err)
	ids := pageTextIDs(doc, "2")
	assert.Equal(t, map[string]string{"2:START": "START", "B": "B", "C": "C", "D": "D"}, ids)
	body, err := mermaidBlock([]byte(md), doc, "2")
	require.NoError(t, err)
	assert.Equal(t, []export.MermaidLink{{From: "START", To: "B", Label: "go"}, {From: "B", To: "C"}, {From: "B", To: "D"}},
		textLinks(body, doc, "2", ids))
	assert.Nil(t, textLinks([]byte("graph TD\n  START ~~~ B\n"), doc, "2", ids), "~~~ counts in Mermaid's numbering only")
}
