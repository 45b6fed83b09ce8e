package lint

import (
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/types"
)

// ForkResult is what Forks found out about a chart's forks
// (readme/parallel.md): each fork's join and branches, each join's mode,
// and what is wrong with them.
type ForkResult struct {
	// Forks maps the index of each fork node to what it is.
	Forks map[int]*types.Fork
	// Joins maps the index of each node where a fork's branches meet to
	// its mode, types.JoinAll or types.JoinAny.
	Joins    map[int]string
	Errors   []types.Diagnostic
	Warnings []types.Diagnostic
}

// maxPath bounds the nodes a finding names along a path.
const maxPath = 6

// Forks checks every fork of the chart: a node whose custom data says
// parallel: true runs all its lines at once, and they meet again at its
// join, the fork's immediate post-dominator (the first node every way from
// the fork to an end passes). It finds the join of every fork at once, in
// near-linear time, and walks each fork's branches once.
func Forks(g *graph.Graph) ForkResult {
	doc := g.Doc
	res := ForkResult{}
	var forks []int
	var joinKeys []int
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		if len(n.Metadata) == 0 {
			continue
		}
		if v, ok := types.MetadataValue(n, types.KeyParallel); ok {
			if b, ok := types.ParseBool(v); !ok {
				res.Errors = append(res.Errors, nodeDiag(n, "bad_metadata",
					"set parallel to true (the node's lines all run at once) or false",
					"node %s: parallel is %s, not true or false", n.ID, types.Quote(types.Excerpt(v, 40))))
			} else if b {
				forks = append(forks, i)
			}
		}
		if v, ok := types.MetadataValue(n, types.KeyJoin); ok {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case types.JoinAll, types.JoinAny:
				joinKeys = append(joinKeys, i)
			default:
				res.Errors = append(res.Errors, nodeDiag(n, "bad_metadata",
					"set join to all (wait for every branch) or any (go on when the first branch arrives)",
					"node %s: join is %s, not all or any", n.ID, types.Quote(types.Excerpt(v, 40))))
			}
		}
	}
	if len(forks) == 0 && len(joinKeys) == 0 {
		return res
	}
	roots := map[string]bool{}
	for _, p := range doc.Pages {
		roots[p.Root] = true
	}
	end := func(i int) bool { return g.OutDegree(i) == 0 || isEnd(g, i, roots) }
	ipdom := PostDominators(g, end)
	res.Forks = map[int]*types.Fork{}
	res.Joins = map[int]string{}
	w := &forkWalk{g: g, end: end, ipdom: ipdom, res: &res,
		owner: make([]int32, len(doc.Nodes)), stamp: make([]int32, len(doc.Nodes)), via: make([]int32, len(doc.Nodes))}
	for k, f := range forks {
		w.check(f, int32(k+1))
	}
	late := w.lateJoins(joinKeys)
	for _, i := range joinKeys {
		n := &doc.Nodes[i]
		if _, ok := res.Joins[i]; !ok && !late[i] {
			res.Warnings = append(res.Warnings, nodeDiag(n, "join_without_fork",
				"remove join: from the node, or draw a fork (a node with parallel: true) whose branches all meet here",
				"node %s has join: but no fork's branches meet there, so it is an ordinary step", n.Describe()))
		}
	}
	return res
}

func nodeDiag(n *types.Node, class, hint, format string, args ...any) types.Diagnostic {
	return types.Diagnostic{Class: class, ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
		Message: fmt.Sprintf(format, args...), Hint: hint}
}

// forkWalk holds what the checks of the forks share: the post-dominators
// and, reused from fork to fork, which branch each node was reached by.
type forkWalk struct {
	g     *graph.Graph
	end   func(i int) bool
	ipdom []int32
	res   *ForkResult
	// owner is the branch that reached each node, valid where stamp is the
	// current fork's number; via is the node it was reached from.
	owner, stamp, via []int32
}

