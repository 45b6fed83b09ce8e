package export_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// graphOf is what a reader makes of a chart, its texts included: nodes
// with their ids, kinds and texts, and edges with their ends and labels.
func graphOf(doc *types.Document) []string {
	var out []string
	for _, p := range doc.Pages {
		out = append(out, "page "+p.ID+" "+p.Title+" root "+p.Root)
	}
	for _, n := range doc.Nodes {
		out = append(out, n.Page+" "+n.ID+" "+n.Kind+" "+n.Text)
	}
	for _, e := range doc.Edges {
		out = append(out, e.Page+" "+e.ID+" "+e.From+" -> "+e.To+" "+e.Label)
	}
	return out
}

// cellStyle is the style of the cell (or wrapped cell) with this id.
func cellStyle(t *testing.T, s, id string) string {
	t.Helper()
	re := regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `"[^>]*>\s*<mxCell style="([^"]*)"|<mxCell id="` + regexp.QuoteMeta(id) + `"[^>]*style="([^"]*)"`)
	m := re.FindStringSubmatch(s)
	require.NotNil(t, m, "no cell %s in\n%s", id, s)
	return m[1] + m[2]
}

func TestDrawioRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testdata, "charts", "drawio")
	for _, tc := range []struct {
		file       string
		visit      []string // nodes entered, in order: the steps go between them
		stopped    string   // the node that failed
		compressed bool
		after      string // the cells are after this text (their page)
	}{
		{file: "release.drawio", visit: []string{"Ux6f1kq2bJ0sWxGmTR3n-1", "Ux6f1kq2bJ0sWxGmTR3n-2", "Ux6f1kq2bJ0sWxGmTR3n-3", "Ux6f1kq2bJ0sWxGmTR3n-5"},
			stopped: "Ux6f1kq2bJ0sWxGmTR3n-5"},
		{file: "triage-compressed.drawio", visit: []string{"2", "3", "4"}, stopped: "4", compressed: true},
		// the second page's ids repeat the first's: only page 2's are marked
		{file: "triage-pages.drawio", visit: []string{"r7Tt2LwQe9sUo1iPzXyC:2", "r7Tt2LwQe9sUo1iPzXyC:3", "r7Tt2LwQe9sUo1iPzXyC:4"},
			stopped: "r7Tt2LwQe9sUo1iPzXyC:4", after: `<diagram name="Pull requests"`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			require.NoError(t, err)
			src := string(data)
			doc, err := document.Read("-", "drawio", bytes.NewReader(data))
			require.NoError(t, err)

			// Without a run the file is written back byte for byte.
			var same bytes.Buffer
			_, err = export.DrawioRun(context.Background(), &same, src, doc, export.PictureOptions{})
			require.NoError(t, err)
			assert.Equal(t, src, same.String())

			tr := &export.Trace{RunID: "r1", Status: "failed", Visits: map[string]int{}, Retries: map[string]int{},
				Stopped: tc.stopped, StoppedHow: "failed"}
			for i, id := range tc.visit {
				tr.Visits[id]++
				if i > 0 {
					tr.Steps = append(tr.Steps, export.Step{From: tc.visit[i-1], To: id})
				}
			}
			var out bytes.Buffer
			_, err = export.DrawioRun(context.Background(), &out, src, doc, export.PictureOptions{Trace: tr})
			require.NoError(t, err)
			got := out.String()
			wellFormed(t, got)
			back, err := document.Read("-", "drawio", bytes.NewReader(out.Bytes()))
			require.NoError(t, err)
			assert.Equal(t, graphOf(doc), graphOf(back), "the same graph read back")
			assert.Equal(t, len(doc.Errors), len(back.Errors))
			assert.Equal(t, len(doc.Warnings), len(back.Warnings))
			if tc.compressed {
				assert.Contains(t, got, "<mxGraphModel", "the compressed page is written plain")
			}

			cellID := func(id string) string {
				_, c, ok := strings.Cut(id, ":")
				if ok {
					return c
				}
				return id
			}
			_, page, _ := strings.Cut(got, tc.after)
			for _, id := range tc.visit[:len(tc.visit)-1] {
				assert.Contains(t, cellStyle(t, page, cellID(id)), "strokeColor=#2e7d32;", id)
			}
			failed := cellStyle(t, page, cellID(tc.stopped))
			assert.Contains(t, failed, "strokeColor=#c62828;fillColor=#fde7e9;")
			assert.Equal(t, 1, strings.Count(failed, "strokeWidth="), "strokeWidth replaced, not added twice")
			assert.Contains(t, got, `tooltip="dtree run r1: ✗ failed"`)
			assert.Contains(t, got, `tooltip="dtree run r1: ✓ 1 visit"`)
			// Drawing the run again on what was drawn changes nothing.
			var again bytes.Buffer
			_, err = export.DrawioRun(context.Background(), &again, got, back, export.PictureOptions{Trace: tr})
			require.NoError(t, err)
			assert.Equal(t, got, again.String())
		})
	}
}

