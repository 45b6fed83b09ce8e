package run

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/dtree-dev/dtree/internal/atomicfile"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// One branch of a fork alone (Options.Branch, dtree run --branch;
// readme/ci.md#branches-on-separate-machines): each machine of a GitHub
// Actions matrix walks the trunk to the fork, then its one branch in the
// run's own tree, and ends before the join. Its run directory then holds
// what dtree join needs: its events (the branch's branch_start names the
// fork's checkpoint, its branch_end the branch's last) and two patches,
// git diff --binary of the checkpoints.
const (
	// TrunkPatch is what the steps before the fork changed: from the
	// checkpoint before the run's first step to the fork's.
	TrunkPatch = "trunk.patch"
	// BranchPatch is what the branch changed: from the fork's checkpoint
	// to the branch's last.
	BranchPatch = "branch.patch"
)

// BranchMissedError is a run of one branch that ended without reaching
// its fork: the trunk took another way (exit 1).
type BranchMissedError struct {
	Branch, End string
}

func (e *BranchMissedError) Error() string {
	return fmt.Sprintf("the run ended at %s without reaching the fork of branch %s, so the branch did not run", e.End, types.Quote(e.Branch))
}

// forkOrBranch runs fork n's branches, and returns the join, where b goes
// on; or, on the run of one branch at its fork's first visit, runs that
// branch alone and returns -1: the run ends there.
func (w *walker) forkOrBranch(ctx context.Context, b *branch, n *types.ProcessedNode, visit int) (int, error) {
	if w.o.Branch == "" || b.id != "" || visit != 1 {
		return w.fork(ctx, b, n, visit)
	}
	for _, fb := range n.Fork.Branches {
		if n.ID+"/"+fb.Name == w.o.Branch {
			return -1, w.oneBranch(ctx, b, n, fb)
		}
	}
	return w.fork(ctx, b, n, visit) // another fork on the way: all its branches
}

// branchMissed is the end of branch b at end node n: an error on the run
// of one branch that never reached its fork.
func (w *walker) branchMissed(b *branch, n *types.ProcessedNode) error {
	if w.o.Branch == "" || b.id != "" {
		return nil
	}
	return &BranchMissedError{Branch: w.o.Branch, End: n.ID}
}

// oneBranch walks branch fb of fork n in p's tree up to the join, then
// writes the patches.
func (w *walker) oneBranch(ctx context.Context, p *branch, n *types.ProcessedNode, fb types.ForkBranch) error {
	g := w.o.Chart.Graph
	join, ok := g.Index(n.Fork.Join)
	if !ok { // lint's fork_without_join refuses such a chart first
		return fmt.Errorf("node %s is a fork whose branches never meet", n.ID)
	}
	first, _ := g.Index(fb.First)
	t := p.tree
	base := ""
	if t.ws != nil {
		base = t.ws.Last.Commit // the fork's visit ended with a checkpoint
	} else if w.o.Log != nil {
		return fmt.Errorf("branch %s: its changes are a patch from the fork's checkpoint, and the run has none: %w", types.Quote(w.o.Branch), ErrForkNeedsGit)
	}
	path := []string{}
	c := &branch{id: w.o.Branch, name: fb.Name, fork: n.ID, cur: first, stop: join, path: &path, tree: t,
		visits: maps.Clone(p.visits), history: slices.Clone(p.history), historyLeftOut: p.historyLeftOut,
		last: maps.Clone(p.last)}
	c.forkAt = c.steps()
	w.forked = true
	w.branchStarted(c, n, fb, base)
	w.cur = c
	defer func() { w.cur = p }()
	err := w.walkBranch(ctx, c)
	var stopped error
	if err != nil && ctx.Err() != nil {
		stopped = context.Cause(ctx)
	}
	w.endBranch(c, err, stopped)
	if err != nil || t.ws == nil {
		return err
	}
	return w.writePatches(ctx, t, base)
}

// writePatches writes the trunk's and the branch's patches into the run's
// directory.
func (w *walker) writePatches(ctx context.Context, t *tree, base string) error {
	ctx = context.WithoutCancel(ctx)
	if _, err := t.snap(ctx, "branch "+w.o.Branch+" at the join"); err != nil {
		return fmt.Errorf("branch %s: %w", types.Quote(w.o.Branch), err)
	}
	for _, p := range []struct{ file, from, to string }{
		{TrunkPatch, t.first, base},
		{BranchPatch, base, t.ws.Last.Commit},
	} {
		err := atomicfile.Write(filepath.Join(w.o.Log.Dir, p.file), 0o644, atomicfile.Options{}, func(out io.Writer) error {
			return t.ws.Repo.Diff(ctx, out, p.from, p.to, workspace.DiffOptions{Binary: true})
		})
		if err != nil {
			return fmt.Errorf("branch %s: %s: %w", types.Quote(w.o.Branch), p.file, err)
		}
	}
	return nil
}
