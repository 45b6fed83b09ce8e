package document_test

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

func readDrawio(t *testing.T, name string) *types.Document {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "charts", "drawio", name))
	require.NoError(t, err)
	defer f.Close()
	doc, err := document.FromDrawio(f)
	require.NoError(t, err)
	return doc
}

func nodeByText(doc *types.Document, text string) *types.Node {
	for i := range doc.Nodes {
		if doc.Nodes[i].Text == text {
			return &doc.Nodes[i]
		}
	}
	return nil
}

func edgeLabels(doc *types.Document) []string {
	var out []string
	for _, e := range doc.Edges {
		out = append(out, e.From+">"+e.To+":"+e.Label)
	}
	return out
}

// TestDrawioEditData reads a chart drawn in draw.io with Edit Data
// properties: shapes by style, HTML labels, edge labels on the edge and on a
// child label cell, the text note set aside, the custom data, and the
// document's properties as vars and context.
func TestDrawioEditData(t *testing.T) {
	t.Parallel()
	doc := readDrawio(t, "release.drawio")
	assert.Empty(t, doc.Errors)
	kinds := map[string]string{}
	for _, n := range doc.Nodes {
		kinds[n.Text] = n.Kind
	}
	assert.Equal(t, map[string]string{
		"Release":                types.KindTerminator,
		"Run the tests":          types.KindProcess,
		"Did the tests\npass?":   types.KindDecision,
		"Tag the release":        types.KindProcess,
		"Fix the failing\ntests": types.KindProcess,
		"Done":                   types.KindTerminator,
	}, kinds)
	run := nodeByText(doc, "Run the tests")
	require.NotNil(t, run)
	assert.Equal(t, "Ux6f1kq2bJ0sWxGmTR3n-2", run.ID)
	assert.Equal(t, types.Metadata{"cli": "claude", "retries": "1", "timeout": "15m"}, run.Metadata)
	assert.Equal(t, types.Metadata{"command": "git tag -a v1.2.0 -m release"}, nodeByText(doc, "Tag the release").Metadata)
	assert.Equal(t, "main", doc.Metadata["branch"])
	assert.Equal(t, "previous", doc.Metadata["context"])
	require.Len(t, doc.Vars, 1)
	assert.Equal(t, "branch", doc.Vars[0].Name)
	labels := map[string]string{}
	for _, e := range doc.Edges {
		if e.From == "Ux6f1kq2bJ0sWxGmTR3n-3" {
			labels[e.To] = e.Label
		}
	}
	assert.Equal(t, map[string]string{"Ux6f1kq2bJ0sWxGmTR3n-4": "Yes", "Ux6f1kq2bJ0sWxGmTR3n-5": "No"}, labels)
	var notes []string
	for _, w := range doc.Warnings {
		notes = append(notes, w.Class+" "+w.ID)
	}
	assert.Contains(t, notes, "ignored_annotation Ux6f1kq2bJ0sWxGmTR3n-7")
	require.Len(t, doc.Pages, 1)
	assert.Equal(t, "Page-1", doc.Pages[0].Title)
}

// TestDrawioCompressedAndPages reads a page saved compressed (older draw.io's
// default) and a file of two pages copied one from the other, whose cell ids
// repeat: the second page's are prefixed with its page id.
func TestDrawioCompressedAndPages(t *testing.T) {
	t.Parallel()
	c := readDrawio(t, "triage-compressed.drawio")
	assert.Empty(t, c.Errors)
	assert.Len(t, c.Nodes, 5)
	assert.Equal(t, types.KindTerminator, nodeByText(c, "Start").Kind)
	assert.Equal(t, types.KindTerminator, nodeByText(c, "End").Kind, "rounded=1;arcSize=50 is a stadium")
	assert.Equal(t, types.KindDecision, nodeByText(c, "Any bug?").Kind)
	assert.Contains(t, edgeLabels(c), "4>5:yes")

	p := readDrawio(t, "triage-pages.drawio")
	assert.Empty(t, p.Errors)
	require.Len(t, p.Pages, 2)
	assert.Equal(t, []string{"Issues", "Pull requests"}, []string{p.Pages[0].Title, p.Pages[1].Title})
	assert.Len(t, p.Nodes, 10)
	n := nodeByText(p, "Any failing check?")
	require.NotNil(t, n)
	assert.Equal(t, "r7Tt2LwQe9sUo1iPzXyC:4", n.ID)
	assert.Equal(t, "r7Tt2LwQe9sUo1iPzXyC", n.Page)
	assert.Contains(t, edgeLabels(p), "r7Tt2LwQe9sUo1iPzXyC:4>r7Tt2LwQe9sUo1iPzXyC:5:yes")
}

