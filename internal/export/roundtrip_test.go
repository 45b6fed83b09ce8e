package export_test

import (
	"bytes"
	"encoding/csv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// testdata is the repository's testdata directory.
var testdata = filepath.Join("..", "..", "testdata")

// cleanCharts returns every chart under testdata/charts, and the
// quickstart chart, that imports and lints without errors: the charts
// convert accepts. Each is keyed by its path under testdata.
func cleanCharts(t *testing.T) map[string]*types.Document {
	t.Helper()
	out := map[string]*types.Document{}
	add := func(p string) {
		doc, err := document.Read(p, "", nil)
		require.NoError(t, err, p)
		if c := chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: anyCLI{}}); len(c.Errors) == 0 {
			rel, _ := filepath.Rel(testdata, p)
			out[filepath.ToSlash(rel)] = doc
		}
	}
	err := filepath.WalkDir(filepath.Join(testdata, "charts"), func(p string, d fs.DirEntry, err error) error {
		if _, chart := document.ByExtension(p); err == nil && !d.IsDir() && chart && filepath.Base(p) != "README.md" {
			add(p)
		}
		return err
	})
	require.NoError(t, err)
	add(filepath.Join(testdata, "quickstart", "update-deps.csv"))
	require.Contains(t, out, "quickstart/update-deps.csv", "the quickstart chart has no errors")
	require.Greater(t, len(out), 20)
	return out
}

// anyCLI knows every CLI name, so that lint's CLI checks (which depend on
// the settings) leave the charts alone.
type anyCLI struct{}

func (anyCLI) Canonical(name string) (string, bool) { return strings.ToLower(name), true }
func (anyCLI) List() []string                       { return nil }

// norm is a chart as a round trip must keep it: ids replaced by positions
// (CSV renumbers them), each node's ways out in order.
type norm struct {
	Title string
	Pages []string // title and the position of the root
	Nodes []string // page, kind, shape, text, tags, metadata
	Out   map[int][]string
}

// shapeOf is the shape a round trip keeps. A node of kind other carries
// its shape's name through every format (YAML shape:, the CSV Name, the
// JSON class), case aside: the CSV writer spells a flowchart shape as
// Lucid does. Two substitutions are by design: a node with no shape is
// written as a plain box (Rectangle, RectangleBlock), and JSON writes a
// text shape as a box too, lest a reader drop it as a note (rule 9). For
// the other kinds each format writes the kind's own shape (Process,
// ProcessBlock), which the kind already says.
func shapeOf(n types.Node) string {
	if n.Kind != types.KindOther {
		return ""
	}
	s := strings.ToLower(n.Shape)
	if s == "" || s == "rectangle" || s == "rectangleblock" || s == "text" || strings.Contains(s, "textblock") {
		s = "(a box)"
	}
	return " shape=" + s
}

func normalize(doc *types.Document, tags bool) norm {
	pos := map[string]int{}
	for i, n := range doc.Nodes {
		pos[n.ID] = i
	}
	page := map[string]int{}
	n := norm{Title: doc.Title, Out: map[int][]string{}}
	for i, p := range doc.Pages {
		page[p.ID] = i
		n.Pages = append(n.Pages, p.Title+" root "+strconv.Itoa(pos[p.Root]))
	}
	for _, nd := range doc.Nodes {
		s := strconv.Itoa(page[nd.Page]) + " " + nd.Kind + shapeOf(nd) + " " + nd.Text
		if tags {
			s += " tags" + strings.Join(append([]string{""}, nd.Tags...), "|")
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range nd.Metadata {
				if !yield(k) {
					return
				}
			}
		}) {
			s += " " + k + "=" + nd.Metadata[k]
		}
		n.Nodes = append(n.Nodes, s)
	}
	for _, e := range doc.Edges {
		n.Out[pos[e.From]] = append(n.Out[pos[e.From]], strconv.Itoa(pos[e.To])+" "+e.Label)
	}
	return n
}

type writer func(*bytes.Buffer, *types.Document) ([]string, error)

var writers = map[string]writer{
	"yaml": func(b *bytes.Buffer, d *types.Document) ([]string, error) { return export.YAML(b, d) },
	"csv":  func(b *bytes.Buffer, d *types.Document) ([]string, error) { return export.CSV(b, d) },
	"json": func(b *bytes.Buffer, d *types.Document) ([]string, error) { return export.JSON(b, d) },
}

