package graph_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/types"
)

// chart builds a one-page document. nodes is a space-separated list of ids,
// each optionally ":t" (terminator) or ":d" (Decision shape); edges are
// "from->to" or "from->to:Label", ids e1, e2, … in the order given.
func chart(t testing.TB, nodes string, edges ...string) *types.Document {
	t.Helper()
	doc := &types.Document{Pages: []types.Page{{ID: "p", Title: "Page 1"}}}
	for _, spec := range strings.Fields(nodes) {
		id, k, _ := strings.Cut(spec, ":")
		kind, shape := types.KindProcess, "Process"
		switch k {
		case "t":
			kind, shape = types.KindTerminator, "Terminator"
		case "d":
			kind, shape = types.KindDecision, "Decision"
		case "":
		default:
			require.FailNow(t, "bad node spec", spec)
		}
		doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: "p", Kind: kind, Shape: shape, Text: "step " + id})
	}
	for i, spec := range edges {
		ends, label, _ := strings.Cut(spec, ":")
		from, to, ok := strings.Cut(ends, "->")
		require.True(t, ok, "bad edge spec %q", spec)
		doc.Edges = append(doc.Edges, types.Edge{ID: "e" + strconv.Itoa(i+1), Page: "p", From: from, To: to, Label: label})
	}
	return doc
}

// index returns node id's index, failing the test if it has none.
func index(t *testing.T, g *graph.Graph, id string) int {
	t.Helper()
	i, ok := g.Index(id)
	require.True(t, ok, "node %s not indexed", id)
	return i
}

// loopIDs turns TrappingLoops' indexes into ids.
func loopIDs(g *graph.Graph) [][]string {
	out := [][]string{}
	for _, loop := range g.TrappingLoops() {
		ids := []string{}
		for _, i := range loop {
			ids = append(ids, g.Doc.Nodes[i].ID)
		}
		out = append(out, ids)
	}
	return out
}

func TestIndexAndNode(t *testing.T) {
	t.Parallel()
	doc := chart(t, "start:t 42 review node-x")
	g := graph.New(doc)
	tests := []struct {
		id     string
		want   int
		wantOK bool
	}{
		{id: "start", want: 0, wantOK: true},
		{id: "42", want: 1, wantOK: true},
		{id: "review", want: 2, wantOK: true},
		{id: "node-x", want: 3, wantOK: true},
		{id: "missing"},
		{id: ""},
		{id: "042"},
		{id: "Review"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			i, ok := g.Index(tt.id)
			assert.Equal(t, tt.wantOK, ok)
			n, nok := g.Node(tt.id)
			assert.Equal(t, tt.wantOK, nok)
			if !tt.wantOK {
				assert.Nil(t, n)
				return
			}
			assert.Equal(t, tt.want, i)
			require.NotNil(t, n)
			assert.Equal(t, tt.id, n.ID)
			assert.Same(t, &doc.Nodes[i], n, "Node points into the document")
		})
	}
}

func TestOutInChartOrder(t *testing.T) {
	t.Parallel()
	// The edges of q are interleaved with others and listed out of id order;
	// Out must keep the order they have in the chart.
	doc := chart(t, "s:t q a b c",
		"q->c:Third? no, first",
		"s->q",
		"q->a:Second",
		"a->b",
		"q->b:Last",
		"q->ghost:dangling", // an edge to no node is not an edge of the graph
		"b->b",
	)
	g := graph.New(doc)
	tests := []struct {
		id     string
		labels []string
		to     []string
		in     int
	}{
		{id: "s", labels: []string{""}, to: []string{"q"}, in: 0},
		{id: "q", labels: []string{"Third? no, first", "Second", "Last"}, to: []string{"c", "a", "b"}, in: 1},
		{id: "a", labels: []string{""}, to: []string{"b"}, in: 1},
		{id: "b", labels: []string{""}, to: []string{"b"}, in: 3}, // a->b, q->b and its self-loop
		{id: "c", labels: []string{}, to: []string{}, in: 1},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			i := index(t, g, tt.id)
			out := g.Out(i)
			labels, to := []string{}, []string{}
			for _, e := range out {
				assert.Equal(t, tt.id, e.From)
				labels = append(labels, e.Label)
				to = append(to, e.To)
			}
			assert.Equal(t, tt.labels, labels)
			assert.Equal(t, tt.to, to)
			assert.Equal(t, len(tt.to), g.OutDegree(i))
			assert.Equal(t, tt.in, g.InDegree(i))
		})
	}
}

