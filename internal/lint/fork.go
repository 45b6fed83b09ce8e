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
	w := &forkWalk{g: g, end: end, ipdom: ipdom, res: &res, state: make([]uint8, len(doc.Nodes)),
		budget: 4*(len(doc.Nodes)+len(doc.Edges)) + 10_000,
		owner:  make([]int32, len(doc.Nodes)), stamp: make([]int32, len(doc.Nodes)), via: make([]int32, len(doc.Nodes))}
	for _, f := range forks {
		w.state[f] = forkPending
	}
	for _, f := range forks {
		if w.state[f] == forkPending {
			w.run(f)
		}
	}
	res.Warnings = append(res.Warnings, sameBranchIDs(doc, res.Forks)...)
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

// sameBranchIDs warns of two branches of different forks with one id,
// FORK/NAME (readme/parallel.md): fork a's branch b/x and fork a/b's
// branch x. The run keeps their worktrees and checkpoints apart, but
// --branch, plan and join, and the logs' branch events cannot tell them
// apart. Branches of one fork never share a name (fork_branch_name).
func sameBranchIDs(doc *types.Document, forks map[int]*types.Fork) []types.Diagnostic {
	var out []types.Diagnostic
	type owner struct{ fork, branch int }
	seen := map[string]owner{}
	for i := range doc.Nodes { // in chart order, so the findings are too
		f := forks[i]
		if f == nil {
			continue
		}
		n := &doc.Nodes[i]
		for b, fb := range f.Branches {
			id := n.ID + "/" + fb.Name
			first, dup := seen[id]
			if !dup {
				seen[id] = owner{i, b}
				continue
			}
			if first.fork == i {
				continue // one fork's two branches of one name: fork_branch_name
			}
			other, ob := &doc.Nodes[first.fork], forks[first.fork].Branches[first.branch]
			d := nodeDiag(n, "fork_branch_id",
				"name forks and branches without '/': change the id of one of the forks, or the label of one of the lines",
				"branch %s of fork %s and branch %s of fork %s share the id %s: --branch, dtree join and the logs cannot tell them apart",
				types.Quote(fb.Name), n.ID, types.Quote(ob.Name), other.ID, types.Quote(id))
			d.IDs = []string{n.ID, fb.Line, other.ID, ob.Line}
			out = append(out, d)
		}
	}
	return out
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
	// state says of each node whether it is a fork still to check, one
	// being checked or one checked; checked counts the forks checked.
	state   []uint8
	checked int32
	// budget bounds the steps the findings of forks whose branches never
	// meet take, all together (neverMeet).
	budget int
}

// States of a node in forkWalk.state.
const (
	notFork uint8 = iota
	forkPending
	forkChecking
	forkChecked
)

// run checks fork f. A fork met inside another's branch is checked first,
// and the outer walk then goes from it straight to its join: each branch is
// walked once, however deep forks nest.
func (w *forkWalk) run(f int) {
	w.state[f] = forkChecking
	w.checked++
	w.check(f, w.checked)
	w.state[f] = forkChecked
}

