package lint_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/internal/lint"
	"github.com/dtree-dev/dtree/types"
)

// mark sets custom data on the nodes of doc: "id key=value" each.
func mark(t *testing.T, doc *types.Document, marks ...string) {
	t.Helper()
	for _, m := range marks {
		id, kv, _ := strings.Cut(m, " ")
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, "bad mark %q", m)
		found := false
		for i := range doc.Nodes {
			if doc.Nodes[i].ID == id {
				if doc.Nodes[i].Metadata == nil {
					doc.Nodes[i].Metadata = types.Metadata{}
				}
				doc.Nodes[i].Metadata[k] = v
				found = true
			}
		}
		require.True(t, found, "no node %s", id)
	}
}

// ipdoms writes each node's immediate post-dominator as "id>pdom", "exit"
// for the virtual exit and "-" for none.
func ipdoms(doc *types.Document, pd []int32) string {
	var out []string
	for i, p := range pd {
		name := "-"
		switch {
		case int(p) == len(doc.Nodes):
			name = "exit"
		case p >= 0:
			name = doc.Nodes[p].ID
		}
		out = append(out, doc.Nodes[i].ID+">"+name)
	}
	return strings.Join(out, " ")
}

func TestPostDominators(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes string
		edges []string
		want  string
	}{
		{"chain", "s:t a b e:t", []string{"s->a", "a->b", "b->e"}, "s>a a>b b>e e>exit"},
		{"diamond meets at the join", "s:t f a b j e:t", []string{"s->f", "f->a", "f->b", "a->j", "b->j", "j->e"},
			"s>f f>j a>j b>j j>e e>exit"},
		{"two ends meet only at the exit", "f a b e1:t e2:t", []string{"f->a", "f->b", "a->e1", "b->e2"},
			"f>exit a>e1 b>e2 e1>exit e2>exit"},
		{"a node with no line out is an end", "f a b", []string{"f->a", "f->b"}, "f>exit a>exit b>exit"},
		{"a loop inside a branch", "f a a2 b j", []string{"f->a", "f->b", "a->a2", "a2->a", "a2->j", "b->j"},
			"f>j a>a2 a2>j b>j j>exit"},
		{"a loop with no way out has none", "s a b", []string{"s->a", "a->b", "b->a"}, "s>- a>- b>-"},
		{"an end's lines are not followed", "s:t f e:t x", []string{"s->f", "f->e", "e->x"}, "s>f f>e e>exit x>exit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := chart(t, tt.nodes, tt.edges...)
			g := graph.New(doc)
			roots := map[string]bool{}
			for _, p := range doc.Pages {
				roots[p.Root] = true
			}
			end := func(i int) bool {
				n := &doc.Nodes[i]
				return g.OutDegree(i) == 0 || (n.Kind == types.KindTerminator && !roots[n.ID] && g.InDegree(i) > 0)
			}
			assert.Equal(t, tt.want, ipdoms(doc, lint.PostDominators(g, end)))
		})
	}
}

