package layout

import (
	"slices"
	"sort"
)

// layering is a layout in progress. Nodes 0..n-1 are the graph's; the
// ones after are dummies that long edges pass through.
type layering struct {
	g      Graph
	n      int
	size   []Size
	weight []float64 // how strongly a node keeps to its neighbours' x
	outE   [][]int   // the graph's edges leaving each node
	rev    []bool    // per edge: reversed to break a cycle
	self   []bool    // per edge: a loop on one node
	layer  []int
	chains [][]int // per edge, the nodes along it in layer order
	up     [][]int // per node, its neighbours one layer up
	down   [][]int // per node, its neighbours one layer down
	layers [][]int // the nodes of each layer, in order
	pos    []int   // each node's place in its layer
	x      []float64
}

func newLayering(g Graph) *layering {
	n := len(g.Nodes)
	l := &layering{g: g, n: n, size: slices.Clone(g.Nodes), outE: make([][]int, n),
		rev: make([]bool, len(g.Edges)), self: make([]bool, len(g.Edges))}
	for i, e := range g.Edges {
		if e.From == e.To {
			l.self[i] = true
			continue
		}
		l.outE[e.From] = append(l.outE[e.From], i)
	}
	return l
}

// breakCycles reverses the edges that close a cycle: those a depth-first
// search, started from the nodes nothing enters, finds leading back to a
// node still on its path.
func (l *layering) breakCycles() {
	indeg := make([]int, l.n)
	for i, e := range l.g.Edges {
		if !l.self[i] {
			indeg[e.To]++
		}
	}
	starts := make([]int, 0, l.n)
	for v := range l.n {
		if indeg[v] == 0 {
			starts = append(starts, v)
		}
	}
	for v := range l.n {
		if indeg[v] != 0 {
			starts = append(starts, v)
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, l.n)
	type frame struct{ v, next int }
	var stack []frame
	for _, s := range starts {
		if color[s] != white {
			continue
		}
		color[s] = grey
		stack = append(stack[:0], frame{s, 0})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(l.outE[f.v]) {
				color[f.v] = black
				stack = stack[:len(stack)-1]
				continue
			}
			i := l.outE[f.v][f.next]
			f.next++
			w := l.g.Edges[i].To
			switch color[w] {
			case grey:
				l.rev[i] = true
			case white:
				color[w] = grey
				stack = append(stack, frame{w, 0})
			}
		}
	}
}

// dagEdge returns edge i as the layering sees it, reversal applied.
func (l *layering) dagEdge(i int) (from, to int) {
	e := l.g.Edges[i]
	if l.rev[i] {
		return e.To, e.From
	}
	return e.From, e.To
}

