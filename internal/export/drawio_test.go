package export_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// drawioNorm is normalize as draw.io keeps a chart: no title, a page with
// no title is draw.io's Page-N, and a node of kind other (draw.io has no
// such shape) is a process step.
func drawioNorm(doc *types.Document) norm {
	d := *doc
	d.Title = ""
	d.Pages = slices.Clone(doc.Pages)
	for i := range d.Pages {
		if d.Pages[i].Title == "" {
			d.Pages[i].Title = "Page-" + strconv.Itoa(i+1)
		}
	}
	d.Nodes = asKeyedSteps(doc.Nodes)
	return normalize(&d, true)
}

// asKeyedSteps is a copy of nodes as draw.io and Mermaid keep them:
// custom data keys with _ for spaces (both write a key as a name), and a
// node of kind other (neither has such a shape) a process step.
func asKeyedSteps(nodes []types.Node) []types.Node {
	nodes = slices.Clone(nodes)
	for i := range nodes {
		if len(nodes[i].Metadata) > 0 {
			m := types.Metadata{}
			for k, v := range nodes[i].Metadata {
				m[strings.ReplaceAll(strings.TrimSpace(k), " ", "_")] = v
			}
			nodes[i].Metadata = m
		}
		if nodes[i].Kind == types.KindOther {
			nodes[i].Kind, nodes[i].Shape = types.KindProcess, ""
		}
	}
	return nodes
}

// toDrawio writes doc as draw.io and reads it back, checking the XML is
// well formed and that reading adds no error or new warning.
func toDrawio(t *testing.T, doc *types.Document) (*types.Document, []string, string) {
	t.Helper()
	var buf bytes.Buffer
	dropped, err := export.Drawio(&buf, doc)
	require.NoError(t, err)
	wellFormed(t, buf.String())
	back, err := document.Read("-", "drawio", bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Empty(t, back.Errors, "draw.io written:\n%s", buf.String())
	for _, w := range back.Warnings {
		require.True(t, slices.ContainsFunc(doc.Warnings, func(d types.Diagnostic) bool { return d.Class == w.Class }),
			"read back with %s %s:\n%s", w.Class, w.Message, buf.String())
	}
	return back, dropped, buf.String()
}

// wellFormed parses s with encoding/xml, which checks well-formedness.
func wellFormed(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		require.NoError(t, err, "not well-formed XML")
	}
}

// TestDrawioRoundTrip writes every clean chart as draw.io and reads it
// back (csv -> drawio -> yaml is csv -> yaml), and a draw.io chart through
// YAML and back (drawio -> yaml -> drawio -> yaml).
func TestDrawioRoundTrip(t *testing.T) {
	t.Parallel()
	for name, doc := range cleanCharts(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			back, dropped, _ := toDrawio(t, doc)
			back = dropAddedStarts(t, doc, back, dropped)
			assert.Equal(t, drawioNorm(doc), drawioNorm(back), "through draw.io")
			var vars []types.Var // draw.io's properties have values
			for _, v := range doc.Vars {
				if v.HasDefault && v.Default != "" {
					vars = append(vars, v)
				}
			}
			assert.Equal(t, vars, back.Vars, "variables")
			assert.Equal(t, doc.Metadata["context"], back.Metadata["context"], "context")
			// Ids are kept: a run's log names the same nodes.
			if len(back.Nodes) == len(doc.Nodes) {
				for i := range doc.Nodes {
					assert.Equal(t, doc.Nodes[i].ID, back.Nodes[i].ID)
				}
			}
			viaYAML, _ := convert(t, back, "yaml")
			again, dropped2, _ := toDrawio(t, viaYAML)
			again = dropAddedStarts(t, viaYAML, again, dropped2)
			yaml2, _ := convert(t, again, "yaml")
			assert.Equal(t, normalize(viaYAML, true), normalize(yaml2, true), "draw.io -> YAML -> draw.io -> YAML")
		})
	}
}

func TestDrawioHostileText(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		`a <b> & "c" 'd'`,
		"line one\nline two\n\tindented",
		"]]> <![CDATA[ x ]]>",
		"<mxCell id=\"x\" vertex=\"1\"/>",
		"&amp; &#10; &lt;",
		"%name% {{var.x}} $(rm -rf /)",
		"bad \x01 byte \xff end",
	} {
		t.Run(text, func(t *testing.T) {
			doc := &types.Document{Pages: []types.Page{{ID: "p<1>", Title: text, Root: "a"}}, Nodes: []types.Node{
				{ID: "a", Page: "p<1>", Kind: types.KindTerminator, Text: "Start"},
				{ID: "b\"&", Page: "p<1>", Kind: types.KindProcess, Text: text, Tags: []string{"x&y"}, Metadata: types.Metadata{"cli": text}},
				{ID: "c", Page: "p<1>", Kind: types.KindTerminator, Text: "End"}},
				Edges: []types.Edge{{ID: "e1", Page: "p<1>", From: "a", To: "b\"&"}, {ID: "e2", Page: "p<1>", From: "b\"&", To: "c", Label: text}},
				Vars:  []types.Var{{Name: "x", Default: text, HasDefault: true}}}
			back, _, out := toDrawio(t, doc)
			if strings.ContainsAny(text, "<&\"\n") {
				assert.NotContains(t, out, text, "the text is escaped")
			}
			want := strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(text, "\x01", "\uFFFD"), "\uFFFD"))
			require.Len(t, back.Nodes, 3)
			assert.Equal(t, "b\"&", back.Nodes[1].ID)
			assert.Equal(t, want, back.Nodes[1].Text)
			assert.Equal(t, strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(text, "\x01", "\uFFFD"), "\uFFFD")), back.Nodes[1].Metadata["cli"])
			assert.Equal(t, []string{"x&y"}, back.Nodes[1].Tags)
			require.Len(t, back.Edges, 2)
			assert.Equal(t, want, back.Edges[1].Label)
			assert.Equal(t, "p<1>", back.Pages[0].ID)
			require.Len(t, back.Vars, 1)
		})
	}
}

