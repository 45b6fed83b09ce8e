package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// hostile is text that breaks a picture format that does not escape it.
const hostile = "\"]) --> x{\"y\"} ; %%{init: {'securityLevel':'loose'}}%% <script>alert(1)</script> & #quot; \\\" \\n \\\\\n" +
	"second line\x01 |pipe| `tick` ünï 🚀 ]]> <!-- -- \t end\\"

// hostileDoc is a chart whose title, ids, texts and labels are hostile.
func hostileDoc() *types.Document {
	doc := &types.Document{Title: hostile, Format: "yaml", Pages: []types.Page{{ID: "p\"1", Title: hostile, Root: "a\"b"}}}
	for _, n := range []types.Node{
		{ID: "a\"b", Kind: types.KindTerminator, Text: "Start " + hostile},
		{ID: "c]d", Kind: types.KindDecision, Text: hostile},
		{ID: "e\\f", Kind: types.KindProcess, Text: hostile, Tags: []string{"x\"y"}, Metadata: types.Metadata{"k\"ey": hostile}},
		{ID: "<g>", Kind: types.KindSubprocess, Text: hostile},
		{ID: "-->", Kind: types.KindOther, Shape: "Data", Text: hostile},
	} {
		n.Page, n.TextAreas, n.Comments = "p\"1", []string{n.Text}, []string{}
		if n.Tags == nil {
			n.Tags = []string{}
		}
		doc.Nodes = append(doc.Nodes, n)
	}
	for i, e := range []types.Edge{
		{From: "a\"b", To: "c]d"},
		{From: "c]d", To: "e\\f", Label: "Yes\"|--> n9"},
		{From: "c]d", To: "<g>", Label: hostile},
		{From: "e\\f", To: "-->"},
		{From: "<g>", To: "-->"},
		{From: "-->", To: "c]d", Label: "again"},
	} {
		e.ID, e.Page, e.ExtraLabels = "e"+string(rune('0'+i)), "p\"1", []string{}
		doc.Edges = append(doc.Edges, e)
	}
	return doc
}

var (
	entity      = regexp.MustCompile(`#[0-9]+;`)
	quoted      = regexp.MustCompile(`"(\\.|[^"\\])*"`)
	mermaidNode = regexp.MustCompile(`^ {2,4}n\d+(\(\[|\{|\[\[|\[)Q(\]\)|\}|\]\]|\])$`)
	mermaidEdge = regexp.MustCompile(`^ {2}n\d+ -->(\|Q\|)? n\d+$`)
)

// TestMermaidEscapesHostileText checks that each label stays one quoted
// string with no character Mermaid reads as syntax inside it.
func TestMermaidEscapesHostileText(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	require.NoError(t, export.Mermaid(t.Context(), &buf, hostileDoc(), export.PictureOptions{}))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Equal(t, "---", lines[0])
	var title string
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "title: ")), &title), lines[1])
	assert.Equal(t, "---", lines[2])
	assert.Equal(t, "flowchart TD", lines[3])
	nodes, edges := 0, 0
	for _, l := range lines[4:] {
		for _, q := range quoted.FindAllString(l, -1) {
			inner := entity.ReplaceAllString(strings.ReplaceAll(q[1:len(q)-1], "<br/>", ""), "")
			assert.NotRegexp(t, `["<>&%{}|;#\\`+"`"+`\n]`, inner, "label %s", q)
		}
		skeleton := quoted.ReplaceAllString(l, "Q")
		switch {
		case mermaidNode.MatchString(skeleton):
			nodes++
		case mermaidEdge.MatchString(skeleton):
			edges++
		default:
			t.Errorf("line is neither a node nor an edge: %q", l)
		}
	}
	assert.Equal(t, 5, nodes)
	assert.Equal(t, 6, edges)
}

