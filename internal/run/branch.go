package run

import "github.com/dtree-dev/dtree/prompts"

// A branch is one path of a run through the chart: the node it is at,
// how often it has visited each node, the nodes it went through, and its
// finished visits as the steps after them see them (the run so far,
// {{node.ID.field}}). A run is a set of branches; the walker walks each
// and holds what they share: the options, the summary, --max-steps, the
// budgets, the logs, the answers recorded and the workspace. A chart
// without a fork is walked as one branch, the run's first, whose path is
// the run's (Summary.Path).
//
// A fork (SPEC §17, issue 27) will add to it the branch's id, its parent
// and the fork node it started at, and a join node it waits at; each
// branch started at a fork begins with its parent's visits and history,
// as a step after the fork sees the steps before it.
type branch struct {
	// cur is the node the branch is at, an index in the chart's graph.
	cur    int
	visits map[string]int // visits so far of each node, by id
	// path lists the nodes the branch went through, terminators too: for
	// the run's first branch it is the summary's Path.
	path *[]string
	// history is the newest finished visits, oldest first, after
	// historyLeftOut older ones (addHistory); last is each node's latest.
	history        []pastStep
	historyLeftOut int
	last           map[string]pastStep
	soFar          prompts.Entries // the run so far's entries, each rendered once
}

// newBranch is a branch with no visit yet, at node cur, listing its
// path in path.
func newBranch(cur int, path *[]string) *branch {
	return &branch{cur: cur, visits: map[string]int{}, path: path}
}

// pass adds node id to the branch's path.
func (b *branch) pass(id string) { *b.path = append(*b.path, id) }