func model(cells string) string {
	return `<mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>` + cells + `</root></mxGraphModel>`
}

func classes(doc *types.Document) []string {
	var out []string
	for _, d := range doc.Errors {
		out = append(out, d.Class)
	}
	return out
}

// TestDrawioShapesAndEnds checks the styles the issue lists and that the
// line rules are Lucid's: a missing end is dangling_line, an end on a
// container line_to_container.
func TestDrawioShapesAndEnds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		style, kind string
		shape       string // the shape's name, when it matters: Manual operation is a gate
	}{
		// draw.io's Manual Operation: the Flowchart stencil (older
		// sidebars, and files written by tools), and the current
		// Flowchart sidebar's flipped trapezoid (Sidebar-Flowchart.js).
		{"strokeWidth=2;html=1;shape=mxgraph.flowchart.manual_operation;whiteSpace=wrap;", types.KindProcess, "Manual operation"},
		{"verticalLabelPosition=bottom;verticalAlign=top;html=1;strokeWidth=2;shape=trapezoid;perimeter=trapezoidPerimeter;whiteSpace=wrap;size=0.23;arcSize=10;flipV=1;", types.KindProcess, "Manual operation"},
		{"verticalLabelPosition=middle;verticalAlign=middle;html=1;shape=trapezoid;perimeter=trapezoidPerimeter;whiteSpace=wrap;size=0.23;arcSize=10;flipV=1;labelPosition=center;align=center;", types.KindProcess, "Manual operation"},
		// The General sidebar's trapezoid, not flipped: a plain step.
		{"shape=trapezoid;perimeter=trapezoidPerimeter;whiteSpace=wrap;html=1;fixedSize=1;", types.KindProcess, "Process"},
		{"ellipse;whiteSpace=wrap;html=1;", types.KindTerminator, ""},
		{"strokeWidth=2;html=1;shape=mxgraph.flowchart.start_1;whiteSpace=wrap;", types.KindTerminator, ""},
		{"strokeWidth=2;html=1;shape=mxgraph.flowchart.start_2;whiteSpace=wrap;", types.KindTerminator, ""},
		{"rounded=1;whiteSpace=wrap;html=1;arcSize=50;", types.KindTerminator, ""},
		{"rounded=1;whiteSpace=wrap;html=1;absoluteArcSize=1;arcSize=14;strokeWidth=2;", types.KindProcess, ""},
		{"rhombus;whiteSpace=wrap;html=1;", types.KindDecision, ""},
		{"strokeWidth=2;html=1;shape=mxgraph.flowchart.decision;whiteSpace=wrap;", types.KindDecision, ""},
		{"shape=parallelogram;html=1;strokeWidth=2;perimeter=parallelogramPerimeter;whiteSpace=wrap;rounded=1;arcSize=12;size=0.23;", types.KindProcess, ""},
	}
	for _, c := range cases {
		doc, err := document.FromDrawio(strings.NewReader(model(
			`<mxCell id="a" value="Step" style="` + c.style + `" vertex="1" parent="1"/>`)))
		require.NoError(t, err)
		require.Len(t, doc.Nodes, 1, c.style)
		assert.Equal(t, c.kind, doc.Nodes[0].Kind, c.style)
		if c.shape != "" {
			assert.Equal(t, c.shape, doc.Nodes[0].Shape, c.style)
		}
	}

	doc, err := document.FromDrawio(strings.NewReader(model(
		`<mxCell id="s" value="Start" style="ellipse;" vertex="1" parent="1"/>` +
			`<mxCell id="lane" value="Build" style="swimlane;startSize=20;" vertex="1" parent="1"/>` +
			`<mxCell id="box" value="" style="rounded=0;whiteSpace=wrap;html=1;container=1;" vertex="1" parent="1"/>` +
			`<mxCell id="g" value="" style="group" vertex="1" parent="1" connectable="0"/>` +
			`<mxCell id="p" value="Compile" style="rounded=0;html=1;" vertex="1" parent="lane"/>` +
			`<mxCell id="e1" style="edgeStyle=orthogonalEdgeStyle;" edge="1" parent="1" source="s" target="p"/>` +
			`<mxCell id="e2" style="edgeStyle=orthogonalEdgeStyle;" edge="1" parent="1" source="p"/>` +
			`<mxCell id="e3" style="edgeStyle=orthogonalEdgeStyle;" edge="1" parent="1" source="p" target="box"/>`)))
	require.NoError(t, err)
	assert.Contains(t, classes(doc), "dangling_line")
	assert.Contains(t, classes(doc), "line_to_container")
	for _, d := range doc.Errors {
		if d.Class == "dangling_line" {
			assert.Equal(t, "e2", d.ID, "the draw.io cell id")
			assert.Contains(t, d.Hint, "in draw.io", "what to do in draw.io, not in Lucid")
		}
	}
	p := nodeByText(doc, "Compile")
	require.NotNil(t, p)
	assert.Equal(t, "Build", p.Lane)
	assert.Nil(t, nodeByText(doc, "Build"), "a swimlane is not a step")
}

