package export_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// chain is a chart of one page whose nodes, one after another, have the
// given texts.
func chain(texts ...string) *types.Document {
	doc := &types.Document{Title: "long", Format: "yaml", Pages: []types.Page{{ID: "p", Root: "n0"}}}
	for i, text := range texts {
		id := fmt.Sprintf("n%d", i)
		doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: "p", Kind: types.KindProcess, Text: text})
		if i > 0 {
			doc.Edges = append(doc.Edges, types.Edge{ID: fmt.Sprintf("e%d", i), Page: "p", From: fmt.Sprintf("n%d", i-1), To: id, Label: text})
		}
	}
	return doc
}

// A node text of one 10 MB unbroken token, and one of 1 MB of words, draw
// in every format in well under a second each: wrapping cut a long word by
// re-slicing its rest, which took 7 s for 200 KB and hours for 10 MB, at
// the end of a run that then ignored interrupts.
func TestPicturesOfHugeTextsAreQuick(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("x", 10<<20)
	words := strings.Repeat("word ", 1<<20/5)
	doc := chain("start", token, words, token+"\n"+words)
	doc.Title = token
	doc.Pages[0].Title = token
	for _, format := range export.PictureFormats {
		var buf bytes.Buffer
		start := time.Now()
		require.NoError(t, export.Picture(t.Context(), &buf, doc, format, export.PictureOptions{}), format)
		took := time.Since(start)
		assert.Less(t, took, 2*time.Second, format)
		// the picture holds the texts' beginnings, not the texts
		assert.Less(t, buf.Len(), 64<<10, format)
		assert.Contains(t, buf.String(), "xxxxxxxxxxxxxxxxxxxxxxxxxxx…", format)
		t.Logf("%s: %v, %d bytes", format, took, buf.Len())
	}
}

// Drawing time grows linearly with the chart: twice the nodes, each with
// a 64 KB token, take about twice as long (quadratic wrapping took 4 times
// as long, and seconds).
func TestPictureTimeIsLinear(t *testing.T) {
	// Not parallel: the package's other tests draw 10 MB texts, whose
	// garbage would be collected during these timings.
	token := strings.Repeat("y", 64<<10)
	texts := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = token
		}
		return s
	}
	small, large := chain(texts(200)...), chain(texts(400)...)
	for _, format := range export.PictureFormats {
		// The two sizes take turns, so that a busy moment of the machine
		// (other packages' tests) falls on both alike; each keeps its best.
		ts, tl := time.Duration(1<<62), time.Duration(1<<62)
		took := func(doc *types.Document) time.Duration {
			runtime.GC()
			start := time.Now()
			require.NoError(t, export.Picture(t.Context(), io.Discard, doc, format, export.PictureOptions{}))
			return time.Since(start)
		}
		for range 9 {
			ts, tl = min(ts, took(small)), min(tl, took(large))
		}
		t.Logf("%s: 200 nodes %v, 400 nodes %v", format, ts, tl)
		assert.Less(t, tl, time.Second, format)
		// Twice the nodes: about twice the time. The bound leaves room for
		// a loaded machine; quadratic growth in the text would break the
		// absolute bound above long before.
		assert.Less(t, float64(tl)/float64(max(ts, time.Millisecond)), 3.5, format)
	}
}

func BenchmarkPictureHugeToken(b *testing.B) {
	for _, size := range []int{1 << 20, 2 << 20, 4 << 20} {
		doc := chain("start", strings.Repeat("x", size))
		for _, format := range export.PictureFormats {
			b.Run(fmt.Sprintf("%s/%dMB", format, size>>20), func(b *testing.B) {
				for b.Loop() {
					if err := export.Picture(b.Context(), io.Discard, doc, format, export.PictureOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A picture stops when its context ends, and WriteRunPicture then leaves
// no file, new or temporary.
func TestPictureStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	doc := chain("a", "b", "c")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, format := range export.PictureFormats {
		err := export.Picture(ctx, io.Discard, doc, format, export.PictureOptions{})
		assert.ErrorIs(t, err, context.Canceled, format)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(failedRun), 0o644))
	_, err := export.WriteRunPicture(ctx, dir, doc, "svg", nil)
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only events.jsonl")
}

// A run drawn on its chart costs time linear in the run's steps: each
// step finds its edge among those between its two nodes. It looked
// through the page's every edge, and a run through a chain of 100,000
// nodes took 31 s to draw.
func TestRunMarksAreLinear(t *testing.T) {
	took := func(n int) time.Duration {
		doc, tr := chainRun(n)
		best := time.Duration(1 << 62)
		for range 3 {
			runtime.GC()
			start := time.Now()
			var out strings.Builder
			require.NoError(t, export.Picture(t.Context(), &out, doc, "mermaid", export.PictureOptions{Trace: tr}))
			best = min(best, time.Since(start))
			_, taken, _ := strings.Cut(out.String(), "  linkStyle ")
			taken, _, _ = strings.Cut(taken, " ")
			require.Equal(t, n-2, strings.Count(taken, ","), "every edge taken is marked")
		}
		return best
	}
	small, large := took(10_000), took(20_000)
	t.Logf("10,000 nodes: %v; 20,000 nodes: %v", small, large)
	assert.Less(t, large, 10*time.Second)
	assert.Less(t, float64(large)/float64(max(small, time.Millisecond)), 3.5, "twice the steps take more than 3.5 times as long")
}

// chainRun is a chain of n process steps and a run through every one.
func chainRun(n int) (*types.Document, *export.Trace) {
	doc := &types.Document{Pages: []types.Page{{ID: "1", Root: "0"}}}
	tr := &export.Trace{RunID: "r", Status: "succeeded", Visits: map[string]int{}, Retries: map[string]int{}}
	for i := range n {
		id := strconv.Itoa(i)
		doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: "1", Kind: types.KindProcess, Text: "step " + id})
		tr.Visits[id] = 1
		if i > 0 {
			doc.Edges = append(doc.Edges, types.Edge{ID: "e" + id, Page: "1", From: strconv.Itoa(i - 1), To: id})
			tr.Steps = append(tr.Steps, export.Step{From: strconv.Itoa(i - 1), To: id})
		}
	}
	return doc, tr
}
