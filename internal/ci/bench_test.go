package ci

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/run"
)

// BenchmarkReports is what a run of 200 steps over a 500-node page
// spends on its CI reports when it ends: the JUnit report, the Mermaid
// picture of the job summary and the summary itself (readme/ci.md,
// readme/performance.md#ci-reports).
func BenchmarkReports(b *testing.B) {
	steps := make([]string, 200)
	for i := range steps {
		steps[i] = run.StatusSucceeded
	}
	sum := summary(run.StatusSucceeded, steps...)
	doc := bigDoc(500)
	tr := &export.Trace{Page: "p", Status: "succeeded", Visits: map[string]int{"s": 1}, Retries: map[string]int{}}
	prev := "s"
	for i := range 200 {
		id := fmt.Sprint("n", i)
		tr.Visits[id] = 1
		tr.Steps = append(tr.Steps, export.Step{From: prev, To: id})
		prev = id
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := JUnit(io.Discard, sum, Report{Chart: "c.csv"}); err != nil {
			b.Fatal(err)
		}
		diagram, note, err := Picture(ctx, doc, tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := StepSummary(io.Discard, sum, Summary{Report: Report{Chart: "c.csv"}, Diagram: diagram, Note: note}); err != nil {
			b.Fatal(err)
		}
	}
}