// check checks fork f, the k-th.
func (w *forkWalk) check(f int, k int32) {
	g, doc := w.g, w.g.Doc
	n := &doc.Nodes[f]
	fail := func(class string, ids []string, hint, format string, args ...any) {
		w.res.Errors = append(w.res.Errors, types.Diagnostic{Class: class, ID: ids[0], IDs: ids, Page: n.Page, Line: n.Line,
			Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	if n.Kind == types.KindDecision {
		fail("parallel_decision", []string{n.ID},
			"a decision picks one way and a fork takes them all: remove parallel from the node, or draw it as a step (a Process) without branch labels",
			"%s is a decision and is marked parallel: a decision picks one of its ways, a fork runs them all at once", n.Describe())
		return
	}
	if g.OutDegree(f) < 2 {
		fail("fork_one_line", []string{n.ID},
			"draw a line to each step that should run at once (two or more), or remove parallel from the node",
			"%s is marked parallel but has %d outgoing %s; a fork starts two or more branches",
			n.Describe(), g.OutDegree(f), map[bool]string{true: "line", false: "lines"}[g.OutDegree(f) == 1])
		return
	}
	fork := &types.Fork{}
	var firsts, lines []int
	names := map[string]int{}
	g.Successors(f, func(to, e int) {
		edge := &doc.Edges[e]
		name := strings.TrimSpace(edge.Label)
		if name == "" {
			name = doc.Nodes[to].ID
		}
		if j, dup := names[strings.ToLower(name)]; dup {
			other := fork.Branches[j]
			fail("fork_branch_name", []string{n.ID, other.Line, edge.ID},
				"give each line of the fork a different label (or none: a branch is then named by its first step's id)",
				"fork %s has two branches named %s (lines %s and %s); each branch needs its own name", n.Describe(), types.Quote(name), other.Line, edge.ID)
		} else {
			names[strings.ToLower(name)] = len(fork.Branches)
		}
		fork.Branches = append(fork.Branches, types.ForkBranch{Name: name, Line: edge.ID, First: doc.Nodes[to].ID})
		firsts, lines = append(firsts, to), append(lines, e)
	})
	w.res.Forks[f] = fork
	join := w.ipdom[f]
	switch {
	case join < 0:
		// The fork never reaches an end: loop_without_exit says so.
		return
	case int(join) == len(doc.Nodes):
		w.neverMeet(n, fork, firsts)
		return
	}
	j := &doc.Nodes[join]
	fork.Join = j.ID
	mode := types.JoinAll
	if v, ok := types.MetadataValue(j, types.KeyJoin); ok && strings.EqualFold(strings.TrimSpace(v), types.JoinAny) {
		mode = types.JoinAny
	}
	w.res.Joins[int(join)] = mode
	w.branches(f, k, int(join), fork, firsts, lines, fail)
}

// branches walks each branch of fork f from its first node to the join,
// and reports a node two branches reach and a way back to the fork.
func (w *forkWalk) branches(f int, k int32, join int, fork *types.Fork, firsts, lines []int,
	fail func(class string, ids []string, hint, format string, args ...any)) {
	g, doc := w.g, w.g.Doc
	n, j := &doc.Nodes[f], &doc.Nodes[join]
	shared := map[int]bool{}
	looped := false
	var stack []int
	var visit func(b, from, to, edge int)
	visit = func(b, from, to, edge int) {
		switch {
		case to == join:
			return
		case to == f:
			if looped {
				return
			}
			looped = true
			path := w.pathTo(from, f)
			fail("fork_loop", []string{n.ID, doc.Edges[edge].ID, doc.Nodes[from].ID},
				"a loop may stay inside one branch, or go back from after the join to before the fork: draw the loop so that it does not leave the branch",
				"branch %s of fork %s leads back to the fork before the join %s (%s, line %s): a loop that crosses the fork",
				types.Quote(fork.Branches[b].Name), n.Describe(), j.Describe(), path, doc.Edges[edge].ID)
			return
		case w.stamp[to] == k && w.owner[to] == int32(b):
			return
		case w.stamp[to] == k:
			if shared[to] {
				return
			}
			shared[to] = true
			other := fork.Branches[w.owner[to]].Name
			ids := []string{n.ID, doc.Nodes[to].ID, doc.Edges[edge].ID}
			fail("fork_shared_step", ids,
				"each step belongs to one branch: draw the shared step after the join (it then runs once, when the branches have met), or draw it once in each branch",
				"%s is in two branches of fork %s, %s and %s, before they meet at the join %s",
				doc.Nodes[to].Describe(), n.Describe(), types.Quote(other), types.Quote(fork.Branches[b].Name), j.Describe())
			return
		}
		w.stamp[to], w.owner[to], w.via[to] = k, int32(b), int32(from)
		stack = append(stack, to)
	}
	// Each branch's first node is its own before any branch is walked, so
	// that a line from one branch into another is named as such.
	for b, first := range firsts {
		visit(b, f, first, lines[b])
	}
	stack = stack[:0]
	for b, first := range firsts {
		if w.stamp[first] != k || w.owner[first] != int32(b) || first == join {
			continue
		}
		stack = append(stack, first)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if w.end(x) {
				continue
			}
			g.Successors(x, func(to, e int) { visit(b, x, to, e) })
		}
	}
}

// lateJoins reports the forks whose branches meet before the node marked
// join: after them: the steps from where they meet to it are in every
// branch, not after the join the author marked. It returns the marked
// nodes it named. The first marked node on each node's chain of
// post-dominators is found once for all nodes, so this stays linear.
func (w *forkWalk) lateJoins(joinKeys []int) map[int]bool {
	if len(joinKeys) == 0 || len(w.res.Forks) == 0 {
		return nil
	}
	doc := w.g.Doc
	exit := int32(len(doc.Nodes))
	const unknown = -2
	marked := make([]int32, len(doc.Nodes)) // first marked node on the chain from each node, or -1
	for i := range marked {
		marked[i] = unknown
	}
	for _, i := range joinKeys {
		marked[i] = int32(i)
	}
	first := func(x int32) int32 {
		var path []int32
		for x >= 0 && x != exit && marked[x] == unknown {
			path = append(path, x)
			marked[x] = -1 // a loop in the chain, if any, ends here
			x = w.ipdom[x]
		}
		found := int32(-1)
		if x >= 0 && x != exit {
			found = marked[x]
		}
		for _, p := range path {
			marked[p] = found
		}
		return found
	}
	late := map[int]bool{}
	for f := range doc.Nodes {
		fork := w.res.Forks[f]
		if fork == nil || fork.Join == "" {
			continue
		}
		j := w.ipdom[f]
		m := first(j)
		if m < 0 || m == j {
			continue
		}
		if _, other := w.res.Joins[int(m)]; other {
			continue // a nested fork's branches meet inside the outer fork's branch
		}
		late[int(m)] = true
		n, jn, mn := &doc.Nodes[f], &doc.Nodes[j], &doc.Nodes[m]
		w.res.Errors = append(w.res.Errors, types.Diagnostic{Class: "fork_shared_step", ID: n.ID, IDs: []string{n.ID, jn.ID, mn.ID}, Page: n.Page, Line: n.Line,
			Message: fmt.Sprintf("the branches of fork %s meet at %s before %s, which is marked join:, so the steps from %s on run once, after the branches meet, not in each branch",
				n.Describe(), jn.Describe(), mn.Describe(), jn.ID),
			Hint: fmt.Sprintf("if every branch should run %s, draw it in each branch; if it runs once after the branches meet, move join: to %s", jn.ID, jn.ID)})
	}
	return late
}

// pathTo names the way from a branch's first node to node at and on to
// the fork, at most maxPath nodes.
func (w *forkWalk) pathTo(at, fork int) string {
	doc := w.g.Doc
	ids := []string{}
	if at == fork {
		ids = append(ids, doc.Nodes[fork].ID) // a line from the fork to itself
	}
	for x := at; x != fork; x = int(w.via[x]) {
		ids = append(ids, doc.Nodes[x].ID)
		if int(w.via[x]) == fork || len(ids) > 1000 {
			break
		}
	}
	for l, r := 0, len(ids)-1; l < r; l, r = l+1, r-1 {
		ids[l], ids[r] = ids[r], ids[l]
	}
	if len(ids) > maxPath {
		ids = append(ids[:2], append([]string{"…"}, ids[len(ids)-maxPath+3:]...)...)
	}
	return strings.Join(append(ids, doc.Nodes[fork].ID), " → ")
}

// neverMeet reports a fork whose branches have no common node before the
// ends: the node most branches meet at, if two do, and each branch that
// can end without reaching it, with where it ends.
func (w *forkWalk) neverMeet(n *types.Node, fork *types.Fork, firsts []int) {
	doc := w.g.Doc
	exit := int32(len(doc.Nodes))
	count := map[int32]int{}
	var order []int32
	for _, s := range firsts {
		seen := map[int32]bool{}
		for x := int32(s); x >= 0 && x != exit && !seen[x]; x = w.ipdom[x] {
			seen[x] = true
			if count[x] == 0 {
				order = append(order, x)
			}
			count[x]++
		}
	}
	meet := int32(-1)
	for _, x := range order {
		if count[x] >= 2 && (meet < 0 || count[x] > count[meet]) {
			meet = x
		}
	}
	var parts []string
	ids := []string{n.ID}
	for b, s := range firsts {
		if meet >= 0 && w.postDominates(meet, int32(s)) {
			continue
		}
		name := types.Quote(fork.Branches[b].Name)
		ids = append(ids, fork.Branches[b].Line)
		without := ""
		if meet >= 0 {
			without = " without reaching " + doc.Nodes[meet].ID
		}
		if e := w.endAvoiding(s, int(meet)); e >= 0 {
			ids = append(ids, doc.Nodes[e].ID)
			parts = append(parts, fmt.Sprintf("branch %s can end at %s%s", name, doc.Nodes[e].Describe(), without))
		} else {
			parts = append(parts, fmt.Sprintf("branch %s never reaches an end%s", name, without))
		}
	}
	where := "one node"
	if meet >= 0 {
		where = fmt.Sprintf("%s, where other branches meet", doc.Nodes[meet].Describe())
	}
	w.res.Errors = append(w.res.Errors, types.Diagnostic{Class: "fork_without_join", ID: n.ID, IDs: ids, Page: n.Page, Line: n.Line,
		Message: fmt.Sprintf("the branches of fork %s never meet at %s: %s", n.Describe(), where, strings.Join(parts, "; ")),
		Hint:    "draw every branch's last line to one step after the branches (the join), and go on from there to the end"})
}

// postDominates says whether node p is on every way from s to an end.
func (w *forkWalk) postDominates(p, s int32) bool {
	exit := int32(len(w.ipdom))
	for x, steps := s, 0; x >= 0 && x != exit && steps <= len(w.ipdom); x, steps = w.ipdom[x], steps+1 {
		if x == p {
			return true
		}
	}
	return false
}

// endAvoiding finds an end reachable from s without passing node avoid
// (-1: none to avoid), breadth first: the nearest; -1 when there is none.
func (w *forkWalk) endAvoiding(s, avoid int) int {
	seen := map[int]bool{s: true}
	queue := []int{s}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if w.end(x) {
			return x
		}
		w.g.Successors(x, func(to, _ int) {
			if to != avoid && !seen[to] {
				seen[to] = true
				queue = append(queue, to)
			}
		})
	}
	return -1
}

// PostDominators returns each node's immediate post-dominator: the first
// node that every way from it to an end passes. The ends are the nodes
// end says so of (a run's lines leaving them are not followed); they all
// lead to a virtual exit, len(g.Doc.Nodes), which is the immediate
// post-dominator of a node whose ways end at different ends. A node with
// no way to an end (in a loop with no way out) has -1.
//
// It is Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast
// Dominance Algorithm", 2001) run on the reversed graph from the exit, in
// reverse postorder: near-linear on the charts people draw, and with no
// recursion, so a chain of 100,000 nodes is no deeper a stack.
func PostDominators(g *graph.Graph, end func(i int) bool) []int32 {
	nodes := len(g.Doc.Nodes)
	exit := nodes
	// Predecessors in compressed rows: the reversed graph's successors.
	// Lines leaving an end are not followed by a run, so not counted.
	start := make([]int32, nodes+2)
	isEnd := make([]bool, nodes)
	for i := range nodes {
		if isEnd[i] = end(i); isEnd[i] {
			continue
		}
		g.Successors(i, func(to, _ int) { start[to+1]++ })
	}
	for i := range nodes {
		if isEnd[i] {
			start[exit+1]++
		}
	}
	for i := 0; i <= nodes; i++ {
		start[i+1] += start[i]
	}
	pred := make([]int32, start[nodes+1])
	fill := append([]int32(nil), start[:nodes+1]...)
	for i := range nodes {
		if isEnd[i] {
			pred[fill[exit]] = int32(i)
			fill[exit]++
			continue
		}
		g.Successors(i, func(to, _ int) {
			pred[fill[to]] = int32(i)
			fill[to]++
		})
	}
	// Postorder numbers by an iterative depth-first walk from the exit.
	post := make([]int32, nodes+1)
	for i := range post {
		post[i] = -1
	}
	var order []int32 // nodes in postorder
	type frame struct{ node, next int32 }
	visited := make([]bool, nodes+1)
	stack := []frame{{int32(exit), start[exit]}}
	visited[exit] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < start[top.node+1] {
			p := pred[top.next]
			top.next++
			if !visited[p] {
				visited[p] = true
				stack = append(stack, frame{p, start[p]})
			}
			continue
		}
		post[top.node] = int32(len(order))
		order = append(order, top.node)
		stack = stack[:len(stack)-1]
	}
	idom := make([]int32, nodes+1)
	for i := range idom {
		idom[i] = -1
	}
	idom[exit] = int32(exit)
	intersect := func(a, b int32) int32 {
		for a != b {
			for post[a] < post[b] {
				a = idom[a]
			}
			for post[b] < post[a] {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		// Reverse postorder, the exit (last in postorder) left out.
		for k := len(order) - 2; k >= 0; k-- {
			b := order[k]
			var next int32 = -1
			consider := func(s int32) {
				if idom[s] < 0 {
					return
				}
				if next < 0 {
					next = s
				} else {
					next = intersect(s, next)
				}
			}
			if isEnd[b] {
				consider(int32(exit))
			} else {
				g.Successors(int(b), func(to, _ int) { consider(int32(to)) })
			}
			if next >= 0 && idom[b] != next {
				idom[b] = next
				changed = true
			}
		}
	}
	out := idom[:nodes:nodes]
	for i := range out {
		if post[i] < 0 {
			out[i] = -1
		}
	}
	return out
}
