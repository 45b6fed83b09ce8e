package chart

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The chart a run walked: Start → Run the tests → Pass? Yes → Ship → End;
// No → Fix it → Run the tests.
var matchWas = Outline{
	Nodes: []OutlineNode{{"3", "terminator", "Start"}, {"4", "process", "Run the tests"}, {"5", "decision", "Pass?"},
		{"6", "process", "Fix it"}, {"7", "process", "Ship"}, {"8", "terminator", "End"}},
	Edges: []OutlineEdge{{"3", "4", ""}, {"4", "5", ""}, {"5", "7", "Yes"}, {"5", "6", "No"}, {"6", "4", ""}, {"7", "8", ""}},
}

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		is        Outline
		want      map[string]string
		wantWhole bool
	}{
		{name: "the same chart", is: matchWas, wantWhole: true,
			want: map[string]string{"3": "3", "4": "4", "5": "5", "6": "6", "7": "7", "8": "8"}},
		{name: "exported again: every id new, one prompt mended", wantWhole: true, is: Outline{
			Nodes: []OutlineNode{{"10", "terminator", "Start"}, {"11", "process", "Run the unit tests"}, {"12", "decision", "Pass?"},
				{"13", "process", "Fix it"}, {"14", "process", "Ship"}, {"15", "terminator", "End"}},
			Edges: []OutlineEdge{{"10", "11", ""}, {"11", "12", ""}, {"12", "14", "Yes"}, {"12", "13", "No"}, {"13", "11", ""}, {"14", "15", ""}},
		}, want: map[string]string{"3": "10", "4": "11", "5": "12", "6": "13", "7": "14", "8": "15"}},
		{name: "a node added: not whole, the rest paired", wantWhole: false, is: Outline{
			Nodes: append([]OutlineNode{{"20", "process", "Tell them"}}, matchWas.Renamed(map[string]string{}, "n").Nodes...),
			Edges: append([]OutlineEdge{{"n7", "20", ""}, {"20", "n8", ""}}, matchWas.Renamed(map[string]string{}, "n").Edges[:5]...),
		}, want: map[string]string{"3": "n3", "4": "n4", "5": "n5", "6": "n6", "7": "n7", "8": "n8"}},
		{name: "a kind changed: not whole", wantWhole: false, is: Outline{
			Nodes: []OutlineNode{{"3", "terminator", "Start"}, {"4", "decision", "Run the tests"}, {"5", "decision", "Pass?"},
				{"6", "process", "Fix it"}, {"7", "process", "Ship"}, {"8", "terminator", "End"}},
			Edges: matchWas.Edges,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ids, whole := Match(matchWas, tt.is)
			assert.Equal(t, tt.wantWhole, whole, "%v", ids)
			if tt.want != nil {
				assert.Equal(t, tt.want, ids)
			}
		})
	}
	// The two Go nodes: each old one pairs with the one its label leads to.
	was := Outline{
		Nodes: []OutlineNode{{"1", "terminator", "Start"}, {"2", "decision", "Pass?"}, {"3", "process", "Go"}, {"4", "process", "Go"}},
		Edges: []OutlineEdge{{"1", "2", ""}, {"2", "3", "Yes"}, {"2", "4", "No"}},
	}
	is := Outline{
		Nodes: []OutlineNode{{"a", "terminator", "Start"}, {"b", "decision", "Pass?"}, {"c", "process", "Go"}, {"d", "process", "Go"}},
		Edges: []OutlineEdge{{"a", "b", ""}, {"b", "c", "No"}, {"b", "d", "Yes"}},
	}
	ids, whole := Match(was, is)
	assert.True(t, whole)
	assert.Equal(t, map[string]string{"1": "a", "2": "b", "3": "d", "4": "c"}, ids)
}

// A chart of 50,000 steps in a line, exported again, every text mended
// but the first: paired along the lines in well under a second.
func TestMatchIsLinear(t *testing.T) {
	// Not parallel, and timed as a ratio, whatever else the machine runs
	// (an absolute bound of 2 s failed under -race beside other packages'
	// tests): four times the nodes take 5.4-6.6 times as long here (maps
	// of more strings), up to 10.7 with the machine loaded; a quadratic
	// match would take 16 times as long, and more with the same effects.
	took := func(n int) time.Duration {
		var a, b Outline
		for i := range n {
			text := fmt.Sprint("step ", i)
			a.Nodes = append(a.Nodes, OutlineNode{fmt.Sprint(i), "process", text})
			if i > 0 {
				text += " mended"
				a.Edges = append(a.Edges, OutlineEdge{fmt.Sprint(i - 1), fmt.Sprint(i), ""})
				b.Edges = append(b.Edges, OutlineEdge{fmt.Sprint(n + i - 1), fmt.Sprint(n + i), ""})
			}
			b.Nodes = append(b.Nodes, OutlineNode{fmt.Sprint(n + i), "process", text})
		}
		best := time.Duration(1 << 62)
		for range 5 {
			runtime.GC()
			start := time.Now()
			ids, whole := Match(a, b)
			best = min(best, time.Since(start))
			assert.True(t, whole)
			assert.Equal(t, fmt.Sprint(2*n-1), ids[fmt.Sprint(n-1)])
		}
		return best
	}
	small, large := took(12_500), took(50_000)
	t.Logf("12,500 nodes: %v; 50,000 nodes: %v", small, large)
	assert.Less(t, float64(large)/float64(max(small, time.Millisecond)), 13.0, "four times the nodes take more than 13 times as long (quadratic: 16 and more)")
	assert.Less(t, large, 20*time.Second)
}