// TestDrawioHostile tries the Lucid importers' hostile inputs: none panics,
// each is a finding or a plain chart, and each is read in bounded time.
func TestDrawioHostile(t *testing.T) {
	t.Parallel()
	deflate := func(s string) string {
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, flate.BestCompression)
		_, _ = w.Write([]byte(s))
		_ = w.Close()
		return base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	bomb := func() string {
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, flate.BestCompression)
		zero := make([]byte, 1<<20)
		for range 100 { // 100 MiB of zeros, about 100 KiB compressed
			_, _ = w.Write(zero)
		}
		_ = w.Close()
		return base64.StdEncoding.EncodeToString(buf.Bytes())
	}()
	cases := []struct {
		name, in, class, msg string
	}{
		{"deflate bomb", `<mxfile><diagram name="P" id="p">` + bomb + `</diagram></mxfile>`, "malformed_drawio", "compression bomb"},
		{"DTD with entities", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><mxfile><diagram name="P">` + model(`<mxCell id="a" value="&lol2;" vertex="1" parent="1"/>`) + `</diagram></mxfile>`, "malformed_drawio", "DTD"},
		{"nesting", strings.Repeat("<mxfile>", 100000), "malformed_drawio", "nest"},
		{"not base64", `<mxfile><diagram name="P">%%%</diagram></mxfile>`, "malformed_drawio", "base64"},
		{"not xml", `{"pages": []}`, "malformed_drawio", "not a draw.io file"},
		{"other root", `<svg/>`, "malformed_drawio", "<svg>"},
		{"compressed mxfile inside", `<mxfile><diagram name="P">` + deflate(`<mxfile><diagram>x</diagram></mxfile>`) + `</diagram></mxfile>`, "malformed_drawio", "not <mxGraphModel>"},
		{"dangling edge", model(`<mxCell id="a" value="A" style="ellipse;" vertex="1" parent="1"/><mxCell id="e" edge="1" parent="1" source="a" target="nowhere"/>`), "dangling_line", ""},
		{"empty", ``, "malformed_drawio", ""},
		{"<?>", `<?><mxfile/>`, "malformed_drawio", "not closed"},
		{"declaration cut short", `<?xml encoding=?><mxfile/>`, "malformed_drawio", "encoding"},
		{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><mxfile/>`, "malformed_drawio", "UTF-8"},
		{"entity not XML's", model(`<mxCell id="a" value="&nbsp;" vertex="1" parent="1"/>`), "malformed_drawio", "&nbsp;"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			doc, err := document.FromDrawio(strings.NewReader(c.in))
			require.NoError(t, err)
			require.NotEmpty(t, doc.Errors)
			assert.Contains(t, classes(doc), c.class)
			if c.msg != "" {
				assert.Contains(t, doc.Errors[0].Message, c.msg)
			}
			assert.Less(t, time.Since(start), 30*time.Second) // under -race on a loaded machine: 11 s seen
		})
	}

	// A huge label with nested HTML and entities, and a cycle.
	huge := strings.Repeat("&lt;div&gt;&lt;b&gt;x &amp;amp; y&lt;/b&gt;&lt;/div&gt;", 200000)
	doc, err := document.FromDrawio(strings.NewReader(model(
		`<mxCell id="a" value="` + huge + `" style="rounded=0;html=1;" vertex="1" parent="1"/>` +
			`<mxCell id="b" value="B &amp;lt;tag&amp;gt;" style="rounded=0;html=1;" vertex="1" parent="1"/>` +
			`<mxCell id="e1" edge="1" parent="1" source="a" target="b"/><mxCell id="e2" edge="1" parent="1" source="b" target="a"/>`)))
	require.NoError(t, err)
	assert.Equal(t, "B <tag>", nodeByText(doc, "B <tag>").Text, "entities decoded once, no tag made of them")
	a := doc.Nodes[0]
	assert.Equal(t, 200000, strings.Count(a.Text, "x & y"))
	assert.NotContains(t, a.Text, "<")
	assert.Len(t, doc.Edges, 2)
}