// TestDOTEscapesHostileText checks that with every quoted string taken
// out, only the statements dtree writes remain, and that each label reads
// back as the text.
func TestDOTEscapesHostileText(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	doc := hostileDoc()
	require.NoError(t, export.DOT(t.Context(), &buf, doc, export.PictureOptions{}))
	skeleton := quoted.ReplaceAllString(buf.String(), "Q")
	assert.NotContains(t, skeleton, `"`, "an unbalanced quote")
	statement := regexp.MustCompile(`^(digraph chart \{|\}|  graph \[.*\];|  node \[.*\];|  edge \[.*\];|  n\d+ \[label=Q, tooltip=Q, [a-z=, Q0-9]*\];|  n\d+ -> n\d+( \[label=Q\])?;)$`)
	nodes := 0
	for _, l := range strings.Split(strings.TrimSuffix(skeleton, "\n"), "\n") {
		assert.Regexp(t, statement, l)
		if strings.Contains(l, "tooltip=") {
			nodes++
		}
	}
	assert.Equal(t, len(doc.Nodes), nodes)
	unquote := strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n")
	tooltip := regexp.MustCompile(`tooltip=("(\\.|[^"\\])*")`)
	for i, m := range tooltip.FindAllStringSubmatch(buf.String(), -1) {
		n := doc.Nodes[i]
		want := strings.Map(func(r rune) rune {
			if r < 0x20 && r != '\n' {
				return ' '
			}
			return r
		}, n.ID+": "+n.Text)
		assert.Equal(t, want, unquote.Replace(m[1][1:len(m[1])-1]))
	}
}

// svgNodes parses an SVG strictly and returns, per node group, its
// data-id and tooltip.
func svgNodes(t *testing.T, data []byte) map[string]string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	nodes := map[string]string{}
	var inNode string
	inTitle := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch tk := tok.(type) {
		case xml.StartElement:
			if tk.Name.Local == "g" {
				for _, a := range tk.Attr {
					if a.Name.Local == "data-id" {
						inNode = a.Value
						nodes[inNode] = ""
					}
				}
			}
			inTitle = tk.Name.Local == "title" && inNode != ""
		case xml.CharData:
			if inTitle {
				nodes[inNode] += string(tk)
			}
		case xml.EndElement:
			if tk.Name.Local == "title" {
				inTitle, inNode = false, ""
			}
		}
	}
	return nodes
}

func TestSVGEscapesHostileText(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	doc := hostileDoc()
	require.NoError(t, export.SVG(t.Context(), &buf, doc, export.PictureOptions{}))
	nodes := svgNodes(t, buf.Bytes())
	require.Len(t, nodes, len(doc.Nodes))
	for _, n := range doc.Nodes {
		require.Contains(t, nodes, n.ID)
		assert.Equal(t, strings.ReplaceAll(n.ID+": "+n.Text, "\x01", "\uFFFD"), nodes[n.ID])
	}
}

// TestSVGHoldsEveryNode draws every clean chart: the SVG parses as XML and
// has a node group, with its whole text as tooltip, for every node; a
// command step's tooltip starts with its command.
func TestSVGHoldsEveryNode(t *testing.T) {
	t.Parallel()
	for name, doc := range cleanCharts(t) {
		var buf bytes.Buffer
		require.NoError(t, export.SVG(t.Context(), &buf, doc, export.PictureOptions{}), name)
		nodes := svgNodes(t, buf.Bytes())
		assert.Len(t, nodes, len(doc.Nodes), name)
		for _, n := range doc.Nodes {
			want := n.ID + ": " + n.Text
			if c := types.NodeCommand(&n); c != "" {
				want = n.ID + ": $ " + c + "\n" + n.Text
			}
			assert.Equal(t, want, nodes[n.ID], "%s node %s", name, n.ID)
		}
	}
}

func TestChartFormatsKeepHostileText(t *testing.T) {
	t.Parallel()
	doc := hostileDoc()
	for _, to := range []string{"yaml", "json", "csv"} {
		back, _ := convert(t, doc, to)
		require.Len(t, back.Nodes, len(doc.Nodes), to)
		for i, n := range doc.Nodes {
			want := strings.TrimSpace(n.Text)
			assert.Equal(t, want, back.Nodes[i].Text, "%s node %d", to, i)
			if to != "csv" {
				assert.Equal(t, n.ID, back.Nodes[i].ID, to)
			}
		}
		for i, e := range doc.Edges {
			assert.Equal(t, strings.TrimSpace(e.Label), back.Edges[i].Label, "%s edge %d", to, i)
		}
		assert.Equal(t, strings.TrimSpace(hostile), back.Title, to)
	}
}

