package document_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/render"
	"github.com/dtree-dev/dtree/types"
)

// seed adds every chart with the given extension under testdata/charts
// and testdata/quickstart.
func seed(f *testing.F, ext string) {
	f.Helper()
	for _, dir := range []string{"charts", "quickstart"} {
		err := filepath.WalkDir(filepath.Join("..", "..", "testdata", dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ext) {
				return err
			}
			data, err := os.ReadFile(p)
			if err == nil {
				f.Add(data)
			}
			return err
		})
		if err != nil {
			f.Fatal(err)
		}
	}
}

func FuzzFromCSV(f *testing.F) {
	seed(f, ".csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := document.FromCSV(bytes.NewReader(data))
		checkDocument(t, doc, err)
	})
}

func FuzzFromJSON(f *testing.F) {
	seed(f, ".json")
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := document.FromJSON(bytes.NewReader(data))
		checkDocument(t, doc, err)
	})
}

func FuzzFromDrawio(f *testing.F) {
	seed(f, ".drawio")
	f.Add([]byte(`<mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/><object label="A" cli="claude" id="a"><mxCell style="ellipse;html=1;" vertex="1" parent="1"/></object><mxCell id="e" edge="1" parent="1" source="a" target="a"><mxCell id="l" value="&lt;b&gt;x&lt;/b&gt;" style="edgeLabel;html=1;" vertex="1" parent="e"/></mxCell></root></mxGraphModel>`))
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8"?><!-- c --><mxfile><diagram name="a"><![CDATA[dZDBCsIwDIafJvdZ]]></diagram><diagram id="b">` +
		`<mxGraphModel><root><mxCell id="0"/><UserObject label="%cli%" placeholders="1" cli="x" tags="t" id="v"><mxCell vertex="1" parent="0"/></UserObject></root></mxGraphModel></diagram></mxfile>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := document.FromDrawio(bytes.NewReader(data))
		checkDocument(t, doc, err)
	})
}

func FuzzFromMermaid(f *testing.F) {
	seed(f, ".mmd")
	seed(f, ".md")
	f.Add([]byte("---\ntitle: T\n---\n%% dtree: v: 1\ngraph LR;A([Go])-->|x|B{Q?} & C@{ shape: diam, label: \"a\\\"b\" }\nsubgraph S [t]\nB -- y --> D[[#quot;<br>]]:::c\nend\nB -. z .-> S\n%% dtree: D cli: x\ne1@==>\n"))
	f.Add([]byte("# T\n```mermaid\nflowchart\nA-->B\n```\n~~~mermaid\ngraph TD\nA((x)) --o B\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := document.FromMermaid(bytes.NewReader(data))
		checkDocument(t, doc, err)
	})
}

// checkDocument holds any imported document to the promises the rest of
// dtree relies on, then sends it through everything inspect and lint do.
func checkDocument(t *testing.T, doc *types.Document, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("reading from memory cannot fail, got %v", err)
	}
	if doc.Pages == nil || doc.Nodes == nil || doc.Edges == nil || doc.Errors == nil || doc.Warnings == nil {
		t.Fatal("a document's lists are never nil")
	}
	nodes := map[string]types.Node{}
	for _, n := range doc.Nodes {
		if _, dup := nodes[n.ID]; dup {
			t.Fatalf("node id %q twice", n.ID)
		}
		if n.TextAreas == nil || n.Tags == nil || n.Comments == nil {
			t.Fatalf("node %q has a nil list", n.ID)
		}
		nodes[n.ID] = n
	}
	for _, e := range doc.Edges {
		from, okf := nodes[e.From]
		to, okt := nodes[e.To]
		if !okf || !okt {
			t.Fatalf("edge %q joins %q and %q, not both nodes", e.ID, e.From, e.To)
		}
		if from.Page != e.Page || to.Page != e.Page {
			t.Fatalf("edge %q crosses pages", e.ID)
		}
		if e.ExtraLabels == nil {
			t.Fatalf("edge %q has nil extra labels", e.ID)
		}
	}
	for _, p := range doc.Pages {
		if p.Root == "" {
			continue
		}
		if n, ok := nodes[p.Root]; !ok || n.Page != p.ID {
			t.Fatalf("page %q has root %q, not one of its nodes", p.ID, p.Root)
		}
	}
	for _, d := range append(append([]types.Diagnostic{}, doc.Errors...), doc.Warnings...) {
		if d.Class == "" || d.Message == "" || d.IDs == nil {
			t.Fatalf("incomplete diagnostic %+v", d)
		}
		if len(d.IDs) > 0 && d.ID != d.IDs[0] {
			t.Fatalf("diagnostic %+v: ID is not the first of IDs", d)
		}
	}
	if len(doc.Errors) == 0 {
		for _, p := range doc.Pages {
			for _, n := range doc.Nodes {
				if n.Page == p.ID && p.Root == "" {
					t.Fatalf("page %q has nodes and no error, but no root", p.ID)
				}
			}
		}
	}
	c := chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}})
	if err := render.Flow(io.Discard, c, nil, types.BuiltinDefaults()); err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(c.Normalized(nil)); err != nil {
		t.Fatal(err)
	}
}

func FuzzFromYAML(f *testing.F) {
	seed(f, ".yaml")
	f.Add([]byte("nodes:\n  - {id: a, next: [b, b], branches: {x: a}}\n  - {id: b, kind: start}\n"))
	f.Add([]byte("pages:\n  - {id: p, nodes: [{id: a, next: a}]}\n  - {id: p, nodes: []}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := document.FromYAML(bytes.NewReader(data))
		checkDocument(t, doc, err)
	})
}

// FuzzRead reads through document.Read, with every format of the table or
// none (then Detect picks): a format added to the table is fuzzed here
// with its test charts as seeds, with no target of its own. Only a chart
// whose format cannot be told may fail.
func FuzzRead(f *testing.F) {
	names := document.Names()
	for _, dir := range []string{"charts", "quickstart"} {
		err := filepath.WalkDir(filepath.Join("..", "..", "testdata", dir), func(p string, d os.DirEntry, err error) error {
			format, ok := document.ByExtension(p)
			if err != nil || d.IsDir() || !ok || filepath.Base(p) == "README.md" {
				return err
			}
			data, err := os.ReadFile(p)
			if err == nil {
				f.Add(uint8(slices.Index(names, format.Name)), data)
				f.Add(uint8(len(names)), data) // detected
			}
			return err
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, pick uint8, data []byte) {
		format := ""
		if int(pick)%(len(names)+1) < len(names) {
			format = names[int(pick)%(len(names)+1)]
		}
		doc, err := document.Read("-", format, bytes.NewReader(data))
		var ue *document.UnreadableError
		if format == "" && errors.As(err, &ue) && ue.Err.Error() == "cannot tell its format" {
			return
		}
		checkDocument(t, doc, err)
		if format != "" && doc.Format != format {
			t.Fatalf("read as %s, the document says %s", format, doc.Format)
		}
	})
}

// FuzzDrawioWindow: the draw.io decoder reads its input a window at a time;
// read a byte, 7 bytes or 64 bytes at a time, every input gives the same
// document as read whole.
func FuzzDrawioWindow(f *testing.F) {
	seed(f, ".drawio")
	f.Add([]byte(`<mxfile><!-- a > b --><diagram name="x &gt; y" id="d"><mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>` +
		`<mxCell id="a" value="A &lt;&amp;&gt; B" style="ellipse;" vertex="1" parent="1"><mxGeometry as="geometry"/></mxCell>` +
		`<mxCell id="b" value="x > y" style="rounded=0;" vertex="1" parent="1"/><mxCell id="e" edge="1" parent="1" source="a" target="b"/></root></mxGraphModel></diagram></mxfile>`))
	f.Add([]byte("\ufeff<mxGraphModel><root><mxCell id=\"0\"/>\n<mxCell id=\"a\" value=\"A\" vertex=\"1\" parent=\"0\"/></root></mxGraphModel>"))
	f.Add([]byte(`<mxfile><diagram name="P"><![CDATA[ not > base64 ]]></diagram></mxfile>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, err := document.FromDrawio(bytes.NewReader(data))
		require.NoError(t, err)
		for _, n := range []int{1, 7, 64} {
			old := document.SetDrawioWindow(n)
			doc, err := document.FromDrawio(bytes.NewReader(data))
			document.SetDrawioWindow(old)
			require.NoError(t, err)
			require.Equal(t, whole, doc, "read %d bytes at a time", n)
		}
	})
}