func TestDrawioDetect(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ path, head, want string }{
		{"a.drawio", "", document.FormatDrawio},
		{"a.dio", "", document.FormatDrawio},
		{"a.drawio.xml", "", document.FormatDrawio},
		{"a.xml", `<?xml version="1.0" encoding="UTF-8"?>` + "\n<mxfile host=\"Electron\">", document.FormatDrawio},
		{"a.xml", "<mxGraphModel dx=\"1\">", document.FormatDrawio},
		{"-", "\ufeff  <mxfile>", document.FormatDrawio},
		{"a.xml", "<svg>", ""},
	} {
		assert.Equal(t, c.want, document.Detect(c.path, []byte(c.head)), fmt.Sprint(c))
	}
}

// TestDrawioHostileChart reads testdata's hostile chart: nested HTML and
// escaped entities come out as text, decoded once, and the loose edge is
// Lucid's dangling_line, named by its cell id.
func TestDrawioHostileChart(t *testing.T) {
	t.Parallel()
	doc := readDrawio(t, "hostile.drawio")
	assert.Equal(t, []string{"dangling_line"}, classes(doc))
	assert.Equal(t, "h0stile-9", doc.Errors[0].ID)
	assert.Equal(t, 31, doc.Errors[0].Line, "the line of the edge's <mxCell> in the file")
	q := nodeByText(doc, "Is it fixed &\n\"green\"?")
	require.NotNil(t, q, "nested <div>s are one line break each, &nbsp; a space")
	big := doc.Nodes[1]
	assert.Equal(t, 2000, strings.Count(big.Text, "line & <tag>"))
	assert.NotContains(t, big.Text, "<span")
}

// TestDrawioTags reads draw.io's tags (Edit > Edit Tags) as dtree's tags,
// and leaves its link and tooltip out of the custom data, and what a run
// drawn on the cell changed (dtree-drawn, readme/drawio.md).
func TestDrawioTags(t *testing.T) {
	t.Parallel()
	doc, err := document.FromDrawio(strings.NewReader(model(
		`<mxCell id="s" value="Start" style="ellipse;" vertex="1" parent="1"/>` +
			`<UserObject label="Do it" link="https://example.com" tooltip="hi" tags="NoValidation cli:codex" retries="2" id="a" dtree-drawn="strokeColor&gt;#2e7d32;">` +
			`<mxCell style="rounded=0;html=1;" vertex="1" parent="1"/></UserObject>` +
			`<mxCell id="e" edge="1" parent="1" source="s" target="a"/>`)))
	require.NoError(t, err)
	n := nodeByText(doc, "Do it")
	require.NotNil(t, n)
	assert.Equal(t, []string{"NoValidation", "cli:codex"}, n.Tags)
	assert.Equal(t, types.Metadata{"retries": "2"}, n.Metadata)
}

// TestDrawioTitle: a draw.io file has no title; dtree's is the file's name
// without the extension (what draw.io shows in its title bar), or, from
// stdin, the first page's name.
func TestDrawioTitle(t *testing.T) {
	t.Parallel()
	doc, err := document.Read(filepath.Join("..", "..", "testdata", "charts", "drawio", "release.drawio"), "", nil)
	require.NoError(t, err)
	assert.Equal(t, "release", doc.Title)
	f, err := os.Open(filepath.Join("..", "..", "testdata", "charts", "drawio", "triage-pages.drawio"))
	require.NoError(t, err)
	defer f.Close()
	doc, err = document.Read("-", document.FormatDrawio, f)
	require.NoError(t, err)
	assert.Equal(t, "Issues", doc.Title)
	for path, want := range map[string]string{
		"dir/Release flow.drawio.xml": "Release flow", "a.DIO": "a", "b.xml": "b", "c.drawio": "c", ".drawio": ".drawio",
	} {
		assert.Equal(t, want, document.DrawioTitle(path), path)
	}
}