func TestSVGRefusesHugeCharts(t *testing.T) {
	t.Parallel()
	doc := &types.Document{Pages: []types.Page{{ID: "1"}}}
	for i := range export.MaxSVGNodes + 1 {
		doc.Nodes = append(doc.Nodes, types.Node{ID: string(rune(0x4e00 + i)), Page: "1", Kind: types.KindProcess})
	}
	err := export.SVG(t.Context(), io.Discard, doc, export.PictureOptions{})
	var big *export.TooLargeError
	require.ErrorAs(t, err, &big)
	assert.Equal(t, export.MaxSVGNodes+1, big.Nodes)
	// one page of it is drawn
	require.NoError(t, export.Mermaid(t.Context(), io.Discard, doc, export.PictureOptions{}))
}

func TestWriteRunPicture(t *testing.T) {
	t.Parallel()
	doc, err := document.Read(filepath.Join("..", "..", "testdata", "charts", "examples", "build-green.csv"), "", nil)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(failedRun), 0o644))
	for format, name := range map[string]string{"svg": "graph.svg", "mermaid": "graph.mmd", "dot": "graph.dot"} {
		path, err := export.WriteRunPicture(t.Context(), dir, doc, format, nil)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, name), path)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Contains(t, string(data), "failed at 8")
	}
	_, err = export.WriteRunPicture(t.Context(), t.TempDir(), doc, "svg", nil)
	assert.Error(t, err, "no events.jsonl")
	_, err = export.WriteRunPicture(t.Context(), dir, doc, "png", nil)
	assert.Error(t, err)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		assert.False(t, strings.HasSuffix(e.Name(), ".tmp"), "temporary file left: %s", e.Name())
	}
}

