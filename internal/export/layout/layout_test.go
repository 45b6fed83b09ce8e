package layout

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func box() Size { return Size{W: 120, H: 40} }

func graph(n int, edges ...[2]int) Graph {
	g := Graph{Nodes: make([]Size, n)}
	for i := range g.Nodes {
		g.Nodes[i] = box()
	}
	for _, e := range edges {
		g.Edges = append(g.Edges, Edge{From: e[0], To: e[1]})
	}
	return g
}

// checkLayout holds a layout to what a picture needs: nodes inside the
// canvas and apart, every edge routed from its source to its target, and
// edges that are not reversed going down.
func checkLayout(t *testing.T, g Graph, l Layout) {
	t.Helper()
	o := DefaultOptions()
	require.Len(t, l.Nodes, len(g.Nodes))
	require.Len(t, l.Edges, len(g.Edges))
	for i, p := range l.Nodes {
		s := g.Nodes[i]
		assert.GreaterOrEqual(t, p.X-s.W/2, o.Margin-1e-6, "node %d left of the margin", i)
		assert.LessOrEqual(t, p.X+s.W/2, l.Width-o.Margin+1e-6, "node %d past the width", i)
		assert.GreaterOrEqual(t, p.Y-s.H/2, o.Margin-1e-6)
		assert.LessOrEqual(t, p.Y+s.H/2, l.Height-o.Margin+1e-6)
		for j := i + 1; j < len(l.Nodes); j++ {
			q, r := l.Nodes[j], g.Nodes[j]
			if p.Y == q.Y {
				assert.GreaterOrEqual(t, abs(p.X-q.X), (s.W+r.W)/2+o.NodeGap-1e-6, "nodes %d and %d overlap", i, j)
			}
		}
	}
	for i, e := range g.Edges {
		pts := l.Edges[i]
		require.GreaterOrEqual(t, len(pts), 2, "edge %d", i)
		assert.Equal(t, l.Nodes[e.From], pts[0], "edge %d starts at its source", i)
		assert.Equal(t, l.Nodes[e.To], pts[len(pts)-1], "edge %d ends at its target", i)
		if e.From != e.To && !l.Back[i] {
			assert.Less(t, pts[0].Y, pts[len(pts)-1].Y, "edge %d goes down", i)
		}
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestLayered(t *testing.T) {
	t.Parallel()
	for name, g := range map[string]Graph{
		"empty":      graph(0),
		"one node":   graph(1),
		"chain":      graph(4, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3}),
		"decision":   graph(4, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 3}),
		"loop":       graph(4, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3}),
		"self loop":  graph(2, [2]int{0, 1}, [2]int{1, 1}),
		"long edge":  graph(5, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3}, [2]int{0, 3}, [2]int{3, 4}),
		"long back":  graph(5, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3}, [2]int{3, 4}, [2]int{4, 0}),
		"cycle only": graph(3, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 0}),
		"two parts":  graph(4, [2]int{0, 1}, [2]int{2, 3}),
		"multi edge": graph(2, [2]int{0, 1}, [2]int{0, 1}),
		"crossing":   graph(6, [2]int{0, 2}, [2]int{0, 3}, [2]int{1, 2}, [2]int{4, 5}, [2]int{0, 5}, [2]int{1, 4}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := Layered(g, DefaultOptions())
			checkLayout(t, g, l)
			assert.Greater(t, l.Width, 0.0)
			assert.Greater(t, l.Height, 0.0)
		})
	}
}

func TestLayeredBreaksCyclesAtTheBackEdge(t *testing.T) {
	t.Parallel()
	g := graph(4, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3})
	l := Layered(g, DefaultOptions())
	assert.Equal(t, []bool{false, false, true, false}, l.Back)
	assert.Less(t, l.Nodes[0].Y, l.Nodes[1].Y)
	assert.Less(t, l.Nodes[1].Y, l.Nodes[2].Y)
	assert.Less(t, l.Nodes[2].Y, l.Nodes[3].Y)
}

func TestCrossingsAreReduced(t *testing.T) {
	t.Parallel()
	// 0 -> 3, 1 -> 2: drawn in that order the two edges cross.
	g := graph(4, [2]int{0, 3}, [2]int{1, 2})
	l := newLayering(g)
	l.breakCycles()
	l.assignLayers()
	l.addDummies(DefaultOptions())
	l.order(4)
	assert.Equal(t, 0, l.crossings())
}

// tree is a complete binary tree of the given depth, with every leaf
// joined to a last node, the shape of dtree's benchmark charts.
func tree(depth int) Graph {
	n := 1<<depth - 1
	g := graph(n + 1)
	for v := range n {
		if c := 2*v + 1; c < n {
			g.Edges = append(g.Edges, Edge{v, c}, Edge{v, c + 1})
		} else {
			g.Edges = append(g.Edges, Edge{v, n})
		}
	}
	return g
}

func TestLayeredLargeIsFast(t *testing.T) {
	t.Parallel()
	g := tree(11) // 2,048 nodes
	start := time.Now()
	l := Layered(g, DefaultOptions())
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Len(t, l.Nodes, len(g.Nodes))
}

func BenchmarkLayered(b *testing.B) {
	for _, depth := range []int{8, 11} {
		g := tree(depth)
		b.Run(fmt.Sprintf("tree-%d", len(g.Nodes)), func(b *testing.B) {
			for b.Loop() {
				Layered(g, DefaultOptions())
			}
		})
	}
}
