package run

import (
	"context"
	"fmt"

	"github.com/dtree-dev/dtree/types"
)

// A run resumed inside a fork (readme/resume.md#forks): the steps before
// the fork are carried as any (carry), and each branch of the fork gets a
// new worktree made from its own last checkpoint, takes its finished
// steps (its visits and history are a live branch's), and goes on from
// its own last finished step; a branch that got to the join goes on from
// there, so it is taken whole. The join then merges them all onto the
// fork's checkpoint, as in a run that did not stop.
//
// Each worktree is made from the fork's checkpoint, as a live branch's,
// then moved to the branch's own last checkpoint (a checkpoint of its
// own): the new run's branch_start has the fork's, the join's base for
// a resume of this run in turn.

// partBranch is the branch of the fork the run goes on inside that was
// branch id in the run resumed: the fork's branches are made when the
// first is needed, after the steps before the fork were carried onto p.
func (w *walker) partBranch(ctx context.Context, p *branch, id string) (*branch, error) {
	if w.parts == nil {
		if err := w.partBranches(ctx, p); err != nil {
			return nil, err
		}
	}
	c, ok := w.parts[id]
	if !ok {
		return nil, fmt.Errorf("fork %s: the run resumed has a branch %s, which the chart's fork does not have", w.o.Resume.Fork.Node, id)
	}
	return c, nil
}

// partBranches makes a branch for each line of the fork the run goes on
// inside, on p: from its carried branch when the run resumed started it,
// else from the fork's checkpoint.
func (w *walker) partBranches(ctx context.Context, p *branch) error {
	f := w.o.Resume.Fork
	if err := w.o.Resume.ForkRefused(); err != nil { // dtree resume refuses it first
		return err
	}
	g := w.o.Chart.Graph
	i, ok := g.Index(f.Node)
	if !ok || w.node(i).Fork == nil {
		return fmt.Errorf("node %s, the fork the run stopped inside, is not a fork of the chart", f.Node)
	}
	n := w.node(i)
	join, ok := g.Index(n.Fork.Join)
	if !ok {
		return fmt.Errorf("node %s is a fork whose branches never meet", n.ID)
	}
	if p.tree.ws == nil {
		return fmt.Errorf("node %s: the run stopped inside this fork, %w, and this run has none: go on in the repository the run was in, with checkpoints on", n.ID, ErrForkNeedsGit)
	}
	w.forked = true
	w.parts = map[string]*branch{}
	byName := map[string]*CarriedBranch{}
	for _, cb := range f.Branches {
		byName[cb.Name] = cb
	}
	for _, fb := range n.Fork.Branches {
		cb := byName[fb.Name]
		// Made from the fork's checkpoint, as in a live fork (branch_start
		// says so, and a resume of this run reads the join's base there),
		// then moved to the branch's own last checkpoint.
		c, err := w.startBranch(ctx, p, n, f.Visit, fb, join, f.Base)
		if err == nil {
			// Made now, not when it gets to run as a live fork's: its
			// branch_start comes before the steps carried onto it, as a
			// resume of this run reads them.
			err = c.prepare(ctx)
			c.prepare = nil
		}
		if err != nil {
			w.dropParts()
			return err
		}
		if cb == nil {
			w.parts[c.id] = c // not started when the run stopped: from its start
			continue
		}
		w.parts[cb.ID] = c
		if cb.Checkpoint != f.Base {
			msg := "branch " + cb.ID + " as run " + w.o.Resume.Start.RunID + " left it"
			if _, err := c.tree.ws.Restore(context.WithoutCancel(ctx), cb.Checkpoint, msg); err != nil {
				w.dropParts()
				return fmt.Errorf("fork %s: branch %s: %w", n.ID, c.id, err)
			}
			c.tree.fresh = true
		}
		at, ok := g.Index(cb.At)
		switch {
		case cb.Done:
			c.cur = join
		case !ok:
			w.dropParts()
			return fmt.Errorf("fork %s: branch %s goes on at node %s, which is not in the chart", n.ID, c.id, cb.At)
		default:
			c.cur = at
		}
		delete(byName, fb.Name)
	}
	for name := range byName {
		w.dropParts()
		return fmt.Errorf("fork %s: the run resumed has a branch %s, which the chart's fork does not have", n.ID, types.Quote(name))
	}
	return nil
}

// dropParts removes the worktrees of the branches partBranches made.
func (w *walker) dropParts() {
	for _, c := range w.parts {
		w.dropTree(c)
	}
	w.parts = map[string]*branch{}
}

// goOnInFork walks the branches of the fork the run goes on inside, on
// p, to their join, and returns the join's index, where p goes on.
func (w *walker) goOnInFork(ctx context.Context, p *branch) (int, error) {
	if w.parts == nil { // no branch had finished a step
		if err := w.partBranches(ctx, p); err != nil {
			return 0, err
		}
	}
	defer w.dropParts()
	f := w.o.Resume.Fork
	i, _ := w.o.Chart.Graph.Index(f.Node)
	n := w.node(i)
	join, _ := w.o.Chart.Graph.Index(n.Fork.Join)
	// In the order of the fork's lines, as a live fork merges them.
	children := make([]*branch, 0, len(w.parts))
	for _, fb := range n.Fork.Branches {
		for _, c := range w.parts {
			if c.name == fb.Name {
				children = append(children, c)
			}
		}
	}
	return w.runBranches(ctx, p, n, join, f.Base, children)
}
