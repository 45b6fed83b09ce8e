package run

import (
	"context"

	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/prompts"
)

// A branch is one path of a run through the chart: the node it is at,
// how often it has visited each node, the nodes it went through, and its
// finished visits as the steps after them see them (the run so far,
// {{node.ID.field}}). A run is a set of branches; the walker walks each
// and holds what they share: the options, the summary, --max-steps, the
// budgets, the logs, the answers recorded and the workspace. A chart
// without a fork is walked as one branch, the run's first, whose path is
// the run's (Summary.Path).
//
// A fork (fork.go) starts a branch per line, each in a worktree of its
// own, beginning with its parent's visits and history (a step after the
// fork sees the steps before it), and ending at the join, where the
// parent takes their visits and history and goes on.
type branch struct {
	// id is a fork's branch's FORK/NAME (fork.go), "" for the run's
	// first branch; name is NAME, fork the fork's node.
	id, name, fork string
	// cur is the node the branch is at, an index in the chart's graph;
	// stop is its fork's join, where it ends (-1: none, the run's first).
	cur, stop int
	// tree is the working tree its steps work in.
	tree   *tree
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
	// prepare makes a fork's branch's worktree and checkpoints when it
	// gets to run (nil once done, and for a dry run's); running: it has
	// a place among the branches that run at once (fork.go's enter).
	prepare func(ctx context.Context) error
	running bool
	// tip is a fork's branch's last checkpoint once it got to its join,
	// what the join merges; tipErr why there is none.
	tip    string
	tipErr error
	// forkAt is how many steps a fork's branch had when it started:
	// those after are its own, which its parent takes in at the join.
	forkAt int
	// conflicts are the files the branches of the fork just joined
	// changed both ways: the join's agent is asked to resolve them.
	conflicts []workspace.Conflict
	// conflictLabels are what the commits that name the markers' sides
	// hold (workspace.Merge.Labels).
	conflictLabels map[string][]string
}

// newBranch is a branch with no visit yet, at node cur, listing its
// path in path, working in tree t.
func newBranch(cur int, path *[]string, t *tree) *branch {
	return &branch{cur: cur, stop: -1, visits: map[string]int{}, path: path, tree: t}
}

// pass adds node id to the branch's path.
func (b *branch) pass(id string) { *b.path = append(*b.path, id) }