// convert writes doc in format to and reads it back.
func convert(t *testing.T, doc *types.Document, to string) (*types.Document, []string) {
	t.Helper()
	var buf bytes.Buffer
	dropped, err := writers[to](&buf, doc)
	require.NoError(t, err)
	back, err := document.Read("-", to, &buf)
	require.NoError(t, err)
	require.Empty(t, back.Errors, "%s written:\n%s", to, buf.String())
	// A conversion adds no warning: only those the chart had may remain
	// (a line's extra labels are still extra in CSV and JSON).
	for _, w := range back.Warnings {
		require.True(t, slices.ContainsFunc(doc.Warnings, func(d types.Diagnostic) bool { return d.Class == w.Class }),
			"%s written, read back with %s %s:\n%s", to, w.Class, w.Message, buf.String())
	}
	return back, dropped
}

// TestRoundTrip converts every clean chart to each chart format and back,
// and through YAML to its own format and back (CSV → YAML → CSV, JSON →
// YAML → JSON), and compares the graph, texts, tags and metadata.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for name, doc := range cleanCharts(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hasTags := slices.ContainsFunc(doc.Nodes, func(n types.Node) bool { return len(n.Tags) > 0 })
			want := normalize(doc, true)
			for to := range writers {
				back, dropped := convert(t, doc, to)
				back = dropAddedStarts(t, doc, back, dropped)
				keepsTags := to != "json"
				assert.Equal(t, normalize(doc, keepsTags), normalize(back, keepsTags), "through %s", to)
				if !keepsTags && hasTags {
					assert.Contains(t, strings.Join(dropped, "\n"), "tags", "JSON says it drops tags")
				}
			}
			own := strings.TrimPrefix(filepath.Ext(name), ".")
			viaYAML, _ := convert(t, doc, "yaml")
			assert.Equal(t, want, normalize(viaYAML, true), "to YAML")
			if writers[own] == nil {
				return // a format dtree reads but does not write (draw.io)
			}
			back, dropped := convert(t, viaYAML, own)
			back = dropAddedStarts(t, doc, back, dropped)
			assert.Equal(t, normalize(doc, own != "json"), normalize(back, own != "json"), "YAML back to %s", own)
			if own != "csv" {
				// JSON and YAML keep ids: the round trip gives the same ids.
				for i := range doc.Nodes {
					assert.Equal(t, doc.Nodes[i].ID, back.Nodes[i].ID)
				}
			}
		})
	}
}

// TestRoundTripIsStable checks that writing what was read back gives the
// same bytes: a converted chart converts to itself.
func TestRoundTripIsStable(t *testing.T) {
	t.Parallel()
	for name, doc := range cleanCharts(t) {
		for to, w := range writers {
			var first, second bytes.Buffer
			_, err := w(&first, doc)
			require.NoError(t, err)
			back, err := document.Read("-", to, bytes.NewReader(first.Bytes()))
			require.NoError(t, err)
			_, err = w(&second, back)
			require.NoError(t, err)
			assert.Equal(t, first.String(), second.String(), "%s to %s twice", name, to)
		}
	}
}

func TestCSVShapeLibraries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ kind, shape, name, library string }{
		{types.KindProcess, "Process", "Process", "Flowchart Shapes/Containers"},
		{types.KindSubprocess, "PredefinedProcessBlock", "Predefined process", "Flowchart Shapes/Containers"},
		{types.KindOther, "Data", "Data", "Flowchart Shapes/Containers"},
		{types.KindOther, "manual input", "Manual input", "Flowchart Shapes/Containers"},
		{types.KindOther, "Document", "Document", "Flowchart Shapes/Containers"},
		{types.KindOther, "Database", "Database", "Flowchart Shapes/Containers"},
		{types.KindOther, "Delay", "Delay", "Flowchart Shapes/Containers"},
		{types.KindOther, "Display", "Display", "Flowchart Shapes/Containers"},
		{types.KindOther, "Text", "Text", "Standard"},
		{types.KindOther, "BPMNActivity", "BPMNActivity", "Standard"},
		{types.KindOther, "", "Rectangle", "Standard"},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			t.Parallel()
			doc := &types.Document{Pages: []types.Page{{ID: "1", Root: "a"}}, Nodes: []types.Node{
				{ID: "a", Page: "1", Kind: tc.kind, Shape: tc.shape, Text: "A"}}}
			var buf bytes.Buffer
			_, err := export.CSV(&buf, doc)
			require.NoError(t, err)
			rows := shapeRows(t, buf.Bytes())
			require.Len(t, rows, 1, buf.String())
			assert.Equal(t, [2]string{tc.name, tc.library}, rows[0].shape)
		})
	}
}