// TestDrawioCompressedFindings: a finding in a plain page names the line of
// the cell; one in a compressed page, which has no lines, names its page.
func TestDrawioCompressedFindings(t *testing.T) {
	t.Parallel()
	cells := `<mxCell id="a" value="A" style="rounded=0;" vertex="1" parent="1"/><mxCell id="e" edge="1" parent="1" source="a"/>`
	plain := `<mxfile><diagram name="Checks" id="p">` + "\n" + model(cells) + `</diagram></mxfile>`
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	_, _ = w.Write([]byte(strings.ReplaceAll(model(cells), " ", "%20")))
	_ = w.Close()
	packed := `<mxfile><diagram name="Checks" id="p">` + base64.StdEncoding.EncodeToString(z.Bytes()) + `</diagram></mxfile>`

	doc, err := document.FromDrawio(strings.NewReader(plain))
	require.NoError(t, err)
	require.Equal(t, []string{"dangling_line"}, classes(doc))
	assert.Equal(t, 2, doc.Errors[0].Line)
	assert.NotContains(t, doc.Errors[0].Message, "compressed")

	doc, err = document.FromDrawio(strings.NewReader(packed))
	require.NoError(t, err)
	require.Equal(t, []string{"dangling_line"}, classes(doc))
	assert.Equal(t, 0, doc.Errors[0].Line)
	assert.Equal(t, "e", doc.Errors[0].ID)
	assert.Contains(t, doc.Errors[0].Message, `line e `)
	assert.True(t, strings.HasSuffix(doc.Errors[0].Message, ` (on page "Checks", saved compressed: no line to name)`), doc.Errors[0].Message)
}

// TestDrawioWrappedEdge: an edge with Edit Data is wrapped in an <object>
// as a shape is; its id and label are the wrapper's, its ends the cell's.
// Its properties are not read: a line has no custom data in dtree's model
// (types.Edge), as a Lucid line's custom data is not read either.
func TestDrawioWrappedEdge(t *testing.T) {
	t.Parallel()
	doc, err := document.FromDrawio(strings.NewReader(model(
		`<mxCell id="a" value="Start" style="ellipse;" vertex="1" parent="1"/>` +
			`<mxCell id="b" value="Do it" style="rounded=0;" vertex="1" parent="1"/>` +
			`<object label="%answer%" placeholders="1" answer="Yes" note="why" id="w"><mxCell style="edgeStyle=orthogonalEdgeStyle;html=1;" edge="1" parent="1" source="a" target="b"><mxGeometry relative="1" as="geometry"/></mxCell></object>`)))
	require.NoError(t, err)
	assert.Empty(t, doc.Errors)
	require.Len(t, doc.Edges, 1)
	e := doc.Edges[0]
	assert.Equal(t, []string{"w", "a", "b", "Yes"}, []string{e.ID, e.From, e.To, e.Label})
}

// TestDrawioDuplicateIDs: a cell id used twice on a page is a finding that
// names it and the line of the second; the first cell is read.
func TestDrawioDuplicateIDs(t *testing.T) {
	t.Parallel()
	for name, cells := range map[string]string{
		"shapes": `<mxCell id="a" value="A" style="ellipse;" vertex="1" parent="1"/>` + "\n" + `<mxCell id="a" value="B" style="ellipse;" vertex="1" parent="1"/>`,
		"layers": `<mxCell id="a" value="A" style="ellipse;" vertex="1" parent="1"/>` + "\n" + `<mxCell id="1" value="B" style="ellipse;" vertex="1" parent="1"/>`,
	} {
		doc, err := document.FromDrawio(strings.NewReader(model(cells)))
		require.NoError(t, err, name)
		require.Equal(t, []string{"malformed_drawio"}, classes(doc), name)
		assert.Contains(t, doc.Errors[0].Message, "is used twice on page", name)
		assert.Equal(t, 2, doc.Errors[0].Line, name)
		assert.Equal(t, "A", doc.Nodes[0].Text, name)
	}
}
