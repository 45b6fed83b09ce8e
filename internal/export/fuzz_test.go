package export_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// FuzzTraceFrom feeds TraceFrom run logs, seeded from a real run's
// events.jsonl (the quickstart chart with its answers file) and the logs
// of events_test.go, then draws each trace it accepts on the quickstart
// chart in every picture format: a log is read from disk, and may be cut
// short, hand-edited or another program's.
func FuzzTraceFrom(f *testing.F) {
	real, err := os.ReadFile(filepath.Join("testdata", "events", "quickstart.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{real, real[:len(real)/2], []byte(failedRun), []byte(emptyRun), []byte(limitRun), []byte(interruptedRun), []byte(forkRun), []byte(forkFailedRun)} {
		f.Add(s)
	}
	doc, err := document.Read(filepath.Join(testdata, "quickstart", "update-deps.csv"), "", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := export.TraceFrom(bytes.NewReader(data))
		if err != nil {
			return
		}
		if tr.Visits == nil || tr.Retries == nil {
			t.Fatal("a trace's maps are never nil")
		}
		for id, n := range tr.Visits {
			if n < 1 {
				t.Fatalf("node %q visited %d times", id, n)
			}
		}
		for id, n := range tr.Retries {
			if n < 1 {
				t.Fatalf("node %q retried %d times", id, n)
			}
		}
		for _, format := range export.PictureFormats {
			for _, page := range []string{"", tr.Page} {
				err := export.Picture(t.Context(), io.Discard, doc, format, export.PictureOptions{Page: page, Trace: tr})
				if err != nil && page == "" {
					t.Fatalf("%s of every page: %v", format, err)
				}
			}
		}
	})
}

// FuzzYAMLRoundTrip sends YAML charts, seeded from those under
// testdata/charts, through every chart writer and back through the
// reader: nothing may panic, and a chart without errors must come back
// with its graph, texts, tags and metadata (what TestRoundTrip compares).
func FuzzYAMLRoundTrip(f *testing.F) {
	err := filepath.WalkDir(filepath.Join(testdata, "charts"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
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
	f.Add([]byte("nodes:\n  - {id: a, kind: other, shape: manual input, text: \"x: y\", next: a}\n"))
	f.Add([]byte("pages:\n  - {id: p, title: \"#1\", nodes: [{id: 1, tags: \"a; b\", metadata: {retries: 2}, branches: {\"Yes\": 2, \"No\": 1}}, {id: 2, kind: end}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := document.FromYAML(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		clean := len(chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: anyCLI{}}).Errors) == 0
		for to, w := range writers {
			var buf bytes.Buffer
			dropped, err := w(&buf, doc)
			var col *export.ColumnError
			if errors.As(err, &col) {
				continue // metadata a CSV cannot hold: convert refuses it
			}
			if err != nil {
				t.Fatalf("write %s: %v", to, err)
			}
			written := buf.String()
			back, err := document.Read("-", to, strings.NewReader(written))
			if err != nil {
				t.Fatalf("read back %s: %v", to, err)
			}
			if !clean {
				continue
			}
			if to != "yaml" && hasLeftover(doc) {
				// A node with no text and no way in or out is, in a Lucid
				// chart, an invisible leftover: its readers drop it with
				// ignored_empty_shape, so the graph cannot come back whole.
				continue
			}
			if to != "yaml" && !hasFlowchartKind(doc) {
				// Nodes all of kind other are fine in YAML, but a Lucid
				// chart of no flowchart shape is not a flowchart.
				require.Len(t, back.Errors, 1, "through %s, written:\n%s", to, written)
				require.Equal(t, "not_a_flowchart", back.Errors[0].Class)
				continue
			}
			if len(back.Errors) > 0 {
				t.Fatalf("%s written has errors %+v:\n%s", to, back.Errors, written)
			}
			back = dropAddedStarts(t, doc, back, dropped)
			tags := to != "json"
			require.Equal(t, normalize(doc, tags), normalize(back, tags), "through %s, written:\n%s", to, written)
		}
	})
}

// hasFlowchartKind reports whether a node is of a flowchart kind (not
// other), as a Lucid chart must have one.
func hasFlowchartKind(doc *types.Document) bool {
	for _, n := range doc.Nodes {
		if n.Kind != types.KindOther {
			return true
		}
	}
	return false
}

// hasLeftover reports whether a node has no text and no edge touching it.
func hasLeftover(doc *types.Document) bool {
	touched := map[string]bool{}
	for _, e := range doc.Edges {
		touched[e.From], touched[e.To] = true, true
	}
	for _, n := range doc.Nodes {
		if n.Text == "" && !touched[n.ID] && !slices.ContainsFunc(n.TextAreas, func(t string) bool { return t != "" }) {
			return true
		}
	}
	return false
}
