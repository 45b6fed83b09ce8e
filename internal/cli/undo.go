package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/checkpoints"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

type undoOptions struct {
	runFlags
	to          string
	force, redo bool
}

func (a *App) newUndo() *cobra.Command {
	var o undoOptions
	cmd := &cobra.Command{
		Use:   "undo RUN_ID|latest [--to NODE|NODE@VISIT] [--force] [--redo]",
		Short: "Put the working tree back as it was before a run, or before a step of it",
		Long: `Undo puts the working tree back as it was before the run, from the checkpoint
the run took before its first step: files the run changed or deleted come
back, files it added go. With --to NODE, as it was before the node's last
visit (NODE@VISIT, before that visit). Ignored files are not touched, nor
are your HEAD, index, branches and stash.

Undo refuses when the working tree changed since the run ended (or since
its last undo), naming the files, unless --force. Either way the tree it
replaces is checkpointed first, on the run's ref, and the undo is written
in the run's undo.jsonl: --redo puts back the tree the last undo replaced,
which undoes the undo (and --redo again undoes that).

Exit status: 0; 2 when there is no such run, it is still going or another
dtree resume or undo holds it, it has no checkpoints (it ran outside git)
or the worktree it ran in (--worktree) was removed, NODE did not run or
ran in a fork's branch, the tree changed since (without --force), or
--redo finds no undo to take back.

Docs: dtree docs workspace`,
		Example: `  dtree undo latest                 # the tree as before the latest run
  dtree undo latest --to fix        # as before node fix's last visit
  dtree undo latest --redo          # take the last undo back`,
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{gracefulInterrupt: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.redo && o.to != "" {
				return &UsageError{Err: errors.New("undo: --redo and --to: --redo puts back the tree the last undo replaced, wherever it went"),
					Hint: "give one of them"}
			}
			return a.undo(cmd.Context(), args[0], o)
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "put the tree back as it was before this node's last visit (NODE@VISIT: that visit)")
	f.BoolVar(&o.force, "force", false, "undo even though the tree changed since the run ended (what it replaces is checkpointed)")
	f.BoolVar(&o.redo, "redo", false, "put back the tree the last undo of the run replaced")
	return cmd
}

func (a *App) undo(ctx context.Context, id string, o undoOptions) error {
	w, err := a.openRun(ctx, "undo", id, o.runFlags)
	if err != nil {
		return err
	}
	runID := w.rec.RunID
	// Held while the tree is put back: a resume or another undo of the
	// run started meanwhile is refused, not run beside it.
	release, err := runlog.LockResume(w.dir)
	if err != nil {
		var busy *runlog.ResumingError
		if errors.As(err, &busy) {
			who := "another dtree"
			if busy.Pid > 0 {
				who = fmt.Sprintf("another dtree (pid %d)", busy.Pid)
			}
			return &UsageError{Err: fmt.Errorf("undo: run %s: %s is resuming or undoing it", runID, who),
				Hint: "wait for it to end, then undo"}
		}
		return &UsageError{Err: fmt.Errorf("undo: run %s: %w", runID, err)}
	}
	defer release()
	if runlog.Going(w.dir) {
		return &UsageError{Err: fmt.Errorf("undo: run %s is still going: a dtree holds its events.jsonl", runID),
			Hint: "wait for it to end, or stop it (Ctrl-C), then undo it"}
	}
	// Absolute: relative, workspace would read it from the repository's
	// top, not from here.
	logDir, err := filepath.Abs(filepath.Dir(w.dir))
	if err != nil {
		return fmt.Errorf("undo: %w", err)
	}
	u, err := checkpoints.Undo(ctx, w.repo, w.rec, w.dir, checkpoints.UndoOptions{
		To: o.to, Known: w.known(), Redo: o.redo, Force: o.force, LogDir: logDir})
	var changed *checkpoints.ChangedError
	switch {
	case errors.As(err, &changed):
		return &UsageError{Err: fmt.Errorf("undo: %w", err),
			Hint: fmt.Sprintf("to undo all the same: dtree undo %s --force; the tree it replaces, these changes with it, is checkpointed first, and dtree undo %s --redo puts it back", runID, runID)}
	case err != nil && u == nil:
		return checkpointError("undo", err)
	case err != nil:
		return fmt.Errorf("undo: %w", err)
	}
	if u.Already {
		fmt.Fprintf(a.Err, "dtree: the working tree is already as it was %s: nothing to undo\n", u.What)
		return nil
	}
	c := u.Change
	fmt.Fprintf(a.Err, "dtree: the working tree is as it was %s (checkpoint %s): %s, +%d -%d lines\n",
		u.What, shortID(u.To), types.Plural(c.Files, "file"), c.Added, c.Removed)
	fmt.Fprintf(a.Err, "dtree: hint: the tree it replaced is checkpoint %s; to put it back: dtree undo %s --redo\n", shortID(u.Replaced), runID)
	return nil
}

// shortID is a commit id cut to 12 digits, as messages show it.
func shortID(commit string) string { return commit[:min(len(commit), 12)] }