func TestDrawioRunPages(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testdata, "charts", "drawio", "triage-pages.drawio"))
	require.NoError(t, err)
	doc, err := document.Read("-", "drawio", bytes.NewReader(data))
	require.NoError(t, err)
	tr := &export.Trace{RunID: "r1", Status: "succeeded", Visits: map[string]int{"r7Tt2LwQe9sUo1iPzXyC:2": 1}, Retries: map[string]int{}}
	var out bytes.Buffer
	_, err = export.DrawioRun(context.Background(), &out, string(data), doc, export.PictureOptions{Trace: tr})
	require.NoError(t, err)
	got := out.String()
	first, second, ok := strings.Cut(got, `<diagram name="Pull requests"`)
	require.True(t, ok)
	assert.NotContains(t, first, "tooltip=", "page 1's cell 2 is another node")
	assert.Contains(t, second, `tooltip="dtree run r1: ✓ reached" id="2"`)
}

func TestSetStyleKeepsOtherKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "strokeColor=#1;strokeWidth=3;"},
		{"ellipse;whiteSpace=wrap;html=1;", "ellipse;whiteSpace=wrap;html=1;strokeColor=#1;strokeWidth=3;"},
		{"strokeWidth=2;html=1;shape=x", "strokeWidth=3;html=1;shape=x;strokeColor=#1;"},
		{"rounded=1;strokeColor=#000000;fillColor=none;", "rounded=1;strokeColor=#1;fillColor=none;strokeWidth=3;"},
	} {
		assert.Equal(t, tc.want, export.SetStyleForTest(tc.in, [][2]string{{"strokeColor", "#1"}, {"strokeWidth", "3"}}), tc.in)
	}
}

func TestDrawioRunRefusesBrokenXML(t *testing.T) {
	t.Parallel()
	doc := &types.Document{Pages: []types.Page{{ID: "0"}}}
	tr := &export.Trace{RunID: "r", Visits: map[string]int{}, Retries: map[string]int{}}
	for _, src := range []string{
		`<mxGraphModel><root><mxCell id="2" style="a`,
		`<mxfile><diagram id="x">!!!not base64</diagram></mxfile>`,
		`<mxfile><diagram id="x"><mxGraphModel><root><mxCell id="2"></root>`,
		`<mxGraphModel><root><mxCell id=2/></root></mxGraphModel>`,
	} {
		_, err := export.DrawioRun(context.Background(), &bytes.Buffer{}, src, doc, export.PictureOptions{Trace: tr})
		assert.Error(t, err, src)
	}
}

