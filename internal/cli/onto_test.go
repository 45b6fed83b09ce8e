package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