func TestForks(t *testing.T) {
	t.Parallel()
	const good = "s:t f a b j e:t"
	goodEdges := []string{"s->f", "f->a", "f->b", "a->j", "b->j", "j->e"}
	tests := []struct {
		name   string
		nodes  string
		edges  []string
		marks  []string
		errs   []string
		warns  []string
		forks  string // "fork>join[mode]:branch=first,…" each, space separated
		substr string // in the first finding's message
	}{
		{name: "a fork and its join", nodes: good, edges: goodEdges, marks: []string{"f parallel=true"},
			forks: "f>j[all]:a=a,b=b"},
		{name: "labels name the branches, join any", nodes: good,
			edges: []string{"s->f", "f->a:tests", "f->b:docs", "a->j", "b->j", "j->e"}, marks: []string{"f Parallel=yes", "j join=Any"},
			forks: "f>j[any]:tests=a,docs=b"},
		{name: "the start forks", nodes: "s:t a b j e:t", edges: []string{"s->a", "s->b", "a->j", "b->j", "j->e"},
			marks: []string{"s parallel=true"}, forks: "s>j[all]:a=a,b=b"},
		{name: "a branch of several steps, with a loop inside it", nodes: "s:t f a a2 a3 b j e:t",
			edges: []string{"s->f", "f->a", "f->b", "a->a2", "a2->a3", "a3->a:Again", "a3->j:Done", "b->j", "j->e"},
			marks: []string{"f parallel=true"}, forks: "f>j[all]:a=a,b=b"},
		{name: "a loop from after the join to before the fork", nodes: "s:t p f a b j e:t",
			edges: []string{"s->p", "p->f", "f->a", "f->b", "a->j", "b->j", "j->p:Again", "j->e:Done"},
			marks: []string{"f parallel=true"}, forks: "f>j[all]:a=a,b=b"},
		{name: "nested forks", nodes: "s:t f a a1 a2 aj b j e:t",
			edges: []string{"s->f", "f->a", "f->b", "a->a1", "a->a2", "a1->aj", "a2->aj", "aj->j", "b->j", "j->e"},
			marks: []string{"f parallel=true", "a parallel=true"}, forks: "f>j[all]:a=a,b=b a>aj[all]:a1=a1,a2=a2"},
		{name: "a branch straight to the join", nodes: "s:t f a j e:t",
			edges: []string{"s->f", "f->a", "f->j", "a->j", "j->e"}, marks: []string{"f parallel=true"}, forks: "f>j[all]:a=a,j=j"},
		{name: "branches that end apart", nodes: "s:t f a b e1:t e2:t",
			edges: []string{"s->f", "f->a", "f->b", "a->e1", "b->e2"}, marks: []string{"f parallel=true"},
			errs: []string{"fork_without_join f,e2,e1,e3,e2@p1"}, forks: "f>:a=a,b=b",
			substr: `branch "a" can end at e1 "step e1"; branch "b" can end at e2 "step e2"`},
		{name: "one branch can leave before the others meet", nodes: "s:t f a b c j e:t x:t",
			edges: []string{"s->f", "f->a", "f->b", "f->c", "a->j", "b->j", "c->j:Yes", "c->x:No", "j->e"},
			marks: []string{"f parallel=true"}, errs: []string{"fork_without_join f,e4,x@p1"}, forks: "f>:a=a,b=b,c=c",
			substr: `never meet at j "step j", where other branches meet: branch "c" can end at x "step x" without reaching j`},
		{name: "branches share a step", nodes: "s:t f a b m j e:t",
			edges: []string{"s->f", "f->a", "f->b", "a->m", "b->m", "m->j", "a->j:Skip", "b->j:Skip"}, marks: []string{"f parallel=true"},
			errs: []string{"fork_shared_step f,m,e5@p1"}, forks: "f>j[all]:a=a,b=b",
			substr: `m "step m" is in two branches of fork f "step f", "a" and "b", before they meet at the join j`},
		{name: "a line from one branch to another", nodes: "s:t f a b j e:t",
			edges: []string{"s->f", "f->a", "f->b", "a->b:Help", "a->j:Done", "b->j", "j->e"}, marks: []string{"f parallel=true"},
			errs: []string{"fork_shared_step f,b,e4@p1"}, forks: "f>j[all]:a=a,b=b"},
		{name: "a loop back to the fork", nodes: "s:t f a a2 b j e:t",
			edges: []string{"s->f", "f->a", "f->b", "a->a2", "a2->f:Again", "a2->j:Done", "b->j", "j->e"}, marks: []string{"f parallel=true"},
			errs: []string{"fork_loop f,e5,a2@p1"}, forks: "f>j[all]:a=a,b=b",
			substr: `branch "a" of fork f "step f" leads back to the fork before the join j "step j" (a → a2 → f, line e5)`},
		{name: "a loop to before the fork", nodes: "s:t p f a b j e:t",
			edges: []string{"s->p", "p->f", "f->a", "f->b", "a->p:Again", "a->j:Done", "b->j", "j->e"}, marks: []string{"f parallel=true"},
			errs: []string{"fork_loop f,e2,p@p1"}, forks: "f>j[all]:a=a,b=b", substr: "(a → p → f, line e2)"},
		{name: "a join marked after where the branches meet", nodes: "s:t f a b m j e:t",
			edges: []string{"s->f", "f->a", "f->b", "a->m", "b->m", "m->j", "j->e"}, marks: []string{"f parallel=true", "j join=all"},
			errs: []string{"fork_shared_step f,m,j@p1"}, forks: "f>m[all]:a=a,b=b",
			substr: `meet at m "step m" before j "step j", which is marked join:`},
		{name: "nested forks, the outer join marked", nodes: "s:t f a a1 a2 aj b j e:t",
			edges: []string{"s->f", "f->a", "f->b", "a->a1", "a->a2", "a1->aj", "a2->aj", "aj->j", "b->j", "j->e"},
			marks: []string{"f parallel=true", "a parallel=true", "j join=any"}, forks: "f>j[any]:a=a,b=b a>aj[all]:a1=a1,a2=a2"},
		{name: "a fork's line to itself", nodes: "s:t f a e:t", edges: []string{"s->f", "f->f:x", "f->a", "a->e"},
			marks: []string{"f parallel=true"}, errs: []string{"fork_loop f,e2,f@p1"}, forks: "f>a[all]:x=f,a=a", substr: "(f → f, line e2)"},
		{name: "a decision marked parallel", nodes: "s:t f:d a b j e:t",
			edges: []string{"s->f", "f->a:Yes", "f->b:No", "a->j", "b->j", "j->e"}, marks: []string{"f parallel=true"},
			errs: []string{"parallel_decision f@p1"}},
		{name: "a fork of one line", nodes: "s:t f a e:t", edges: []string{"s->f", "f->a", "a->e"}, marks: []string{"f parallel=true"},
			errs: []string{"fork_one_line f@p1"}, substr: "has 1 outgoing line;"},
		{name: "two branches of one name", nodes: good,
			edges: []string{"s->f", "f->a:Work", "f->b:work", "a->j", "b->j", "j->e"}, marks: []string{"f parallel=true"},
			errs: []string{"fork_branch_name f,e2,e3@p1"}, forks: "f>j[all]:Work=a,work=b"},
		{name: "a label like another branch's first step", nodes: good,
			edges: []string{"s->f", "f->a", "f->b:a", "a->j", "b->j", "j->e"}, marks: []string{"f parallel=true"},
			errs: []string{"fork_branch_name f,e2,e3@p1"}, forks: "f>j[all]:a=a,a=b"},
		{name: "two forks' branches of one id", nodes: "s:t a a/b x p q aj j e:t",
			edges: []string{"s->a", "a->a/b:b/x", "a->p", "a/b->x", "a/b->q", "x->aj", "q->aj", "aj->j", "p->j", "j->e"},
			marks: []string{"a parallel=true", "a/b parallel=true"},
			warns: []string{"fork_branch_id a/b,e4,a,e2@p1"}, forks: "a>j[all]:b/x=a/b,p=p a/b>aj[all]:x=x,q=q",
			substr: `branch "x" of fork a/b and branch "b/x" of fork a share the id "a/b/x"`},
		{name: "join on no fork's join", nodes: good, edges: goodEdges, marks: []string{"f parallel=true", "a join=all"},
			warns: []string{"join_without_fork a@p1"}, forks: "f>j[all]:a=a,b=b"},
		{name: "join on a chart without a fork", nodes: "s:t a e:t", edges: []string{"s->a", "a->e"}, marks: []string{"a join=any"},
			warns: []string{"join_without_fork a@p1"}},
		{name: "bad values", nodes: good, edges: goodEdges, marks: []string{"f parallel=maybe", "j join=some"},
			errs: []string{"bad_metadata f@p1", "bad_metadata j@p1"}},
		{name: "parallel false is no fork", nodes: "s:t f a e:t", edges: []string{"s->f", "f->a", "a->e"}, marks: []string{"f parallel=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := chart(t, tt.nodes, tt.edges...)
			mark(t, doc, tt.marks...)
			res := lint.Forks(graph.New(doc))
			want := func(l []string) []string {
				if l == nil {
					return []string{}
				}
				return l
			}
			assert.Equal(t, want(tt.errs), summary(res.Errors))
			assert.Equal(t, want(tt.warns), summary(res.Warnings))
			var forks []string
			for i, n := range doc.Nodes {
				f := res.Forks[i]
				if f == nil {
					continue
				}
				var bs []string
				for _, b := range f.Branches {
					bs = append(bs, b.Name+"="+b.First)
				}
				mode := ""
				if f.Join != "" {
					j, _ := graph.New(doc).Index(f.Join)
					mode = "[" + res.Joins[j] + "]"
				}
				forks = append(forks, n.ID+">"+f.Join+mode+":"+strings.Join(bs, ","))
			}
			assert.Equal(t, tt.forks, strings.Join(forks, " "))
			if tt.substr != "" {
				all := append(res.Errors, res.Warnings...)
				require.NotEmpty(t, all)
				assert.Contains(t, all[0].Message, tt.substr)
			}
		})
	}
}