// assignLayers puts each node one layer below its lowest predecessor.
func (l *layering) assignLayers() {
	succ := make([][]int, l.n)
	indeg := make([]int, l.n)
	for i := range l.g.Edges {
		if l.self[i] {
			continue
		}
		a, b := l.dagEdge(i)
		succ[a] = append(succ[a], b)
		indeg[b]++
	}
	l.layer = make([]int, l.n)
	queue := make([]int, 0, l.n)
	for v := range l.n {
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	for k := 0; k < len(queue); k++ {
		v := queue[k]
		for _, w := range succ[v] {
			l.layer[w] = max(l.layer[w], l.layer[v]+1)
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
}

// addDummies threads each edge through a dummy node in every layer it
// crosses, while the dummies stay within a budget; an edge past it is
// drawn straight.
func (l *layering) addDummies(o Options) {
	budget := 20*l.n + 1000
	l.weight = make([]float64, l.n, 2*l.n)
	for i := range l.weight {
		l.weight[i] = 1
	}
	l.chains = make([][]int, len(l.g.Edges))
	for i := range l.g.Edges {
		if l.self[i] {
			continue
		}
		a, b := l.dagEdge(i)
		chain := []int{a}
		if span := l.layer[b] - l.layer[a]; span > 1 && span-1 <= budget {
			budget -= span - 1
			for k := l.layer[a] + 1; k < l.layer[b]; k++ {
				d := len(l.size)
				l.size = append(l.size, Size{W: o.NodeGap / 2})
				l.layer = append(l.layer, k)
				l.weight = append(l.weight, 4)
				chain = append(chain, d)
			}
		}
		l.chains[i] = append(chain, b)
	}
	total := len(l.size)
	l.up, l.down = make([][]int, total), make([][]int, total)
	for _, c := range l.chains {
		for k := 0; k+1 < len(c); k++ {
			a, b := c[k], c[k+1]
			if l.layer[b] == l.layer[a]+1 {
				l.down[a] = append(l.down[a], b)
				l.up[b] = append(l.up[b], a)
			}
		}
	}
}

// order sets each layer's order: first as a depth-first search meets the
// nodes, then by barycenter sweeps, keeping the order with the fewest
// crossings.
func (l *layering) order(sweeps int) {
	total := len(l.size)
	depth := 0
	for _, k := range l.layer {
		depth = max(depth, k+1)
	}
	l.layers = make([][]int, depth)
	seen := make([]bool, total)
	var stack []int
	visit := func(s int) {
		stack = append(stack[:0], s)
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[v] {
				continue
			}
			seen[v] = true
			l.layers[l.layer[v]] = append(l.layers[l.layer[v]], v)
			for k := len(l.down[v]) - 1; k >= 0; k-- {
				if w := l.down[v][k]; !seen[w] {
					stack = append(stack, w)
				}
			}
		}
	}
	for v := range l.n {
		if len(l.up[v]) == 0 {
			visit(v)
		}
	}
	for v := range total {
		if !seen[v] {
			visit(v)
		}
	}
	l.pos = make([]int, total)
	l.setPos()
	best, bestCross := l.snapshot(), l.crossings()
	key := make([]float64, total)
	for s := 0; s < sweeps && bestCross > 0; s++ {
		for k := 1; k < depth; k++ {
			l.sortLayer(k, l.up, key)
		}
		for k := depth - 2; k >= 0; k-- {
			l.sortLayer(k, l.down, key)
		}
		if c := l.crossings(); c < bestCross {
			best, bestCross = l.snapshot(), c
		}
	}
	l.layers = best
	l.setPos()
}

func (l *layering) setPos() {
	for _, layer := range l.layers {
		for i, v := range layer {
			l.pos[v] = i
		}
	}
}

func (l *layering) snapshot() [][]int {
	out := make([][]int, len(l.layers))
	for k, layer := range l.layers {
		out[k] = slices.Clone(layer)
	}
	return out
}

// sortLayer orders layer k by the mean place of each node's neighbours in
// the adjacent layer (nbr); a node without any keeps its place.
func (l *layering) sortLayer(k int, nbr [][]int, key []float64) {
	layer := l.layers[k]
	for _, v := range layer {
		key[v] = float64(l.pos[v])
		if len(nbr[v]) > 0 {
			sum := 0
			for _, w := range nbr[v] {
				sum += l.pos[w]
			}
			key[v] = float64(sum) / float64(len(nbr[v]))
		}
	}
	sort.SliceStable(layer, func(i, j int) bool { return key[layer[i]] < key[layer[j]] })
	for i, v := range layer {
		l.pos[v] = i
	}
}

// crossings counts the pairs of edges that cross between adjacent layers
// (sorting the edges by upper end and counting inversions of the lower
// ends with a Fenwick tree).
func (l *layering) crossings() int {
	total := 0
	var ends []int
	for k := 0; k+1 < len(l.layers); k++ {
		ends = ends[:0]
		for _, v := range l.layers[k] {
			start := len(ends)
			for _, w := range l.down[v] {
				ends = append(ends, l.pos[w])
			}
			slices.Sort(ends[start:])
		}
		tree := make([]int, len(l.layers[k+1])+1)
		for i, p := range ends {
			// edges so far whose lower end is right of p cross this one
			below := 0
			for j := p + 1; j > 0; j -= j & -j {
				below += tree[j]
			}
			total += i - below
			for j := p + 1; j < len(tree); j += j & -j {
				tree[j]++
			}
		}
	}
	return total
}
