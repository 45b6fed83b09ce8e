package run

import (
	"context"
	"path/filepath"
	"strconv"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// The workspace (readme/workspace.md): a checkpoint of the working tree
// before the run and after each visit, on the run's private ref, and
// what each visit changed in its node_end and result, and the whole run
// in run_end and the summary.

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
		if w.o.WorkspaceOff != "" {
			w.event(runlog.Workspace{Off: w.o.WorkspaceOff}) // the command said so, once
		}
		return
	}
	// Absolute: Begin reads a relative path from the repository's top, and
	// a log_dir relative to a subdirectory is not there.
	logs := filepath.Dir(w.o.Log.Dir)
	if abs, err := filepath.Abs(logs); err == nil {
		logs = abs
	}
	ws, err := repo.Begin(ctx, w.o.Log.RunID, "", logs)
	if err != nil {
		w.workspaceFailed(err)
		return
	}
	w.ws, w.wsFirst = ws, ws.Last.Commit
	w.event(runlog.Workspace{Repo: repo.Root, Ref: ws.Ref, Checkpoint: ws.Last.Commit})
}

// workspaceFailed turns the checkpoints off for the rest of the run: a
// git that failed once is not asked again after every step. It is said
// once, in the log and on stderr.
func (w *walker) workspaceFailed(err error) {
	if w.ws != nil {
		w.ws.Close()
		w.ws = nil
	}
	reason := err.Error() + ": checkpoints are off for the rest of the run"
	w.event(runlog.Workspace{Off: reason})
	if ww, ok := w.o.Progress.(WorkspaceWarner); ok {
		ww.WorkspaceOff(reason)
	}
}

// endWorkspace lets go of what the checkpoints held while the run went
// on; the checkpoints stay.
func (w *walker) endWorkspace() {
	if w.ws != nil {
		w.ws.Close()
	}
}

// checkpoint records the tree after a visit and returns what the visit
// changed: nil when checkpoints are off or the checkpoint failed (the
// run goes on without them; workspaceFailed says so).
func (w *walker) checkpoint(ctx context.Context, n *types.ProcessedNode, visit int) *types.Change {
	if w.ws == nil {
		return nil
	}
	c, err := w.ws.Checkpoint(context.WithoutCancel(ctx), "after node "+n.ID+" visit "+strconv.Itoa(visit))
	if err != nil {
		w.workspaceFailed(err)
		return nil
	}
	return &c
}

// runChange is what the whole run changed, from the checkpoint before it
// to the newest: nil when checkpoints are off, or were turned off on the
// way (a part of the run would be missing from it).
func (w *walker) runChange(ctx context.Context) *types.Change {
	if w.ws == nil {
		return nil
	}
	c, err := w.ws.Repo.Changes(context.WithoutCancel(ctx), w.wsFirst, w.ws.Last.Commit)
	if err != nil {
		w.workspaceFailed(err)
		return nil
	}
	return &c
}