// TestForksHuge holds the fork checks linear: a chain of 100,000 steps
// into a fork of two branches of 50,000 steps each, and a fork of 20,000
// branches, each checked well within a second's work.
func TestForksHuge(t *testing.T) {
	t.Parallel()
	build := func(chain, branches, length int) *types.Document {
		doc := &types.Document{Pages: []types.Page{{ID: "p", Root: "s"}}}
		add := func(id string, kind string) {
			doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: "p", Kind: kind})
		}
		edge := func(from, to string) {
			doc.Edges = append(doc.Edges, types.Edge{ID: "e" + strconv.Itoa(len(doc.Edges)), Page: "p", From: from, To: to})
		}
		add("s", types.KindTerminator)
		prev := "s"
		for i := range chain {
			id := "c" + strconv.Itoa(i)
			add(id, types.KindProcess)
			edge(prev, id)
			prev = id
		}
		add("f", types.KindProcess)
		doc.Nodes[len(doc.Nodes)-1].Metadata = types.Metadata{"parallel": "true"}
		edge(prev, "f")
		var lasts []string
		for b := range branches {
			prev := "f"
			for k := range length {
				id := fmt.Sprintf("b%d_%d", b, k)
				add(id, types.KindProcess)
				edge(prev, id)
				prev = id
			}
			lasts = append(lasts, prev)
		}
		add("j", types.KindProcess)
		for _, l := range lasts {
			edge(l, "j")
		}
		add("e", types.KindTerminator)
		edge("j", "e")
		return doc
	}
	for _, c := range []struct{ chain, branches, length int }{{100_000, 2, 50_000}, {1000, 20_000, 2}} {
		doc := build(c.chain, c.branches, c.length)
		g := graph.New(doc)
		began := time.Now()
		res := lint.Forks(g)
		took := time.Since(began)
		require.Empty(t, res.Errors)
		fi, _ := g.Index("f")
		require.NotNil(t, res.Forks[fi])
		assert.Equal(t, "j", res.Forks[fi].Join)
		assert.Len(t, res.Forks[fi].Branches, c.branches)
		t.Logf("%d nodes: %v", len(doc.Nodes), took)
		// Quadratic work on 200,000 nodes would take minutes; this is a
		// bound a shared machine under -race meets.
		assert.Less(t, took, 10*time.Second)
	}
}

