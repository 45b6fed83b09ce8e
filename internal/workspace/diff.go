package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// What dtree diff and dtree undo need of a run that has ended
// (readme/workspace.md#looking-dtree-diff, #undo): the diff between two
// checkpoints as git prints it, whether a checkpoint is in the
// repository, and the run's checkpoints taken up again to snapshot and
// restore the tree.

// DiffOptions say how Diff prints.
type DiffOptions struct {
	Color    bool     // git's colours (the caller knows whether stdout is a terminal)
	Stat     bool     // --stat
	NameOnly bool     // --name-only
	Binary   bool     // --binary --full-index: a patch git apply takes, binary files too, 3-way too
	Dir      string   // where the paths are relative to; "" for the root
	Paths    []string // limit the diff to these pathspecs, as git diff's after --
}

// IsCommitID reports whether s is a full commit id, as checkpoints are
// recorded: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits. What a log
// says is checked with it before it reaches git's command line, where a
// value such as --output=FILE would be an option.
func IsCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Diff writes what changed from one checkpoint to another to w, as git
// diff prints it: no textconv filter and no external diff program of the
// repository's config run, no pager.
func (r *Repo) Diff(ctx context.Context, w io.Writer, from, to string, o DiffOptions) error {
	if !IsCommitID(from) || !IsCommitID(to) {
		return fmt.Errorf("diff: %q and %q are not both commit ids", from, to)
	}
	color := "--color=never"
	if o.Color {
		color = "--color=always"
	}
	args := []string{"diff", "--no-textconv", "--no-ext-diff", color}
	switch {
	case o.NameOnly:
		args = append(args, "--name-only")
	case o.Stat:
		args = append(args, "--stat")
	case o.Binary:
		args = append(args, "--binary", "--full-index")
	}
	args = append(append(args, from, to, "--"), o.Paths...)
	dir := o.Dir
	if dir == "" {
		dir = r.Root
	}
	out := &failed{w: w}
	if err := r.git(ctx, dir, nil, nil, out, args...); err != nil {
		if out.err != nil {
			// What reads stdout stopped (| head) or cannot take more (a
			// full disk): that is the error, not git's end by SIGPIPE.
			return fmt.Errorf("write: %w", out.err)
		}
		return err
	}
	return nil
}

// failed is a writer that keeps its first error.
type failed struct {
	w   io.Writer
	err error
}

func (f *failed) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}

// HasCommit reports whether the repository has the commit.
func (r *Repo) HasCommit(ctx context.Context, commit string) (bool, error) {
	if !IsCommitID(commit) {
		return false, nil
	}
	err := r.git(ctx, "", nil, nil, nil, "cat-file", "-e", commit+"^{commit}")
	var ge *GitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.Code == 128, errors.As(err, &ge) && ge.Code == 1:
		return false, nil
	}
	return false, err
}

// Reopen takes up the checkpoints of a run that has ended, to snapshot
// and restore the tree on its ref as the run did: new checkpoints go on
// top of the commit the ref points at now (none when it was removed),
// which is only where they are chained: what the run recorded is read
// from its log, not from the ref, which anything may have moved. exclude
// are as Begin's: the run's log directory. Close it when done.
func (r *Repo) Reopen(ctx context.Context, runID string, exclude ...string) (*Run, error) {
	dir := filepath.Join(r.GitDir, "dtree")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	run := &Run{Repo: r, ID: runID, Ref: Ref(runID), index: filepath.Join(dir, runID+".index")}
	for _, p := range exclude {
		if rel, ok := r.rel(p); ok && rel != "." {
			run.exclude = append(run.exclude, ":(exclude,literal)"+rel)
		}
	}
	out, err := r.output(ctx, "", nil, "rev-parse", "-q", "--verify", run.Ref)
	var ge *GitError
	switch {
	case errors.As(err, &ge) && ge.Code == 1: // no ref: the first checkpoint makes it
		return run, nil
	case err != nil:
		return nil, fmt.Errorf("checkpoints of run %s: %w", runID, err)
	}
	commit := strings.TrimSpace(out)
	tree, err := r.output(ctx, "", nil, "rev-parse", "--verify", commit+"^{tree}")
	if err != nil {
		return nil, fmt.Errorf("checkpoints of run %s: %s is not a checkpoint (%w): remove it with git update-ref -d %s", runID, run.Ref, err, run.Ref)
	}
	run.Last = Checkpoint{Commit: commit, Tree: strings.TrimSpace(tree)}
	return run, nil
}

// Snapshot records the working tree as it is now, as a commit on the
// run's newest checkpoint, without moving the ref: what a tree is, to
// compare with a checkpoint. A tree that did not change gives Last.
func (run *Run) Snapshot(ctx context.Context) (Checkpoint, error) {
	return run.snapshot(ctx, run.Last.Commit, "dtree "+run.ID+": the tree now")
}

// Tree is a commit's tree.
func (r *Repo) Tree(ctx context.Context, commit string) (string, error) {
	if !IsCommitID(commit) {
		return "", fmt.Errorf("%q is not a commit id", commit)
	}
	out, err := r.output(ctx, "", nil, "rev-parse", "--verify", commit+"^{tree}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