// check checks fork f, the k-th.
func (w *forkWalk) check(f int, k int32) {
	g, doc := w.g, w.g.Doc
	n := &doc.Nodes[f]
	fail := func(class string, ids []string, hint, format string, args ...any) {
		w.res.Errors = append(w.res.Errors, types.Diagnostic{Class: class, ID: ids[0], IDs: ids, Page: n.Page, Line: n.Line,
			Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	if n.Step == types.StepApproval {
		return // approval_gate says it: a gate takes one way
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
	visit := func(b, from, to, edge int) {
		switch {
		case to == join:
			return
		case to == f:
			if looped {
				return
			}
			looped = true
			path := w.pathTo(from, f)
			line, ids := "", []string{n.ID, doc.Nodes[from].ID}
			if edge >= 0 {
				line = ", line " + doc.Edges[edge].ID
				ids = []string{n.ID, doc.Edges[edge].ID, doc.Nodes[from].ID}
			}
			fail("fork_loop", ids,
				"a loop may stay inside one branch, or go back from after the join to before the fork: draw the loop so that it does not leave the branch",
				"branch %s of fork %s leads back to the fork before the join %s (%s%s): a loop that crosses the fork",
				types.Quote(fork.Branches[b].Name), n.Describe(), j.Describe(), path, line)
			return
		case w.stamp[to] == k && w.owner[to] == int32(b):
			return
		case w.stamp[to] == k:
			if shared[to] {
				return
			}
			shared[to] = true
			other := fork.Branches[w.owner[to]].Name
			ids := []string{n.ID, doc.Nodes[to].ID}
			if edge >= 0 {
				ids = append(ids, doc.Edges[edge].ID)
			}
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
			if x != f && w.state[x] == forkPending {
				w.run(x)
			}
			if inner := w.res.Forks[x]; x != f && w.state[x] == forkChecked && inner != nil && inner.Join != "" {
				// A fork nested in the branch: its own branches are
				// checked; the walk goes on from its join.
				visit(b, x, int(w.ipdom[x]), -1)
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
//
// Each branch's chain of post-dominators is walked until it meets one
// walked before, so the chains of one fork cost at most the nodes; all
// forks together share a budget of steps (forkWalk.budget), past which a
// finding names the branches without the ends they reach. No chart makes
// the check more than linear.
func (w *forkWalk) neverMeet(n *types.Node, fork *types.Fork, firsts []int) {
	doc := w.g.Doc
	exit := int32(len(doc.Nodes))
	inChain := map[int32]bool{}
	var segments [][]int32 // each branch's chain, up to a node walked before
	starts := map[int32]int{}
	for _, s := range firsts {
		starts[int32(s)]++
		var seg []int32
		for x := int32(s); x >= 0 && x != exit && !inChain[x] && w.spend(); x = w.ipdom[x] {
			inChain[x] = true
			seg = append(seg, x)
		}
		segments = append(segments, seg)
	}
	// How many branches pass each node: a chain's nodes after the ones
	// that merge into it, so later chains first.
	total := make(map[int32]int, len(inChain))
	for k := len(segments) - 1; k >= 0; k-- {
		for _, x := range segments[k] {
			total[x] += starts[x]
			if p := w.ipdom[x]; p >= 0 && p != exit && inChain[p] {
				total[p] += total[x]
			}
		}
	}
	meet := int32(-1)
	for _, seg := range segments {
		for _, x := range seg {
			if total[x] >= 2 && (meet < 0 || total[x] > total[meet]) {
				meet = x
			}
		}
	}
	// Which nodes have the meeting node on their chain: parents first.
	reaches := map[int32]bool{}
	if meet >= 0 {
		for _, seg := range segments {
			for k := len(seg) - 1; k >= 0; k-- {
				x := seg[k]
				p := w.ipdom[x]
				reaches[x] = x == meet || (p >= 0 && p != exit && reaches[p])
			}
		}
	}
	var parts []string
	ids := []string{n.ID}
	for b, s := range firsts {
		if meet >= 0 && reaches[int32(s)] {
			continue
		}
		name := types.Quote(fork.Branches[b].Name)
		ids = append(ids, fork.Branches[b].Line)
		without := ""
		if meet >= 0 {
			without = " without reaching " + doc.Nodes[meet].ID
		}
		switch e := w.endAvoiding(s, int(meet)); {
		case e >= 0:
			ids = append(ids, doc.Nodes[e].ID)
			parts = append(parts, fmt.Sprintf("branch %s can end at %s%s", name, doc.Nodes[e].Describe(), without))
		case e == -1:
			parts = append(parts, fmt.Sprintf("branch %s never reaches an end%s", name, without))
		default:
			parts = append(parts, fmt.Sprintf("branch %s can end%s", name, without))
		}
		if len(parts) == maxPath {
			parts = append(parts, fmt.Sprintf("and %d more branches", len(firsts)-b-1))
			break
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

// spend takes one step from the budget of the forks' findings, and says
// whether there was one.
func (w *forkWalk) spend() bool {
	if w.budget <= 0 {
		return false
	}
	w.budget--
	return true
}

// endAvoiding finds an end reachable from s without passing node avoid
// (-1: none to avoid), breadth first: the nearest; -1 when there is none,
// -2 when the budget ran out first.
func (w *forkWalk) endAvoiding(s, avoid int) int {
	seen := map[int]bool{s: true}
	queue := []int{s}
	for len(queue) > 0 {
		if !w.spend() {
			return -2
		}
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
// It is Lengauer and Tarjan's algorithm ("A Fast Algorithm for Finding
// Dominators in a Flowgraph", 1979), in its simple form with path
// compression, O(E log N), run on the reversed graph from the exit, with
// no recursion: a chain of 100,000 nodes is no deeper a stack. (Cooper,
// Harvey and Kennedy's simpler iterative algorithm walks the dominator
// tree's depth at each merge, which is quadratic on a long chain whose
// every step also branches to an end of its own.)
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
	// Depth-first numbering from the exit over the reversed graph, 1 for
	// the exit, 0 for a node it does not reach. Everything below works on
	// these numbers.
	num := make([]int32, nodes+1)
	vertex := []int32{-1} // number -> node
	parent := []int32{0}  // number -> its parent's number
	type frame struct{ node, next int32 }
	stack := []frame{{int32(exit), start[exit]}}
	num[exit] = 1
	vertex, parent = append(vertex, int32(exit)), append(parent, 0)
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == start[top.node+1] {
			stack = stack[:len(stack)-1]
			continue
		}
		p := pred[top.next]
		top.next++
		if num[p] == 0 {
			num[p] = int32(len(vertex))
			vertex = append(vertex, p)
			parent = append(parent, num[top.node])
			stack = append(stack, frame{p, start[p]})
		}
	}
	count := int32(len(vertex)) - 1
	semi := make([]int32, count+1)
	idom := make([]int32, count+1)
	ancestor := make([]int32, count+1)
	label := make([]int32, count+1)
	bucketHead := make([]int32, count+1) // buckets as linked lists of numbers
	bucketNext := make([]int32, count+1)
	for v := int32(1); v <= count; v++ {
		semi[v], label[v] = v, v
	}
	var path []int32
	eval := func(v int32) int32 {
		if ancestor[v] == 0 {
			return v
		}
		path = path[:0]
		for x := v; ancestor[ancestor[x]] != 0; x = ancestor[x] {
			path = append(path, x)
		}
		for k := len(path) - 1; k >= 0; k-- {
			x := path[k]
			a := ancestor[x]
			if semi[label[a]] < semi[label[x]] {
				label[x] = label[a]
			}
			ancestor[x] = ancestor[a]
		}
		return label[v]
	}
	for w := count; w >= 2; w-- {
		node := vertex[w]
		// The reversed graph's predecessors of the node: its lines' ends,
		// or the exit for an end.
		consider := func(v int32) {
			if v = num[v]; v == 0 {
				return
			}
			if u := eval(v); semi[u] < semi[w] {
				semi[w] = semi[u]
			}
		}
		if isEnd[node] {
			consider(int32(exit))
		} else {
			g.Successors(int(node), func(to, _ int) { consider(int32(to)) })
		}
		s := semi[w]
		bucketNext[w], bucketHead[s] = bucketHead[s], w
		p := parent[w]
		ancestor[w] = p
		for v := bucketHead[p]; v != 0; v = bucketNext[v] {
			if u := eval(v); semi[u] < semi[v] {
				idom[v] = u
			} else {
				idom[v] = p
			}
		}
		bucketHead[p] = 0
	}
	for w := int32(2); w <= count; w++ {
		if idom[w] != semi[w] {
			idom[w] = idom[idom[w]]
		}
	}
	out := make([]int32, nodes)
	for i := range out {
		out[i] = -1
		if v := num[i]; v != 0 {
			out[i] = vertex[idom[v]]
		}
	}
	return out
}
