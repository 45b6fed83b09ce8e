package document_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/testchart"
	"github.com/dtree-dev/dtree/types"
)

// benchImport measures importing and checking a generated chart, as
// `dtree lint` does, from memory. ns/node shows whether time grows linearly.
func benchImport(b *testing.B, nodes int, gen func(io.Writer) error, read func(io.Reader) (*types.Document, error)) {
	var buf bytes.Buffer
	if err := gen(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := read(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		c := chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}})
		if len(c.Errors) > 0 || len(c.Nodes) != nodes {
			b.Fatalf("%d nodes, errors %v", len(c.Nodes), c.Errors)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
}

func BenchmarkImportCSVLinear(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchImport(b, n, func(w io.Writer) error { return testchart.LinearCSV(w, n) }, document.FromCSV)
		})
	}
}

func BenchmarkImportCSVBinaryTree(b *testing.B) {
	const depth = 17 // 131,071 nodes
	benchImport(b, 1<<depth-1, func(w io.Writer) error { return testchart.BinaryTreeCSV(w, depth) }, document.FromCSV)
}

func BenchmarkImportJSONLinear(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchImport(b, n, func(w io.Writer) error { return testchart.LinearJSON(w, n) }, document.FromJSON)
		})
	}
}

func BenchmarkImportDrawioLinear(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchImport(b, n, func(w io.Writer) error { return testchart.LinearDrawio(w, n) }, document.FromDrawio)
		})
	}
}

func BenchmarkImportDrawioCompressed(b *testing.B) {
	const n = 100_000
	benchImport(b, n, func(w io.Writer) error { return testchart.LinearDrawioCompressed(w, n) }, document.FromDrawio)
}

func BenchmarkImportMermaidLinear(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchImport(b, n, func(w io.Writer) error { return testchart.LinearMermaid(w, n) }, document.FromMermaid)
		})
	}
}