func TestRole(t *testing.T) {
	t.Parallel()
	doc := chart(t, "start:t end:t branchy:t p1 p2 fork d1:d d2:d d0:d leaf",
		"start->p1",
		"p1->p2",
		"p2->end",
		"branchy->p1:a", "branchy->p2:b",
		"fork->p1:Yes", "fork->p2:No",
		"d1->leaf",
		"d2->p1:Yes", "d2->p2:No",
	)
	g := graph.New(doc)
	tests := []struct{ id, want string }{
		{id: "start", want: types.RoleTerminator},
		{id: "end", want: types.RoleTerminator},
		{id: "branchy", want: types.RoleTerminator}, // never a decision, whatever its lines
		{id: "p1", want: types.RoleProcess},
		{id: "fork", want: types.RoleDecision}, // a Process shape with two lines decides
		{id: "d1", want: types.RoleProcess},    // a Decision shape with one line does not
		{id: "d2", want: types.RoleDecision},
		{id: "d0", want: types.RoleProcess},
		{id: "leaf", want: types.RoleProcess},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, g.Role(index(t, g, tt.id)))
		})
	}
}

func TestReachable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes string
		edges []string
		root  string
		want  []string // reachable ids
	}{
		{name: "single node", nodes: "a", root: "a", want: []string{"a"}},
		{name: "chain", nodes: "a b c", edges: []string{"a->b", "b->c"}, root: "a", want: []string{"a", "b", "c"}},
		{name: "from the middle", nodes: "a b c", edges: []string{"a->b", "b->c"}, root: "b", want: []string{"b", "c"}},
		{name: "branches merge", nodes: "s q x y m", edges: []string{"s->q", "q->x:1", "q->y:2", "x->m", "y->m"}, root: "s",
			want: []string{"s", "q", "x", "y", "m"}},
		{name: "loop back", nodes: "s a b", edges: []string{"s->a", "a->b", "b->a"}, root: "s", want: []string{"s", "a", "b"}},
		{name: "island", nodes: "s a x y", edges: []string{"s->a", "x->y", "y->x"}, root: "s", want: []string{"s", "a"}},
		{name: "edges point one way", nodes: "a b c", edges: []string{"b->a", "c->b"}, root: "a", want: []string{"a"}},
		{name: "edge to no node", nodes: "a b", edges: []string{"a->zz", "zz->b"}, root: "a", want: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := graph.New(chart(t, tt.nodes, tt.edges...))
			seen := g.Reachable(index(t, g, tt.root))
			require.Len(t, seen, len(g.Doc.Nodes))
			got := []string{}
			for i, ok := range seen {
				if ok {
					got = append(got, g.Doc.Nodes[i].ID)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTrappingLoops(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes string
		edges []string
		want  [][]string
	}{
		{name: "no edges", nodes: "a", want: [][]string{}},
		{name: "chain", nodes: "a b c", edges: []string{"a->b", "b->c"}, want: [][]string{}},
		{name: "diamond", nodes: "a b c d", edges: []string{"a->b:x", "a->c:y", "b->d", "c->d"}, want: [][]string{}},
		{name: "self-loop only", nodes: "s a", edges: []string{"s->a", "a->a"}, want: [][]string{{"a"}}},
		{name: "self-loop with an exit", nodes: "s a e", edges: []string{"s->a", "a->a:again", "a->e:done"}, want: [][]string{}},
		{name: "two-node loop", nodes: "s a b", edges: []string{"s->a", "a->b", "b->a"}, want: [][]string{{"a", "b"}}},
		{name: "loop with an exit", nodes: "s a b e", edges: []string{"s->a", "a->b", "b->a:No", "b->e:Yes"}, want: [][]string{}},
		{name: "exit from the first node of the loop", nodes: "s a b e", edges: []string{"s->a", "a->b:go", "a->e:stop", "b->a"}, want: [][]string{}},
		{name: "listed in chart order", nodes: "c s b a", edges: []string{"s->a", "a->b", "b->c", "c->a"}, want: [][]string{{"c", "b", "a"}}},
		{name: "inner loop without exit", nodes: "s a b c", edges: []string{"s->a", "a->b", "b->c", "c->b"}, want: [][]string{{"b", "c"}}},
		{name: "loop that can reach a trap has an exit", nodes: "s a b c", edges: []string{"s->a", "a->b", "b->a:back", "b->c:on", "c->c"},
			want: [][]string{{"c"}}},
		{name: "two traps", nodes: "s q a b c", edges: []string{"s->q", "q->a:x", "q->b:y", "a->a", "b->c", "c->b"},
			want: [][]string{{"a"}, {"b", "c"}}},
		{name: "trap nobody reaches", nodes: "s e x y", edges: []string{"s->e", "x->y", "y->x"}, want: [][]string{{"x", "y"}}},
		{name: "figure eight", nodes: "s a b c", edges: []string{"s->a", "a->b:1", "b->a", "a->c:2", "c->a"}, want: [][]string{{"a", "b", "c"}}},
		{name: "exit only to a missing node", nodes: "s a b", edges: []string{"s->a", "a->b", "b->a:No", "b->zz:Yes"}, want: [][]string{{"a", "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := graph.New(chart(t, tt.nodes, tt.edges...))
			assert.Equal(t, tt.want, loopIDs(g))
		})
	}
}

// chain builds a → b → … over n nodes with Lucid-like numeric ids, closed
// into a loop when closed is set.
func chain(n int, closed bool) *types.Document {
	doc := &types.Document{Pages: []types.Page{{ID: "p", Root: "1"}}}
	doc.Nodes = make([]types.Node, n)
	for i := range n {
		doc.Nodes[i] = types.Node{ID: strconv.Itoa(i + 1), Page: "p", Kind: types.KindProcess}
	}
	for i := 1; i < n; i++ {
		doc.Edges = append(doc.Edges, types.Edge{From: strconv.Itoa(i), To: strconv.Itoa(i + 1), Page: "p"})
	}
	if closed {
		doc.Edges = append(doc.Edges, types.Edge{From: strconv.Itoa(n), To: "1", Page: "p"})
	}
	return doc
}

// A 100,000-node chart must not overflow the stack or report a loop where
// there is none; closed into one big loop, all of it is the trap.
func TestLongChain(t *testing.T) {
	t.Parallel()
	const n = 100_000
	tests := []struct {
		name   string
		closed bool
		want   int // nodes in the one trap, 0 for none
	}{
		{name: "open", closed: false},
		{name: "closed", closed: true, want: n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := graph.New(chain(n, tt.closed))
			loops := g.TrappingLoops()
			if tt.want == 0 {
				assert.Empty(t, loops)
			} else {
				require.Len(t, loops, 1)
				assert.Len(t, loops[0], tt.want)
			}
			seen := g.Reachable(0)
			last := index(t, g, strconv.Itoa(n))
			assert.True(t, seen[last], "the end of the chain is reachable from its start")
		})
	}
}

func BenchmarkTrappingLoops(b *testing.B) {
	g := graph.New(chain(100_000, false))
	b.ReportAllocs()
	for b.Loop() {
		if loops := g.TrappingLoops(); len(loops) != 0 {
			b.Fatalf("a chain has no loop, got %d", len(loops))
		}
	}
}
