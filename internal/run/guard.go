package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/pathglob"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// The guard over the working tree (readme/workspace.md#rollback and
// #scope): what a visit's attempts may leave in it. With checkpoints on,
// each attempt starts from a known checkpoint; a failed attempt's change
// is undone before its retry when rollback is attempt (kept, and said so,
// when keep); a step with paths has its change outside them undone, and
// the attempt fails with them in its critique; a decision, and a process
// step's validation, leave the tree as they found it.

// Undoer is a Progress told when dtree undid a change to the working
// tree; warn is a step that should not have changed it (a decision, a
// validation, a change outside its paths).
type Undoer interface {
	Undone(n *types.ProcessedNode, attempt int, msg string, warn bool)
}

// maxScopeList bounds the paths an attempt's critique names.
const maxScopeList = 20

// guard is one visit's watch over the working tree.
type guard struct {
	w        *walker
	t        *tree // the tree the visit works in: its branch's
	n        *types.ProcessedNode
	scope    *pathglob.Set // nil: the step may change any file
	rollback bool
	prefix   string // the workdir relative to the repository's root: "" or "dir/"
	visit    string // the checkpoint the visit started from; "" when checkpoints are off
	start    string // the checkpoint the attempt started from
	checked  bool   // the attempt's scope was checked (before its validation)
	attempt  int    // the attempt going on, 0 before the first
}

// ErrNeedsGit is a step that asks for what only checkpoints can do
// (rollback attempt, paths) in a run without them.
var ErrNeedsGit = errors.New("needs a git repository")

// newGuard sets up the guard of a visit of n.
func (w *walker) newGuard(ctx context.Context, t *tree, n *types.ProcessedNode) (*guard, error) {
	g := &guard{w: w, t: t, n: n, rollback: w.rollback(n)}
	if len(n.Paths) > 0 {
		set, errs := pathglob.Parse(strings.Join(n.Paths, "\n"))
		if len(errs) > 0 { // nodeconf refused the chart first
			return g, fmt.Errorf("node %s: paths: %w", n.ID, errs[0])
		}
		g.scope = set
	}
	if t.ws == nil {
		if g.scope != nil || g.rollback {
			what := "paths"
			if g.scope == nil {
				what = "rollback attempt"
			}
			why := "the run is not in a git repository"
			if w.o.Workspace != nil {
				why = "the run's checkpoints are off (its workspace event says why)"
			}
			return g, fmt.Errorf("node %s: %s %w, and %s", n.ID, what, ErrNeedsGit, why)
		}
		return g, nil
	}
	if _, err := t.snap(context.WithoutCancel(ctx), "before node "+n.ID); err != nil {
		if g.scope != nil || g.rollback {
			return g, fmt.Errorf("node %s: checkpoint before the step: %w", n.ID, err)
		}
		// Nothing asked of the guard but what it does for any step: the
		// run goes on without it, as without checkpoints.
		w.workspaceFailed(t, err, runlog.Workspace{})
		return g, nil
	}
	g.visit = t.ws.Last.Commit
	g.start = g.visit
	if g.scope != nil {
		g.prefix = t.workdirPrefix()
	}
	return g, nil
}

// rollback reports whether a failed attempt of n is undone before its
// retry: the node's rollback, else the run's.
func (w *walker) rollback(n *types.ProcessedNode) bool {
	r := n.Rollback
	if r == "" {
		r = w.o.Rollback
	}
	return r == types.RollbackAttempt
}

// workdirPrefix is the workdir relative to the repository's root, with a
// slash, "" when it is the root: paths are anchored to the workdir.
func (t *tree) workdirPrefix() string {
	root, dir := t.ws.Repo.Root, t.dir
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel) + "/"
}

// inScope reports whether a path of the repository is one the step may
// change.
func (g *guard) inScope(p string) bool {
	rel, ok := strings.CutPrefix(p, g.prefix)
	return ok && g.scope.Match(rel)
}