// The note under a node says what the run did there, and the node it
// stopped at gets no ✓: an interrupted first visit is not "✓ 1 visit".
func TestRunNotes(t *testing.T) {
	t.Parallel()
	doc, err := document.Read(filepath.Join("..", "..", "testdata", "charts", "examples", "build-green.csv"), "", nil)
	require.NoError(t, err)
	chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: anyCLI{}}) // its command step is drawn as one
	const start = `{"event":"run_start","run_id":"r","page":"2","start":"3"}
{"event":"node_start","node":"4","visit":1}
`
	const loop = start + `{"event":"node_end","node":"4","status":"succeeded","next":"5"}
{"event":"node_start","node":"5","visit":1}
{"event":"node_end","node":"5","status":"succeeded","next":"6","label":"No"}
{"event":"node_start","node":"6","visit":1}
{"event":"node_end","node":"6","status":"succeeded","next":"4"}
{"event":"node_start","node":"4","visit":2}
`
	tests := []struct {
		name, events string
		want         []string // node lines of the Mermaid picture
	}{
		{name: "interrupted on its first visit", events: start + `{"event":"node_end","node":"4","status":"interrupted"}
{"event":"run_end","status":"interrupted","path":["3","4"]}`,
			want: []string{`<br/>Run the test suite.<br/>✗ interrupted"}}`}},
		{name: "interrupted on its second visit", events: loop + `{"event":"node_end","node":"4","status":"interrupted"}
{"event":"run_end","status":"interrupted","path":["3","4","5","6","4"]}`,
			want: []string{`<br/>Run the test suite.<br/>2 visits · ✗ interrupted"}}`, `<br/>wrong.<br/>✓ 1 visit"]`}},
		{name: "the budget held back its second visit", events: loop + `{"event":"node_end","node":"4","status":"budget_reached"}
{"event":"run_end","status":"budget_reached","path":["3","4","5","6","4"]}`,
			want: []string{`<br/>Run the test suite.<br/>2 visits · ✗ budget reached"}}`, `title: "Keep the build green — run r: budget reached at 4"`}},
		{name: "failed after a retry", events: failedRun,
			want: []string{`<br/>CHANGELOG.md.<br/>1 retry · ✗ failed"]`, `<br/>Run the test suite.<br/>✓ 2 visits"}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr, err := export.TraceFrom(strings.NewReader(tt.events))
			require.NoError(t, err)
			var b bytes.Buffer
			require.NoError(t, export.Mermaid(t.Context(), &b, doc, export.PictureOptions{Trace: tr}))
			for _, w := range tt.want {
				assert.Contains(t, b.String(), w)
			}
			assert.NotContains(t, b.String(), "✓ 1 visit · ✗")
		})
	}
}

// TestStepShapes: a node is drawn as the step kind its load resolved: a
// command step as a hexagon in every format, unless the chart draws it as
// a diamond, whose branches route; an agent's step in its chart's shape.
func TestStepShapes(t *testing.T) {
	t.Parallel()
	doc, err := document.FromYAML(strings.NewReader(`title: Shapes
nodes:
  - id: build
    text: Build
    command: make
    next: test
  - id: test
    kind: decision
    text: Tests pass?
    command: make test
    branches:
      "yes": write
      "no": build
  - id: write
    text: Write the notes
    next: done
  - id: done
    kind: end
    text: Done
`))
	require.NoError(t, err)
	chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: anyCLI{}})
	tests := []struct {
		format string
		want   []string
	}{
		{"mermaid", []string{`n0{{"$ make<br/>Build"}}`, `n1{"$ make test<br/>Tests pass?"}`, `n2["Write the notes"]`}},
		{"dot", []string{`Build", shape=hexagon,`, `Tests pass?", shape=diamond,`, `Write the notes", shape=box, style=filled]`}},
		{"svg", []string{`<g class="node process command" id="n0"`, `<g class="node decision command" id="n1"`}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		require.NoError(t, export.Picture(t.Context(), &b, doc, tt.format, export.PictureOptions{}), tt.format)
		for _, w := range tt.want {
			assert.Contains(t, b.String(), w, tt.format)
		}
	}
	var b bytes.Buffer
	require.NoError(t, export.SVG(t.Context(), &b, doc, export.PictureOptions{}))
	svg := b.String()
	n0 := svg[strings.Index(svg, `id="n0"`):]
	n0 = n0[:strings.Index(n0, "</g>")]
	points := strings.SplitN(strings.SplitN(n0, `<polygon points="`, 2)[1], `"`, 2)[0]
	assert.Len(t, strings.Fields(points), 6, "a hexagon's six corners: %s", n0)
}

// TestPicturesDrawForks: a fork's lines are drawn bold in every picture
// format and the fork and its join say so under their text
// (readme/parallel.md#pictures); the plain lines stay plain.
func TestPicturesDrawForks(t *testing.T) {
	t.Parallel()
	c, err := chart.Load(filepath.Join("..", "..", "testdata", "charts", "fork", "fork.yaml"), nil,
		chart.Options{Defaults: types.BuiltinDefaults(), Names: anyCLI{}})
	require.NoError(t, err)
	require.Empty(t, c.Errors)
	for _, f := range []struct {
		format, bold string
		plain        string
	}{
		{"mermaid", "  n1 ==> n2\n", "  n0 --> n1\n"},
		{"dot", "  n1 -> n2 [style=bold];\n", "  n0 -> n1;\n"},
		{"svg", `stroke-width="2.5"`, `stroke-width="1.2"`},
	} {
		var out strings.Builder
		require.NoError(t, export.Picture(context.Background(), &out, c.Doc, f.format, export.PictureOptions{}))
		pic := out.String()
		assert.Contains(t, pic, f.bold, f.format)
		assert.Contains(t, pic, f.plain, f.format)
		if f.format == "svg" {
			assert.Equal(t, 3, strings.Count(pic, f.bold), "the fork's three lines, and no other")
		}
		assert.Contains(t, pic, "parallel", f.format)
		assert.Contains(t, pic, "join: all", f.format)
	}
}
