package chart

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestChanges(t *testing.T) {
	t.Parallel()
	was := Outline{
		Nodes: []OutlineNode{{"1", "terminator", ""}, {"2", "process", ""}, {"3", "decision", ""}},
		Edges: []OutlineEdge{{"1", "2", ""}, {"2", "3", ""}, {"3", "2", "No"}},
	}
	tests := []struct {
		name string
		is   Outline
		want []string
	}{
		{name: "same", is: was, want: nil},
		{name: "node added, line moved", is: Outline{
			Nodes: []OutlineNode{{"1", "terminator", ""}, {"2", "process", ""}, {"3", "decision", ""}, {"4", "process", ""}},
			Edges: []OutlineEdge{{"1", "2", ""}, {"2", "3", ""}, {"3", "4", "No"}},
		}, want: []string{"node 4 (process) was added", `the line 3 → 2 labelled "No" was removed`, `the line 3 → 4 labelled "No" was added`}},
		{name: "kind changed, node removed", is: Outline{
			Nodes: []OutlineNode{{"1", "terminator", ""}, {"2", "decision", ""}},
			Edges: []OutlineEdge{{"1", "2", ""}},
		}, want: []string{"node 2 was a process and is a decision", "node 3 (decision) was removed",
			"the line 2 → 3 was removed", `the line 3 → 2 labelled "No" was removed`}},
		{name: "label changed", is: Outline{Nodes: was.Nodes,
			Edges: []OutlineEdge{{"1", "2", ""}, {"2", "3", ""}, {"3", "2", "Retry"}}},
			want: []string{`the line 3 → 2 labelled "No" was removed`, `the line 3 → 2 labelled "Retry" was added`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, Changes(was, tt.is))
		})
	}
}

// TestChangesIsBoundedAndLinear: two charts of 200,000 nodes with nothing
// in common name ten changes and count the rest, in well under a second.
func TestChangesIsBoundedAndLinear(t *testing.T) {
	t.Parallel()
	const n = 200_000
	var a, b Outline
	for i := range n {
		a.Nodes = append(a.Nodes, OutlineNode{fmt.Sprint("a", i), "process", ""})
		b.Nodes = append(b.Nodes, OutlineNode{fmt.Sprint("b", i), "process", ""})
		a.Edges = append(a.Edges, OutlineEdge{fmt.Sprint("a", i), fmt.Sprint("a", i+1), ""})
		b.Edges = append(b.Edges, OutlineEdge{fmt.Sprint("b", i), fmt.Sprint("b", i+1), ""})
	}
	start := time.Now()
	got := Changes(a, b)
	assert.Len(t, got, maxChanges+1)
	assert.Equal(t, fmt.Sprintf("and %d more", 4*n-maxChanges), got[maxChanges])
	assert.Less(t, time.Since(start), 20*time.Second) // quadratic: hours
}