// fromWorkdir is a path of the repository as the step sees it: from its
// workdir, where its paths are anchored and its agent works
// ("../README.md" for a step in src/).
func (g *guard) fromWorkdir(p string) string {
	if g.prefix == "" {
		return p
	}
	rel, err := filepath.Rel(filepath.FromSlash(g.prefix), filepath.FromSlash(p))
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// on reports whether checkpoints are on for the visit.
func (g *guard) on() bool { return g != nil && g.visit != "" && g.t.ws != nil }

// begin starts attempt a: its checkpoint is the one the last attempt's
// end left, or the visit's.
func (g *guard) begin(a int) { g.checked, g.attempt = false, a }

// stopped is the guard's part when the visit stops on an error no retry
// is for (an interrupt, a budget, a CLI that cannot run): what the
// attempt did outside its paths, or as a decision, is undone all the
// same. It returns why that could not be done, "" when it was.
func (v *step) stopped(ctx context.Context) string {
	g := v.g
	if !g.on() || g.attempt == 0 {
		return ""
	}
	var err error
	if v.n.Role == types.RoleDecision {
		err = g.keep(ctx, g.start, g.attempt, "decision")
	} else {
		_, err = g.checkScope(ctx, g.attempt)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// checkScope undoes the attempt's change outside the step's paths, and
// returns the critique that fails the attempt: "" when it changed nothing
// outside.
func (g *guard) checkScope(ctx context.Context, a int) (string, error) {
	if !g.on() || g.scope == nil || g.checked {
		return "", nil
	}
	g.checked = true
	msg := "scope of node " + g.n.ID + " attempt " + strconv.Itoa(a)
	u, err := g.t.ws.RestorePaths(context.WithoutCancel(ctx), g.start, func(p string) bool { return !g.inScope(p) }, msg)
	g.t.fresh = err == nil
	if err != nil {
		return "", fmt.Errorf("node %s: undoing the change outside its paths: %w", g.n.ID, err)
	}
	if u.Files == 0 {
		return "", nil
	}
	g.w.event(runlog.OutOfScope{Node: g.n.ID, Attempt: a, Checkpoint: u.Before.Commit, Files: u.Files,
		Paths: u.Paths, PathsLeftOut: u.Files - len(u.Paths)})
	names := make([]string, 0, min(len(u.Paths), maxScopeList))
	for _, p := range u.Paths[:min(len(u.Paths), maxScopeList)] {
		names = append(names, strconv.Quote(types.Clip(g.fromWorkdir(p.Path), maxName)))
	}
	list := listed(names, u.Files)
	g.say(a, fmt.Sprintf("undid the change to %s outside the step's paths: %s", types.Plural(u.Files, "file"), list), true)
	return fmt.Sprintf("you changed %s outside the paths this step may change (%s): %s. Those changes were undone; change only files those paths allow",
		types.Plural(u.Files, "file"), strings.Join(g.n.Paths, ", "), list), nil
}

// listed joins the first of total things, named in shown, with ", ",
// and says how many more there are: "a, b and 3 more".
func listed(shown []string, total int) string {
	s := strings.Join(shown, ", ")
	if more := total - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// mark is a checkpoint of the tree now, for keep to come back to: ""
// when checkpoints are off, or this one failed (the workspace event says
// so, and the run goes on, as for any checkpoint).
func (g *guard) mark(ctx context.Context, what string) string {
	if !g.on() {
		return ""
	}
	if _, err := g.t.snap(context.WithoutCancel(ctx), "before "+what); err != nil {
		g.w.workspaceFailed(g.t, err, runlog.Workspace{})
		return ""
	}
	return g.t.ws.Last.Commit
}

// keep puts the tree back as the checkpoint mark says after a call that
// must not change it (a decision, a validation: by), warning when it did.
func (g *guard) keep(ctx context.Context, mark string, a int, by string) error {
	if !g.on() || mark == "" {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	c, err := g.since(ctx, mark, "after the "+by+" of node "+g.n.ID)
	if err != nil {
		g.w.workspaceFailed(g.t, err, runlog.Workspace{}) // what it changed cannot be told
		return nil
	}
	if c.Empty() {
		return nil
	}
	_, err = g.t.ws.Restore(ctx, mark, "undo the "+by+" of node "+g.n.ID+" attempt "+strconv.Itoa(a))
	g.t.fresh = err == nil
	if err != nil {
		return fmt.Errorf("node %s: undoing what its %s changed: %w", g.n.ID, by, err)
	}
	g.w.event(runlog.TreeRestored{Node: g.n.ID, Attempt: a, By: by, Checkpoint: mark, Change: &c})
	g.say(a, fmt.Sprintf("the %s changed %s; undone (a %s must leave the working tree as it found it)", by, types.Plural(c.Files, "file"), by), true)
	return nil
}

// since checkpoints the tree and returns what changed since the
// checkpoint from.
func (g *guard) since(ctx context.Context, from, msg string) (types.Change, error) {
	c, err := g.t.snap(ctx, msg)
	if err != nil {
		return c, fmt.Errorf("node %s: checkpoint %s: %w", g.n.ID, msg, err)
	}
	if c.From == from {
		return c, nil
	}
	return g.t.ws.Repo.Changes(ctx, from, g.t.ws.Last.Commit)
}

// retry ends failed attempt a before its retry: it records the attempt's
// change and, with rollback attempt, undoes it, so the retry starts from
// the same tree. It returns the change, nil when checkpoints are off.
func (g *guard) retry(ctx context.Context, a int) (*types.Change, error) {
	if !g.on() {
		return nil, nil
	}
	ctx = context.WithoutCancel(ctx)
	c, err := g.since(ctx, g.start, "after node "+g.n.ID+" attempt "+strconv.Itoa(a))
	if err != nil {
		if g.rollback {
			return nil, err // asked for, and cannot be done
		}
		g.w.workspaceFailed(g.t, err, runlog.Workspace{})
		return nil, nil
	}
	if g.rollback {
		if !c.Empty() {
			_, err := g.t.ws.Restore(ctx, g.start, "rollback of node "+g.n.ID+" attempt "+strconv.Itoa(a))
			g.t.fresh = err == nil
			if err != nil {
				return &c, fmt.Errorf("node %s: rollback of attempt %d: %w", g.n.ID, a, err)
			}
			g.say(a, fmt.Sprintf("rolled back: undid its change to %s (checkpoint %.12s has it)", types.Plural(c.Files, "file"), c.To), false)
		}
		g.w.event(runlog.Rollback{Node: g.n.ID, Attempt: a, Checkpoint: g.start, Change: &c})
	}
	g.start = g.t.ws.Last.Commit
	return &c, nil
}

// rollbackName is what the retry event says of the attempt's change.
func (g *guard) rollbackName() string {
	if !g.on() {
		return ""
	}
	if g.rollback {
		return types.RollbackAttempt
	}
	return types.RollbackKeep
}

func (g *guard) say(a int, msg string, warn bool) {
	if u, ok := g.w.o.Progress.(Undoer); ok {
		u.Undone(g.n, a, msg, warn)
	}
}

// guardEnd ends attempt a as the guard sees it: the change of a step with
// paths outside them is undone and fails the attempt (its critique first);
// a decision's change is undone.
func (v *step) guardEnd(ctx context.Context, a int, o *outcome) error {
	g := v.g
	if !g.on() {
		return nil
	}
	if v.n.Role == types.RoleDecision {
		return g.keep(ctx, g.start, a, "decision")
	}
	reason, err := g.checkScope(ctx, a)
	if err != nil || reason == "" {
		return err
	}
	if o.reason != "" {
		reason += "; and: " + o.reason
	}
	o.reason, o.next, o.label = reason, "", ""
	return nil
}
