// Package graph indexes an imported chart for walking: nodes by id, each
// node's outgoing edges in chart order, and the graph questions lint and the
// runner ask (role, reachability, loops with no way out).
package graph

import "github.com/dtree-dev/dtree/types"

// Graph is an index over a document's nodes and edges. It does not copy
// them; the document must not change while the graph is in use.
//
// Adjacency is kept in compressed rows: the edges leaving node i are
// edges[start[i]:start[i+1]], so a 100,000-node chart costs two slices, not
// 100,000.
type Graph struct {
	Doc   *types.Document
	index *IDs
	start []int32 // per node, where its outgoing edges begin in edges
	edges []int32 // edge indexes grouped by source node, in chart order
	to    []int32 // per edge, the index of its target node
	in    []int32 // incoming edge count per node, self-loops included
}

// New indexes doc.
func New(doc *types.Document) *Graph {
	n := len(doc.Nodes)
	g := &Graph{
		Doc:   doc,
		index: NewIDs(n),
		start: make([]int32, n+1),
		to:    make([]int32, len(doc.Edges)),
		in:    make([]int32, n),
	}
	for i := range doc.Nodes {
		g.index.Set(doc.Nodes[i].ID, i)
	}
	from := make([]int32, len(doc.Edges))
	valid := 0
	for i, e := range doc.Edges {
		f, okf := g.index.Get(e.From)
		t, okt := g.index.Get(e.To)
		if !okf || !okt {
			from[i] = -1
			continue
		}
		from[i], g.to[i] = int32(f), int32(t)
		g.start[f+1]++
		g.in[t]++
		valid++
	}
	for i := range n {
		g.start[i+1] += g.start[i]
	}
	g.edges = make([]int32, valid)
	fill := append([]int32(nil), g.start[:n]...)
	for i, f := range from {
		if f >= 0 {
			g.edges[fill[f]] = int32(i)
			fill[f]++
		}
	}
	return g
}

// out returns the indexes of the edges leaving node i.
func (g *Graph) out(i int) []int32 { return g.edges[g.start[i]:g.start[i+1]] }

// Index returns the position of node id in Doc.Nodes.
func (g *Graph) Index(id string) (int, bool) {
	return g.index.Get(id)
}

// Node returns node id.
func (g *Graph) Node(id string) (*types.Node, bool) {
	i, ok := g.index.Get(id)
	if !ok {
		return nil, false
	}
	return &g.Doc.Nodes[i], true
}

// Out returns the edges leaving node i, in chart order.
func (g *Graph) Out(i int) []types.Edge {
	out := g.out(i)
	edges := make([]types.Edge, len(out))
	for k, e := range out {
		edges[k] = g.Doc.Edges[e]
	}
	return edges
}

// OutDegree is the number of edges leaving node i.
func (g *Graph) OutDegree(i int) int { return int(g.start[i+1] - g.start[i]) }

// InDegree is the number of edges entering node i.
func (g *Graph) InDegree(i int) int { return int(g.in[i]) }

// Role says how node i runs: a terminator is never sent to an agent; any
// other node with two or more outgoing edges is a decision, unless it is a
// fork (custom data parallel: true), whose lines all run at once; the rest
// are processes (readme/charts.md#roles-how-a-node-runs).
func (g *Graph) Role(i int) string {
	switch {
	case g.Doc.Nodes[i].Kind == types.KindTerminator:
		return types.RoleTerminator
	case g.OutDegree(i) >= 2 && !types.IsFork(&g.Doc.Nodes[i]):
		return types.RoleDecision
	}
	return types.RoleProcess
}

// successors calls f for each node index that an edge from i leads to.
func (g *Graph) successors(i int, f func(int)) {
	for _, e := range g.out(i) {
		f(int(g.to[e]))
	}
}

// Successors calls f with the index of each node an edge from i leads to
// and the index of that edge in Doc.Edges, in chart order.
func (g *Graph) Successors(i int, f func(to, edge int)) {
	for _, e := range g.out(i) {
		f(int(g.to[e]), int(e))
	}
}

// Reachable marks the nodes reachable from node root.
func (g *Graph) Reachable(root int) []bool {
	return g.ReachableUntil(root, nil)
}

// ReachableUntil marks the nodes reachable from node root without leaving a
// node for which stop is true (such as an end terminator, where a run
// stops). A nil stop follows every edge.
func (g *Graph) ReachableUntil(root int, stop func(i int) bool) []bool {
	seen := make([]bool, len(g.Doc.Nodes))
	stack := []int{root}
	seen[root] = true
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if stop != nil && i != root && stop(i) {
			continue
		}
		g.successors(i, func(j int) {
			if !seen[j] {
				seen[j] = true
				stack = append(stack, j)
			}
		})
	}
	return seen
}

// TrappingLoops returns the loops with no way out: sets of nodes, each
// holding a cycle, that no edge leaves. A run that enters one can only end at
// the visit limit. Each set lists node indexes in chart order.
func (g *Graph) TrappingLoops() [][]int {
	comp := g.components()
	n := len(g.Doc.Nodes)
	count := 0
	for _, c := range comp {
		count = max(count, c+1)
	}
	size := make([]int, count)
	leaves := make([]bool, count)
	selfLoop := make([]bool, count)
	for i := range n {
		size[comp[i]]++
		g.successors(i, func(j int) {
			if comp[j] != comp[i] {
				leaves[comp[i]] = true
			} else if j == i {
				selfLoop[comp[i]] = true
			}
		})
	}
	members := make([][]int, count)
	for i := range n {
		c := comp[i]
		if !leaves[c] && (size[c] > 1 || selfLoop[c]) {
			members[c] = append(members[c], i)
		}
	}
	var loops [][]int
	seen := make([]bool, count)
	for i := range n {
		if c := comp[i]; members[c] != nil && !seen[c] {
			seen[c] = true
			loops = append(loops, members[c])
		}
	}
	return loops
}

// components labels each node with its strongly connected component
// (Tarjan's algorithm, iterative so that a 100,000-node chain does not
// recurse 100,000 deep).
func (g *Graph) components() []int {
	n := len(g.Doc.Nodes)
	index := make([]int, n)
	low := make([]int, n)
	comp := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	stack := make([]int, 0, n)
	type frame struct{ node, next int }
	next, ncomp := 0, 0
	call := make([]frame, 0, 64)
	for start := range n {
		if index[start] >= 0 {
			continue
		}
		call = append(call[:0], frame{start, 0})
		index[start], low[start] = next, next
		next++
		stack = append(stack, start)
		onStack[start] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.node
			if out := g.out(v); f.next < len(out) {
				w := int(g.to[out[f.next]])
				f.next++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].node
				low[p] = min(low[p], low[v])
			}
		}
	}
	return comp
}
