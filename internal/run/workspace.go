package run

import (
	"context"
	"path/filepath"
	"strconv"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// The workspace (readme/workspace.md): a checkpoint of the working tree
// before the run and after each visit, on the run's private ref, and
// what each visit changed in its node_end and result, and the whole run
// in run_end and the summary.

// tree is a working tree the run's steps change and its checkpoints: the
// run's own (the user's checkout, or the --worktree), or a fork branch's
// worktree (fork.go). Only its branch uses it.
type tree struct {
	ws *workspace.Run // its checkpoints; nil when off
	// fresh: ws.Last is the tree as it is: no agent or command has run
	// since it was taken, so another checkpoint would find nothing
	// (snap); false after a checkpoint that failed.
	fresh bool
	first string // the checkpoint before the tree's first step
	// carriedFirst is the checkpoint before the first step a resumed run
	// took from the earlier one, where the run the gates speak of began.
	carriedFirst string
	// gateMark is the checkpoint the last gate asked at, on a terminal.
	gateMark string
	dir      string // the steps' workdir in the tree
	// wt is a fork branch's worktree; nil for the run's tree.
	wt *workspace.Worktree
	// off is why its checkpoints went off (workspaceFailed), "" while on.
	off string
}

// WorkspaceWarner is a Progress told, once, that the run's checkpoints
// stopped (git failed): the run goes on without them.
type WorkspaceWarner interface {
	WorkspaceOff(reason string)
}

// beginWorkspace takes the checkpoint before the first step and says
// where the run's checkpoints are, or why there are none.
func (w *walker) beginWorkspace(ctx context.Context) {
	repo := w.o.Workspace
	if repo == nil || w.o.Log == nil {
		if w.o.WorkspaceOff != "" && w.o.Log != nil {
			w.event(runlog.Workspace{Off: w.o.WorkspaceOff}) // the command said so, once
		}
		return
	}
	var wt runlog.Workspace // where the run goes on, for a resume
	if w.o.Worktree != nil {
		wt.Worktree, wt.Branch = w.o.Worktree.Dir, w.o.Worktree.Branch
	}
	// Absolute: Begin reads a relative path from the repository's top, and
	// a log_dir relative to a subdirectory is not there.
	logs := filepath.Dir(w.o.Log.Dir)
	if abs, err := filepath.Abs(logs); err == nil {
		logs = abs
	}
	parent := ""
	if r := w.o.Resume; r != nil && r.Fork != nil && r.Fork.Base != "" {
		// It goes on inside a fork: its tree's checkpoints go on from the
		// fork's, as the join's merge wants of the tree it merges into.
		parent = r.Fork.Base
	}
	ws, err := repo.Begin(ctx, w.o.Log.RunID, parent, logs)
	if err != nil {
		w.workspaceFailed(w.root, err, wt)
		return
	}
	t := w.root
	t.ws, t.fresh, t.first = ws, true, ws.Last.Commit
	w.event(runlog.Workspace{Repo: repo.Root, Ref: ws.Ref, Checkpoint: ws.Last.Commit, Worktree: wt.Worktree, Branch: wt.Branch})
}

// workspaceFailed turns the checkpoints of tree t off for the rest of the
// run: a git that failed once is not asked again after every step. It is
// said once, in the log and on stderr; wt keeps a worktree run's worktree
// and branch in the event, for its resume.
func (w *walker) workspaceFailed(t *tree, err error, wt runlog.Workspace) {
	if t.ws != nil {
		t.ws.Close()
		t.ws = nil
	}
	reason := err.Error() + ": checkpoints are off for the rest of the run"
	t.off = err.Error()
	w.event(runlog.Workspace{Off: reason, Worktree: wt.Worktree, Branch: wt.Branch})
	if ww, ok := w.o.Progress.(WorkspaceWarner); ok {
		ww.WorkspaceOff(reason)
	}
}

// endWorkspace lets go of what the checkpoints held while the run went
// on; the checkpoints stay.
func (w *walker) endWorkspace() {
	if w.root.ws != nil {
		w.root.ws.Close()
	}
}

// checkpoint records tree t after a visit and returns what the visit
// changed since from, the checkpoint it started from (the guard's
// checkpoints may come between): nil when checkpoints are off or the
// checkpoint failed (the run goes on without them; workspaceFailed says
// so).
func (w *walker) checkpoint(ctx context.Context, t *tree, n *types.ProcessedNode, visit int, from string) *types.Change {
	if t.ws == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	c, err := t.snap(ctx, "after node "+n.ID+" visit "+strconv.Itoa(visit))
	if err == nil && from != "" && c.From != from {
		c, err = t.ws.Repo.Changes(ctx, from, t.ws.Last.Commit)
	}
	if err != nil {
		w.workspaceFailed(t, err, runlog.Workspace{})
		return nil
	}
	return &c
}

// snap checkpoints the tree, unless the newest checkpoint is of the tree
// as it is (fresh): then nothing changed, and no git command runs.
func (t *tree) snap(ctx context.Context, msg string) (types.Change, error) {
	if t.fresh {
		last := t.ws.Last.Commit
		return types.Change{From: last, To: last, Paths: []types.PathChange{}}, nil
	}
	c, err := t.ws.Checkpoint(ctx, msg)
	t.fresh = err == nil
	return c, err
}

// runChange is what the whole run changed, from the checkpoint before it
// to the newest: nil when checkpoints are off, or were turned off on the
// way (a part of the run would be missing from it).
func (w *walker) runChange(ctx context.Context) *types.Change {
	t := w.root
	if t.ws == nil {
		return nil
	}
	c, err := t.ws.Repo.Changes(context.WithoutCancel(ctx), t.first, t.ws.Last.Commit)
	if err != nil {
		w.workspaceFailed(t, err, runlog.Workspace{})
		return nil
	}
	return &c
}