// TestPostDominatorsAgainstBruteForce checks the post-dominators of
// random small graphs against their definition: p is on every way from v
// to an end, and each other such node is on every way from p.
func TestPostDominatorsAgainstBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 1))
	for round := range 2000 {
		n := 2 + rng.IntN(8)
		doc := &types.Document{Pages: []types.Page{{ID: "p", Root: "n0"}}}
		for i := range n {
			doc.Nodes = append(doc.Nodes, types.Node{ID: fmt.Sprint("n", i), Page: "p", Kind: types.KindProcess})
		}
		for range rng.IntN(2 * n) {
			a, b := rng.IntN(n), rng.IntN(n)
			doc.Edges = append(doc.Edges, types.Edge{ID: fmt.Sprint("e", len(doc.Edges)), Page: "p",
				From: doc.Nodes[a].ID, To: doc.Nodes[b].ID})
		}
		g := graph.New(doc)
		end := func(i int) bool { return g.OutDegree(i) == 0 }
		pd := lint.PostDominators(g, end)
		// reaches says whether an end can be reached from v without
		// entering node skip (-1: none).
		reaches := func(v, skip int) bool {
			seen := make([]bool, n)
			stack := []int{v}
			seen[v] = true
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if end(x) {
					return true
				}
				g.Successors(x, func(to, _ int) {
					if to != skip && !seen[to] {
						seen[to] = true
						stack = append(stack, to)
					}
				})
			}
			return false
		}
		pdoms := func(v int) []int {
			var out []int
			for p := range n {
				if p != v && !reaches(v, p) {
					out = append(out, p)
				}
			}
			return out
		}
		for v := range n {
			got := int(pd[v])
			switch {
			case !reaches(v, -1):
				require.Equal(t, -1, got, "round %d: %s reaches no end: %+v", round, doc.Nodes[v].ID, doc.Edges)
			case len(pdoms(v)) == 0:
				require.Equal(t, n, got, "round %d: %s has only the exit: %+v", round, doc.Nodes[v].ID, doc.Edges)
			default:
				set := pdoms(v)
				require.Contains(t, set, got, "round %d: ipdom of %s: %+v", round, doc.Nodes[v].ID, doc.Edges)
				for _, q := range set {
					if q != got {
						require.False(t, reaches(got, q), "round %d: %s's ipdom %s is not under %s: %+v",
							round, doc.Nodes[v].ID, doc.Nodes[got].ID, doc.Nodes[q].ID, doc.Edges)
					}
				}
			}
		}
		// And the fork checks take any marks without a panic.
		for i := range doc.Nodes {
			if rng.IntN(3) == 0 {
				doc.Nodes[i].Metadata = types.Metadata{"parallel": "true"}
			}
			if rng.IntN(4) == 0 {
				if doc.Nodes[i].Metadata == nil {
					doc.Nodes[i].Metadata = types.Metadata{}
				}
				doc.Nodes[i].Metadata["join"] = "any"
			}
		}
		lint.Forks(graph.New(doc))
	}
}