// TestDrawioDrops says what draw.io cannot hold.
func TestDrawioDrops(t *testing.T) {
	t.Parallel()
	doc := &types.Document{Title: "T", Pages: []types.Page{{ID: "1", Root: "a"}}, Nodes: []types.Node{
		{ID: "a", Page: "1", Kind: types.KindProcess, Text: "A", Tags: []string{"two words"}, Metadata: types.Metadata{"a key": "v", "k%": "v", "label": "x"}}},
		Vars: []types.Var{{Name: "need"}}}
	var buf bytes.Buffer
	dropped, err := export.Drawio(&buf, doc)
	require.NoError(t, err)
	all := strings.Join(dropped, "\n")
	assert.Contains(t, all, "no chart title")
	assert.Contains(t, all, "tags with spaces")
	assert.Contains(t, all, "custom data keys that are not draw.io property names (letters, digits, _ . -) (2 items)")
	assert.Contains(t, all, "variable need, which has no default")

	// A draw.io chart's title is its file's name: nothing is lost.
	doc.Format = "drawio"
	dropped, err = export.Drawio(&buf, doc)
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(dropped, "\n"), "no chart title")

	// Nor when a page is named with it, as a Mermaid chart's front
	// matter names both: the page keeps it.
	doc.Format, doc.Pages[0].Title = "mermaid", "T"
	buf.Reset()
	dropped, err = export.Drawio(&buf, doc)
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(dropped, "\n"), "no chart title")
	assert.Contains(t, buf.String(), `<diagram name="T"`)
}

// TestDrawioLinear converts a chain of 100,000 nodes: the time grows
// linearly (a tenth of the chain takes about a tenth of the time).
func TestDrawioLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("a 100,000-node chart")
	}
	chain := func(n int) *types.Document {
		doc := &types.Document{Pages: []types.Page{{ID: "1", Root: "0"}}}
		for i := range n {
			doc.Nodes = append(doc.Nodes, types.Node{ID: strconv.Itoa(i), Page: "1", Kind: types.KindProcess, Text: fmt.Sprintf("step %d", i)})
			if i > 0 {
				doc.Edges = append(doc.Edges, types.Edge{ID: fmt.Sprintf("e%d", i), Page: "1", From: strconv.Itoa(i - 1), To: strconv.Itoa(i)})
			}
		}
		return doc
	}
	took := func(n int) time.Duration {
		doc := chain(n)
		start := time.Now()
		_, err := export.Drawio(io.Discard, doc)
		require.NoError(t, err)
		return time.Since(start)
	}
	// The best of two, each: one run under -race beside other packages'
	// tests took 55 times 10,000's (load 13 on 2 cores); quadratic is 100.
	small, big := min(took(10_000), took(10_000)), min(took(100_000), took(100_000))
	t.Logf("10,000 nodes: %v; 100,000 nodes: %v", small, big)
	assert.Less(t, big, 30*small+time.Second, "100,000 nodes take more than 30 times 10,000's")
	assert.Less(t, big, 20*time.Second)
}

// TestDrawioIDs: ids that draw.io's own cells (0, 1) or another cell
// already have are not written twice.
func TestDrawioIDs(t *testing.T) {
	t.Parallel()
	doc := &types.Document{Pages: []types.Page{{ID: "p", Root: "0"}}, Nodes: []types.Node{
		{ID: "0", Page: "p", Kind: types.KindTerminator, Text: "Start"},
		{ID: "1", Page: "p", Kind: types.KindProcess, Text: "Work"},
		{ID: "2", Page: "p", Kind: types.KindTerminator, Text: "End"}},
		Edges: []types.Edge{{ID: "1", Page: "p", From: "0", To: "1"}, {ID: "x", Page: "p", From: "1", To: "2"}, {ID: "x", Page: "p", From: "0", To: "2"}}}
	back, _, out := toDrawio(t, doc)
	assert.Equal(t, []string{"0", "1", "2"}, []string{back.Nodes[0].ID, back.Nodes[1].ID, back.Nodes[2].ID}, out)
	require.Len(t, back.Edges, 3)
	assert.Equal(t, "x", back.Edges[1].ID)
	assert.NotEqual(t, "x", back.Edges[2].ID)
	assert.NotEqual(t, "1", back.Edges[0].ID)
}

// TestPictureLosses: convert --to mermaid or dot says what the picture
// drops; a chart with nothing of the kind has nothing to say.
func TestPictureLosses(t *testing.T) {
	t.Parallel()
	plain := &types.Document{Nodes: []types.Node{{ID: "a", Text: "A"}}}
	assert.Empty(t, export.PictureLosses(plain, "mermaid"))
	gate := &types.Document{Nodes: []types.Node{{ID: "a", Text: "Ship?", Metadata: types.Metadata{"approval": "true"}}},
		Vars: []types.Var{{Name: "branch", Default: "main", HasDefault: true}}}
	all := strings.Join(export.PictureLosses(gate, "dot"), "\n")
	assert.Contains(t, all, "DOT as dtree draws it cannot hold custom data (command, approval, cli, retries, …) (1 item)")
	assert.Contains(t, all, "cannot hold variables (1 item)")
	assert.Contains(t, all, "convert to yaml, csv, json, drawio or mermaid")
}