// TestCSVKeepsShapeLibraries writes every clean CSV chart as CSV and
// checks that each shape keeps its Name (case aside) and Shape Library:
// a Data shape from the flowchart library must not come back from Standard.
func TestCSVKeepsShapeLibraries(t *testing.T) {
	t.Parallel()
	for name, doc := range cleanCharts(t) {
		if filepath.Ext(name) != ".csv" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(testdata, filepath.FromSlash(name)))
		require.NoError(t, err)
		orig := map[string][2]string{}
		for _, r := range shapeRows(t, data) {
			orig[r.id] = r.shape
		}
		var buf bytes.Buffer
		_, err = export.CSV(&buf, doc)
		require.NoError(t, err)
		written := shapeRows(t, buf.Bytes())
		k := 0
		for _, p := range doc.Pages {
			for _, n := range doc.Nodes {
				if n.Page != p.ID {
					continue
				}
				require.Less(t, k, len(written), name)
				o, w := orig[n.ID], written[k].shape
				k++
				if o[1] == "" {
					continue // a 2020 export: no Shape Library column
				}
				assert.True(t, strings.EqualFold(o[0], w[0]), "%s node %s: name %q written as %q", name, n.ID, o[0], w[0])
				// Lucid's 2026 export puts flowchart shapes in
				// "Flowchart Shapes/Containers", the name dtree writes,
				// older exports in "Flowchart Shapes": the same shapes
				// either way.
				if o[1] == "Flowchart Shapes" {
					o[1] = "Flowchart Shapes/Containers"
				}
				assert.Equal(t, o[1], w[1], "%s node %s (%s): library", name, n.ID, o[0])
			}
		}
		assert.Equal(t, len(written), k, name)
	}
}

type shapeRow struct {
	id    string
	shape [2]string // Name, Shape Library
}

// shapeRows returns the shape rows of a CSV of shape data in order: every
// row but the Document, Page and Line rows.
func shapeRows(t *testing.T, data []byte) []shapeRow {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.TrimSpace(h)] = i
	}
	cell := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	var out []shapeRow
	for _, rec := range recs[1:] {
		name, page := cell(rec, "Name"), cell(rec, "Page ID")
		if name == "Line" || page == "" {
			continue // Line, Document and Page rows
		}
		out = append(out, shapeRow{id: cell(rec, "Id"), shape: [2]string{name, cell(rec, "Shape Library")}})
	}
	return out
}

func TestCSVRefusesColumnNames(t *testing.T) {
	t.Parallel()
	for _, meta := range []types.Metadata{{"Name": "x"}, {"text area 2": "x"}} {
		doc := &types.Document{Pages: []types.Page{{ID: "1"}}, Nodes: []types.Node{{ID: "a", Page: "1", Kind: "process", Metadata: meta}}}
		_, err := export.CSV(&bytes.Buffer{}, doc)
		assert.ErrorContains(t, err, "is the name of a Lucid CSV column")
	}
	doc := &types.Document{Pages: []types.Page{{ID: "1"}}, Nodes: []types.Node{
		{ID: "a", Page: "1", Kind: "process", Metadata: types.Metadata{"Cli": "x"}},
		{ID: "b", Page: "1", Kind: "process", Metadata: types.Metadata{"cli": "y"}}}}
	_, err := export.CSV(&bytes.Buffer{}, doc)
	assert.ErrorContains(t, err, "differ only in case")
}

// dropAddedStarts takes out of back the Start terminators that a Lucid
// writer added, as its notes say, before a page whose start a loop leads
// back to (a YAML chart's first node): the rest must be the chart.
func dropAddedStarts(t *testing.T, doc, back *types.Document, notes []string) *types.Document {
	t.Helper()
	added := 0
	for _, n := range notes {
		if strings.Contains(n, "a Start terminator is added") {
			added++
		}
	}
	if added == 0 {
		return back
	}
	drop := map[string]bool{}
	for i, p := range back.Pages {
		var start types.Node
		for _, n := range back.Nodes {
			if n.ID == p.Root {
				start = n
			}
		}
		orig := doc.Pages[i].Root
		if start.Kind != types.KindTerminator || start.Text != "Start" || slices.ContainsFunc(doc.Nodes, func(n types.Node) bool {
			return n.ID == orig && n.Kind == types.KindTerminator
		}) {
			continue
		}
		drop[start.ID] = true
		for _, e := range back.Edges {
			if e.From == start.ID {
				back.Pages[i].Root = e.To
			}
		}
	}
	require.Len(t, drop, added, "one added start per note")
	out := *back
	out.Nodes, out.Edges = nil, nil
	for _, n := range back.Nodes {
		if !drop[n.ID] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	for _, e := range back.Edges {
		if !drop[e.From] {
			out.Edges = append(out.Edges, e)
		}
	}
	return &out
}