// TestForksNestedDeepIsLinear: forks nested 20,000 deep, each the second
// branch of the one before, each join after the next one's: every fork's
// branches are walked once, not once per fork around them.
func TestForksNestedDeepIsLinear(t *testing.T) {
	t.Parallel()
	const depth = 20_000
	doc := &types.Document{Pages: []types.Page{{ID: "p", Root: "s"}}}
	add := func(id string, meta types.Metadata) {
		doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: "p", Kind: types.KindProcess, Metadata: meta})
	}
	edge := func(from, to string) {
		doc.Edges = append(doc.Edges, types.Edge{ID: "e" + strconv.Itoa(len(doc.Edges)), Page: "p", From: from, To: to})
	}
	doc.Nodes = append(doc.Nodes, types.Node{ID: "s", Page: "p", Kind: types.KindTerminator})
	edge("s", "f0")
	for i := range depth {
		f, x, j := fmt.Sprint("f", i), fmt.Sprint("x", i), fmt.Sprint("j", i)
		add(f, types.Metadata{"parallel": "true"})
		add(x, nil)
		add(j, nil)
		edge(f, x)
		edge(x, j)
		if i < depth-1 {
			edge(f, fmt.Sprint("f", i+1))
			edge(fmt.Sprint("j", i+1), j)
		} else {
			add("y", nil)
			edge(f, "y")
			edge("y", j)
		}
	}
	doc.Nodes = append(doc.Nodes, types.Node{ID: "e", Page: "p", Kind: types.KindTerminator})
	edge("j0", "e")
	g := graph.New(doc)
	began := time.Now()
	res := lint.Forks(g)
	took := time.Since(began)
	require.Empty(t, res.Errors)
	require.Len(t, res.Forks, depth)
	for _, k := range []int{0, depth / 2, depth - 1} {
		fi, _ := g.Index(fmt.Sprint("f", k))
		assert.Equal(t, fmt.Sprint("j", k), res.Forks[fi].Join)
	}
	t.Logf("%d nested forks, %d nodes: %v", depth, len(doc.Nodes), took)
	assert.Less(t, took, 10*time.Second)
}