// FuzzDrawioRun draws a run on any file that dtree reads as draw.io: it
// must not panic, and what it writes must read back as the same graph.
func FuzzDrawioRun(f *testing.F) {
	for _, name := range []string{"release.drawio", "triage-compressed.drawio", "triage-pages.drawio"} {
		data, err := os.ReadFile(filepath.Join(testdata, "charts", "drawio", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`<mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/><mxCell id="2" value="a" vertex="1" parent="1"/></root></mxGraphModel>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := document.Read("-", "drawio", bytes.NewReader(data))
		if err != nil || len(doc.Errors) > 0 {
			return
		}
		tr := &export.Trace{RunID: "r", Status: "failed", Visits: map[string]int{}, Retries: map[string]int{}}
		for i, n := range doc.Nodes {
			tr.Visits[n.ID] = 1
			tr.Stopped, tr.StoppedHow = n.ID, "failed"
			if i > 0 {
				tr.Steps = append(tr.Steps, export.Step{From: doc.Nodes[i-1].ID, To: n.ID})
			}
		}
		var out bytes.Buffer
		if _, err := export.DrawioRun(context.Background(), &out, string(data), doc, export.PictureOptions{Trace: tr}); err != nil {
			return // markup the editor does not take: refused, not drawn
		}
		back, err := document.Read("-", "drawio", bytes.NewReader(out.Bytes()))
		require.NoError(t, err)
		require.Equal(t, graphOf(doc), graphOf(back), "drawn:\n%s", out.String())
	})
}

// TestDrawioRunLinear draws a run through every node of a 100,000-node
// chain written by convert: the time grows linearly.
func TestDrawioRunLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("a 100,000-node chart")
	}
	took := func(n int) time.Duration {
		doc, tr := chainRun(n)
		var src strings.Builder
		_, err := export.Drawio(&src, doc)
		require.NoError(t, err)
		start := time.Now()
		var out bytes.Buffer
		_, err = export.DrawioRun(context.Background(), &out, src.String(), doc, export.PictureOptions{Trace: tr})
		require.NoError(t, err)
		d := time.Since(start)
		require.Equal(t, 2*n-1, strings.Count(out.String(), `tooltip="dtree run r: `))
		return d
	}
	half, big := took(50_000), took(100_000)
	t.Logf("50,000 nodes: %v; 100,000 nodes: %v", half, big)
	assert.Less(t, big, 3*half+time.Second, "100,000 nodes take more than 3 times 50,000's")
}

// TestDrawioRunMarkup draws on markup draw.io does not write but XML
// allows: single quotes, > in a value, a comment and CDATA holding a cell,
// a bare <mxGraphModel>. Only the real cells are marked, and the file
// reads back alike.
func TestDrawioRunMarkup(t *testing.T) {
	t.Parallel()
	src := `<?xml version="1.0"?>
<!-- <mxCell id="2" value="not a cell" vertex="1" parent="1"/> -->
<mxGraphModel><root><mxCell id="0"/><mxCell id='1' parent='0'/>
<mxCell id='2' value='a > b &amp; "c"' style='ellipse;html=1' vertex='1' parent='1'><mxGeometry as='geometry'/></mxCell>
<![CDATA[ <mxCell id="3"/> ]]>
<mxCell id="3" value="do it" vertex="1" parent="1"/>
<mxCell id="4" edge="1" parent="1" source="2" target="3"><mxGeometry relative="1" as="geometry"/></mxCell>
</root></mxGraphModel>
`
	doc, err := document.Read("-", "drawio", strings.NewReader(src))
	require.NoError(t, err)
	require.Len(t, doc.Nodes, 2)
	tr := &export.Trace{RunID: "r", Status: "succeeded", Visits: map[string]int{"2": 1, "3": 1}, Retries: map[string]int{},
		Steps: []export.Step{{From: "2", To: "3"}}}
	var out bytes.Buffer
	_, err = export.DrawioRun(context.Background(), &out, src, doc, export.PictureOptions{Trace: tr})
	require.NoError(t, err)
	got := out.String()
	wellFormed(t, got)
	assert.Contains(t, got, `<!-- <mxCell id="2" value="not a cell" vertex="1" parent="1"/> -->`)
	assert.Contains(t, got, `<![CDATA[ <mxCell id="3"/> ]]>`)
	assert.Contains(t, got, `<object label='a > b &amp; "c"' tooltip="dtree run r: ✓ reached" id='2' dtree-drawn="strokeColor&gt;#2e7d32;fillColor&gt;#e6f4ea;strokeWidth&gt;3;+wrapped;+bare;"><mxCell style='ellipse;html=1;strokeColor=#2e7d32;fillColor=#e6f4ea;strokeWidth=3;' vertex='1' parent='1'>`)
	assert.Contains(t, got, `<object label="do it" tooltip="dtree run r: ✓ 1 visit" id="3" dtree-drawn="strokeColor&gt;#2e7d32;fillColor&gt;#e6f4ea;strokeWidth&gt;3;+wrapped;+nostyle;"><mxCell style="strokeColor=#2e7d32;fillColor=#e6f4ea;strokeWidth=3;" vertex="1" parent="1"/></object>`)
	assert.Contains(t, got, `<object label="" tooltip="dtree run r: taken" id="4" dtree-drawn="strokeColor&gt;#2e7d32;strokeWidth&gt;3;+wrapped;+novalue;+nostyle;"><mxCell style="strokeColor=#2e7d32;strokeWidth=3;" edge="1"`)
	back, err := document.Read("-", "drawio", strings.NewReader(got))
	require.NoError(t, err)
	assert.Equal(t, graphOf(doc), graphOf(back))
	// Drawn again without a run, it is the author's file byte for byte.
	out.Reset()
	_, err = export.DrawioRun(context.Background(), &out, got, back, export.PictureOptions{})
	require.NoError(t, err)
	assert.Equal(t, src, out.String())
}

// runOf is a trace through nodes, each step from the one before; stopped,
// when not "", is where it failed.
func runOf(id, stopped string, nodes ...string) *export.Trace {
	tr := &export.Trace{RunID: id, Status: "succeeded", Visits: map[string]int{}, Retries: map[string]int{}}
	if stopped != "" {
		tr.Status, tr.Stopped, tr.StoppedHow = "failed", stopped, "failed"
	}
	for i, n := range nodes {
		tr.Visits[n]++
		if i > 0 {
			tr.Steps = append(tr.Steps, export.Step{From: nodes[i-1], To: n})
		}
	}
	return tr
}

func drawRun(t *testing.T, src string, tr *export.Trace) (string, []string) {
	t.Helper()
	doc, err := document.Read("-", "drawio", strings.NewReader(src))
	require.NoError(t, err)
	var out bytes.Buffer
	o := export.PictureOptions{}
	if tr != nil {
		o.Trace = tr
	}
	notes, err := export.DrawioRun(context.Background(), &out, src, doc, o)
	require.NoError(t, err)
	return out.String(), notes
}

// TestDrawioRedraw draws run A, then run B on the result: that is B drawn
// on the author's own file, A's colours gone from the cells B did not
// reach (the author's own colours back), its wrappers gone where dtree
// made them; and no run on a drawn file gives the author's file back.
func TestDrawioRedraw(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(testdata, "charts", "drawio")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return string(data)
	}
	// An author's file as draw.io writes it, with an author's colours,
	// an author's tooltip, Edit Data, a style with no final ";".
	own := `<mxfile host="app.diagrams.net"><diagram id="p1" name="Page-1"><mxGraphModel dx="1000" dy="600" grid="1"><root>` +
		`<mxCell id="0" /><mxCell id="1" parent="0" />` +
		`<mxCell id="s" value="Start" style="ellipse;whiteSpace=wrap;html=1;fillColor=#dae8fc;strokeColor=#6c8ebf;" vertex="1" parent="1"><mxGeometry x="40" y="40" width="80" height="40" as="geometry" /></mxCell>` +
		`<UserObject label="Build" tooltip="Runs make" command="make" id="b"><mxCell style="rounded=1;strokeWidth=2" vertex="1" parent="1"><mxGeometry x="40" y="120" width="120" height="60" as="geometry" /></mxCell></UserObject>` +
		`<mxCell id="e" value="Done" style="ellipse;html=1;" vertex="1" parent="1"><mxGeometry x="40" y="220" width="80" height="40" as="geometry" /></mxCell>` +
		`<mxCell id="x1" value="" style="edgeStyle=orthogonalEdgeStyle;html=1;strokeColor=#000000;" edge="1" parent="1" source="s" target="b"><mxGeometry relative="1" as="geometry" /></mxCell>` +
		`<mxCell id="x2" edge="1" parent="1" source="b" target="e"><mxGeometry relative="1" as="geometry" /></mxCell>` +
		`</root></mxGraphModel></diagram></mxfile>`
	for _, tc := range []struct {
		name string
		src  string
		a, b *export.Trace
	}{
		{"own colours", own, runOf("A", "e", "s", "b", "e"), runOf("B", "", "s")},
		{"own colours, B failed", own, runOf("A", "", "s", "b", "e"), runOf("B", "b", "s", "b")},
		{"release.drawio", read("release.drawio"),
			runOf("A", "Ux6f1kq2bJ0sWxGmTR3n-5", "Ux6f1kq2bJ0sWxGmTR3n-1", "Ux6f1kq2bJ0sWxGmTR3n-2", "Ux6f1kq2bJ0sWxGmTR3n-3", "Ux6f1kq2bJ0sWxGmTR3n-5"),
			runOf("B", "Ux6f1kq2bJ0sWxGmTR3n-2", "Ux6f1kq2bJ0sWxGmTR3n-1", "Ux6f1kq2bJ0sWxGmTR3n-2")},
		{"triage-compressed.drawio", read("triage-compressed.drawio"), runOf("A", "4", "2", "3", "4"), runOf("B", "", "2", "3")},
		{"triage-pages.drawio", read("triage-pages.drawio"),
			runOf("A", "", "r7Tt2LwQe9sUo1iPzXyC:2", "r7Tt2LwQe9sUo1iPzXyC:3", "r7Tt2LwQe9sUo1iPzXyC:4"),
			runOf("B", "r7Tt2LwQe9sUo1iPzXyC:3", "r7Tt2LwQe9sUo1iPzXyC:2", "r7Tt2LwQe9sUo1iPzXyC:3")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			drawnA, _ := drawRun(t, tc.src, tc.a)
			require.NotEqual(t, tc.src, drawnA)
			want, _ := drawRun(t, tc.src, tc.b)
			got, notes := drawRun(t, drawnA, tc.b)
			assert.Equal(t, want, got, "B on A's drawing is B on the author's file")
			assert.Empty(t, notes)
			again, _ := drawRun(t, got, tc.b)
			assert.Equal(t, want, again, "B drawn twice")
			if !strings.Contains(tc.src, "compressed") && strings.Contains(tc.src, "<mxGraphModel") {
				plain, _ := drawRun(t, drawnA, nil)
				assert.Equal(t, tc.src, plain, "no run: the author's file")
			}
		})
	}
}

