package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/internal/workspace"
)

// A run with --worktree (readme/workspace.md#worktrees) goes on in a git
// worktree of its own on branch dtree/RUN-ID; its logs stay in log_dir,
// beside the user's checkout, where `dtree resume`, `dtree diff` and the
// user find them.

// runWorktree is the worktree a run goes on in, held while it does.
type runWorktree struct {
	wt      *workspace.Worktree
	release func()
}

// worktreeFor makes the new run id's worktree (mode head or dirty) in
// the repository workdir is in, or, for a resume, takes the run's
// (branch). It returns the worktree and the workdir inside it: workdir's
// place in the repository. exclude is what the dirty commit leaves out
// (the log directory).
func worktreeFor(ctx context.Context, workdir, mode, branch, recorded, id string, exclude ...string) (*runWorktree, string, error) {
	var (
		repo *workspace.Repo
		err  error
	)
	if branch != "" {
		// The repository of the worktree recorded: its place is derived
		// from the branch, and must be where the log says.
		root := strings.TrimSuffix(recorded, string(filepath.Separator)+filepath.Join(filepath.FromSlash(workspace.WorktreesDir), strings.TrimPrefix(branch, workspace.BranchPrefix)))
		if root == recorded {
			return nil, "", &UsageError{Err: fmt.Errorf("the run's worktree %s is not where dtree makes worktrees (%s/%s in the repository)", recorded, workspace.WorktreesDir, strings.TrimPrefix(branch, workspace.BranchPrefix))}
		}
		repo, err = workspace.Open(ctx, root)
		if err == nil && repo.Root != root {
			err = fmt.Errorf("%s is not the top of a git work tree", root)
		}
	} else {
		repo, err = workspace.Open(ctx, workdir)
	}
	if err != nil {
		if errors.Is(err, workspace.ErrNotGit) {
			if _, lerr := exec.LookPath("git"); lerr != nil {
				return nil, "", &UsageError{Err: errors.New("--worktree needs git, and git is not installed"),
					Hint: "install git, or run without --worktree (worktree: off): 'dtree docs workspace'"}
			}
			return nil, "", &UsageError{Err: fmt.Errorf("--worktree needs a git repository, and %s is in none", workdir),
				Hint: "run it in a git checkout, or without --worktree (worktree: off): 'dtree docs workspace'"}
		}
		if branch != "" {
			return nil, "", &UsageError{Err: fmt.Errorf("the worktree %s that the run's log names: %w", recorded, err),
				Hint: "its log may have been edited: start a new run with dtree run --worktree"}
		}
		return nil, "", &UsageError{Err: fmt.Errorf("--worktree: %w", err)}
	}
	var wt *workspace.Worktree
	if branch != "" {
		wt, err = repo.Worktree(ctx, branch)
	} else {
		wt, err = repo.AddWorktree(ctx, id, mode == settings.WorktreeDirty, exclude...)
	}
	if err != nil {
		hint := "'dtree docs workspace' says how worktrees are made"
		if branch != "" {
			hint = "its log may have been edited, or the branch deleted: start a new run with dtree run --worktree"
		}
		if errors.Is(err, workspace.ErrUnborn) {
			hint = "commit first, or start from the working tree as it is: --worktree=dirty"
		}
		return nil, "", &UsageError{Err: err, Hint: hint}
	}
	release, err := wt.Hold()
	if err != nil {
		return nil, "", &UsageError{Err: fmt.Errorf("worktree %s: %w", wt.Dir, err),
			Hint: "wait for the dtree that goes on in it to end"}
	}
	inside := workdir
	if !within(wt.Dir, workdir) {
		real := workdir
		if r, err := filepath.EvalSymlinks(workdir); err == nil {
			real = r
		}
		rel, err := filepath.Rel(repo.Root, real)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			release()
			return nil, "", &UsageError{Err: fmt.Errorf("--workdir %s is not in the repository of the worktree, %s", workdir, repo.Root)}
		}
		inside = filepath.Join(wt.Dir, rel)
	}
	// A directory git does not have (empty, or ignored) is made.
	if err := os.MkdirAll(inside, 0o755); err != nil {
		release()
		return nil, "", &UsageError{Err: fmt.Errorf("worktree %s: %w", wt.Dir, err)}
	}
	return &runWorktree{wt: wt, release: release}, inside, nil
}

// within says whether path is dir or under it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// finish commits the worktree's files on its branch, lets go of it, and
// says where the run's result is and how to look at it and take it. The
// commit is made however the run ended: a failed or interrupted run's
// files are there for a resume and for the user to look at.
func (a *App) finishWorktree(ctx context.Context, rw *runWorktree, runID string, sum *run.Summary, logDir string, quiet bool) error {
	defer rw.release()
	wt := rw.wt
	msg := fmt.Sprintf("dtree run %s: %s\n\nThe files of dtree's worktree %s as run %s left them (%s).", runID, sum.Status, wt.Dir, runID, sum.Status)
	commit, changed, err := wt.Commit(context.WithoutCancel(ctx), msg, logDir)
	if err != nil {
		fmt.Fprintf(a.Err, "dtree: warning: %v\n", err)
		return err
	}
	sum.Worktree = &run.WorktreeResult{Dir: wt.Dir, Branch: wt.Branch, Commit: commit, Changed: changed}
	if quiet {
		return nil
	}
	dir := relToCwd(wt.Dir)
	if changed {
		fmt.Fprintf(a.Err, "dtree: the run's work is committed on branch %s (%s), in worktree %s\n", wt.Branch, short(commit), dir)
	} else {
		fmt.Fprintf(a.Err, "dtree: the run changed no file of worktree %s: branch %s is where it started (%s)\n", dir, wt.Branch, short(commit))
	}
	fmt.Fprintf(a.Err, "dtree: hint: look at it: git diff HEAD...%s\n", wt.Branch)
	fmt.Fprintf(a.Err, "dtree: hint: take it: git merge %s\n", wt.Branch)
	fmt.Fprintf(a.Err, "dtree: hint: remove the worktree: git worktree remove %s (or dtree clean; the branch stays)\n", shellJoin([]string{dir}))
	return nil
}

// relToCwd is path relative to the current directory when it is under
// it, else path.
func relToCwd(path string) string {
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, path); err == nil && filepath.IsLocal(rel) {
			return rel
		}
	}
	return path
}

func short(commit string) string { return commit[:min(len(commit), 12)] }

// recordedWorktree is the branch and directory of the worktree the run
// of dir went on in, from its workspace event; "" when it had none.
func recordedWorktree(dir string) (branch, worktree string) {
	w, _ := recordedWorkspace(dir)
	return w.Branch, w.Worktree
}

// recordedWorkspace is the first workspace event of the run of dir,
// written after run_start: reading stops there, whatever the log's size.
func recordedWorkspace(dir string) (runlog.Workspace, bool) {
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return runlog.Workspace{}, false
	}
	defer f.Close()
	r := runlog.NewEventReader(f)
	r.Only(runlog.EventWorkspace)
	for {
		ev, err := r.Next()
		if err != nil {
			var le *runlog.LineError
			if errors.As(err, &le) {
				continue
			}
			return runlog.Workspace{}, false
		}
		if w, ok := ev.(runlog.Workspace); ok {
			return w, true
		}
	}
}