// TestForksWithoutJoinAreBounded: 2,000 forks whose branches never meet,
// one branch of each running down one chain of 50,000 steps: each is
// reported, and what the findings cost is bounded by the chart's size,
// not by the forks times the chain.
func TestForksWithoutJoinAreBounded(t *testing.T) {
	t.Parallel()
	const forks, chain = 2000, 50_000
	doc := &types.Document{Pages: []types.Page{{ID: "p", Root: "s"}}}
	add := func(id, kind string, meta types.Metadata) {
		doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: "p", Kind: kind, Metadata: meta})
	}
	edge := func(from, to string) {
		doc.Edges = append(doc.Edges, types.Edge{ID: "e" + strconv.Itoa(len(doc.Edges)), Page: "p", From: from, To: to})
	}
	for i := range chain {
		add(fmt.Sprint("c", i), types.KindProcess, nil)
		if i > 0 {
			edge(fmt.Sprint("c", i-1), fmt.Sprint("c", i))
		}
	}
	add("end", types.KindTerminator, nil)
	edge(fmt.Sprint("c", chain-1), "end")
	for i := range forks {
		f, a, b := fmt.Sprint("f", i), fmt.Sprint("a", i), fmt.Sprint("b", i)
		add(f, types.KindProcess, types.Metadata{"parallel": "true"})
		add(a, types.KindProcess, nil)
		add(b, types.KindProcess, nil)
		edge(f, a)
		edge(f, b)
		edge(a, "c0")
	}
	g := graph.New(doc)
	began := time.Now()
	res := lint.Forks(g)
	took := time.Since(began)
	require.Len(t, res.Errors, forks)
	assert.Equal(t, "fork_without_join", res.Errors[0].Class)
	assert.Contains(t, res.Errors[0].Message, `branch "a0" can end at end; branch "b0" can end at b0`)
	t.Logf("%d forks without a join, %d nodes: %v", forks, len(doc.Nodes), took)
	assert.Less(t, took, 10*time.Second)
}

// TestPostDominatorsDeepTreeIsLinear: a chain of 100,000 steps, each also
// branching to an end of its own, under a fork: every step's
// post-dominator is the exit, and finding them does not walk the chain
// once per step (as an iterative algorithm's merges would).
func TestPostDominatorsDeepTreeIsLinear(t *testing.T) {
	t.Parallel()
	const n = 100_000
	doc := &types.Document{Pages: []types.Page{{ID: "p", Root: "f"}}}
	doc.Nodes = append(doc.Nodes, types.Node{ID: "f", Page: "p", Kind: types.KindProcess, Metadata: types.Metadata{"parallel": "true"}})
	edge := func(from, to string) {
		doc.Edges = append(doc.Edges, types.Edge{ID: "e" + strconv.Itoa(len(doc.Edges)), Page: "p", From: from, To: to})
	}
	edge("f", "c0")
	edge("f", "x")
	doc.Nodes = append(doc.Nodes, types.Node{ID: "x", Page: "p", Kind: types.KindProcess})
	for i := range n {
		c, e := fmt.Sprint("c", i), fmt.Sprint("e", i)
		doc.Nodes = append(doc.Nodes, types.Node{ID: c, Page: "p", Kind: types.KindProcess},
			types.Node{ID: e, Page: "p", Kind: types.KindTerminator})
		edge(c, e)
		if i+1 < n {
			edge(c, fmt.Sprint("c", i+1))
		}
	}
	g := graph.New(doc)
	began := time.Now()
	res := lint.Forks(g)
	took := time.Since(began)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "fork_without_join", res.Errors[0].Class)
	t.Logf("%d nodes: %v", len(doc.Nodes), took)
	assert.Less(t, took, 10*time.Second)
}