// TestDrawioRedrawKeepsTheAuthorsEdit: a colour the author changed on a
// drawn cell is the author's: a later run does not take it back to what
// it was before, and says it kept it.
func TestDrawioRedrawKeepsTheAuthorsEdit(t *testing.T) {
	t.Parallel()
	src := `<mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>` +
		`<mxCell id="s" value="Start" style="ellipse;html=1;fillColor=#dae8fc;" vertex="1" parent="1"><mxGeometry as="geometry"/></mxCell>` +
		`<mxCell id="b" value="Build" style="rounded=1;html=1;" vertex="1" parent="1"><mxGeometry as="geometry"/></mxCell>` +
		`<mxCell id="x" edge="1" parent="1" source="s" target="b"><mxGeometry relative="1" as="geometry"/></mxCell>` +
		`</root></mxGraphModel>`
	drawnA, _ := drawRun(t, src, runOf("A", "", "s", "b"))
	// In draw.io the author makes Build's fill yellow.
	edited := strings.Replace(drawnA, `rounded=1;html=1;strokeColor=#2e7d32;fillColor=#e6f4ea;`, `rounded=1;html=1;strokeColor=#2e7d32;fillColor=#fff2cc;`, 1)
	require.NotEqual(t, drawnA, edited)
	got, notes := drawRun(t, edited, runOf("B", "", "s"))
	assert.Contains(t, got, `<mxCell id="b" value="Build" style="rounded=1;html=1;fillColor=#fff2cc;" vertex="1"`, "the author's fill kept, dtree's stroke undone")
	assert.Equal(t, []string{"cell b: fillColor=#fff2cc is not what the run drawn before set (#e6f4ea): kept as yours"}, notes)
	assert.Contains(t, got, `style="ellipse;html=1;fillColor=#e6f4ea;strokeColor=#2e7d32;strokeWidth=3;"`, "s: B's marks")
}
