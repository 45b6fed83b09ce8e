package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

type cleanOptions struct {
	config string
	logDir string
	keep   int
	all    bool
	dryRun bool
	force  bool
}

func (a *App) newClean() *cobra.Command {
	var o cleanOptions
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove old runs' logs and checkpoints, and the worktrees of finished runs",
		Long: `Clean removes the directories of the oldest runs of --log-dir past the newest
--keep (keep_runs by default), with their checkpoints (refs/dtree/runs/RUN-ID)
and the index files a killed run left in .git/dtree; and the worktrees of
runs that ended (dtree run --worktree), each on its branch dtree/RUN-ID,
and of fork branches a killed run left (.dtree/worktrees/RUN-ID.b/NAME).

Nothing a running dtree holds is removed. A worktree with files not
committed on its branch is kept unless --force. A branch stays, as the
run's result, unless HEAD has all of it (merged), as git branch -d would.
Each thing removed is a line on stdout; what is kept, and why, is on stderr.

Exit status: 0 done; 1 something could not be removed; 2 a usage error.

Docs: dtree docs workspace`,
		Example: `  dtree clean --dry-run     # what it would remove
  dtree clean --keep 10
  dtree clean --all         # every run that is not going`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.clean(cmd.Context(), o, cmd.Flags().Changed("keep"))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "settings file to use instead of ./dtree.yaml")
	f.StringVar(&o.logDir, "log-dir", "", "where run logs are (log_dir, default .dtree/runs)")
	f.IntVar(&o.keep, "keep", 0, "keep the newest N runs (default keep_runs)")
	f.BoolVar(&o.all, "all", false, "keep no run: remove every run that is not going")
	f.BoolVar(&o.dryRun, "dry-run", false, "say what would be removed, and remove nothing")
	f.BoolVar(&o.force, "force", false, "remove worktrees with files not committed on their branch too")
	return cmd
}

func (a *App) clean(ctx context.Context, o cleanOptions, keepGiven bool) error {
	s, err := a.settings(o.config, []string{settings.KeyLogDir, settings.KeyKeepRuns})
	if err != nil {
		return err
	}
	logDir := s.LogDir
	if o.logDir != "" {
		logDir = o.logDir
	}
	keep := s.KeepRuns
	switch {
	case o.all && keepGiven:
		return &UsageError{Err: errors.New("--all and --keep do not go together"), Hint: "--all is --keep 0: no run kept"}
	case o.all:
		keep = 0
	case keepGiven:
		if o.keep < 0 {
			return &UsageError{Err: fmt.Errorf("--keep %d: must be 0 or more", o.keep)}
		}
		keep = o.keep
	case s.Untrusted.Has(settings.KeyKeepRuns):
		return &UsageError{Err: fmt.Errorf("keep_runs comes from %s, which is not trusted", s.Untrusted.File),
			Hint: "pass --keep N, or trust the file ('dtree docs settings')"}
	case keep == 0:
		keep = -1 // keep_runs 0 keeps all: only worktrees and leftovers go
	}
	c := &cleaner{a: a, dry: o.dryRun, force: o.force}
	if keep >= 0 {
		c.pruneRuns(ctx, logDir, keep, "")
	}
	if cwd, err := os.Getwd(); err == nil {
		if repo, err := workspace.Open(ctx, cwd); err == nil {
			c.branchTrees(ctx, repo) // first: they may be in a run's worktree
			c.worktrees(ctx, repo)
			c.leftovers(repo, logDir)
		}
	}
	if c.failed > 0 {
		return fmt.Errorf("clean: %s could not be removed; the warnings above say why", types.Plural(c.failed, "thing"))
	}
	return nil
}

// cleaner removes what dtree clean and keep_runs remove, and says each
// thing on stdout (dtree clean) or counts it (keep_runs).
type cleaner struct {
	a      *App
	dry    bool
	force  bool
	quiet  bool // count, say nothing but warnings
	runs   int  // runs removed
	gone   map[string]bool
	failed int
	repos  map[string]*workspace.Repo
}

// did says what was (or, in a dry run, would be) removed.
func (c *cleaner) did(what string) {
	if c.quiet {
		return
	}
	if c.dry {
		fmt.Fprintf(c.a.Out, "would remove %s\n", what)
		return
	}
	fmt.Fprintf(c.a.Out, "removed %s\n", what)
}

func (c *cleaner) warn(format string, args ...any) {
	fmt.Fprintf(c.a.Err, "dtree: warning: "+format+"\n", args...)
}

// pruneRuns removes the runs of logDir past the newest keep, and their
// checkpoints; skip is a run not to remove (the one a resume goes on
// from).
func (c *cleaner) pruneRuns(ctx context.Context, logDir string, keep int, skip string) {
	old, err := runlog.PastRuns(logDir, keep)
	if err != nil {
		c.warn("list the runs of %s: %v", logDir, err)
		c.failed++
		return
	}
	for _, r := range old {
		if r.ID == skip {
			continue
		}
		if r.Going {
			if !c.quiet {
				fmt.Fprintf(c.a.Err, "dtree: kept run %s: it is still going (a dtree runs or resumes it)\n", r.Dir)
			}
			continue
		}
		repo := c.repoOf(ctx, r.Dir)
		if !c.dry {
			if err := runlog.RemoveRun(r); err != nil {
				c.warn("remove run %s: %v", r.Dir, err)
				c.failed++
				continue
			}
			if repo != nil {
				if err := repo.Prune(ctx, r.ID); err != nil {
					c.warn("%v", err)
				}
			}
		}
		c.runs++
		if c.gone == nil {
			c.gone = map[string]bool{}
		}
		c.gone[r.ID] = true
		c.did("run " + r.Dir)
	}
}

// repoOf is the repository of the run's checkpoints, nil when it had
// none or it is not there any more.
func (c *cleaner) repoOf(ctx context.Context, dir string) *workspace.Repo {
	w, ok := recordedWorkspace(dir)
	if !ok || w.Repo == "" {
		return nil
	}
	if c.repos == nil {
		c.repos = map[string]*workspace.Repo{}
	}
	if r, seen := c.repos[w.Repo]; seen {
		return r
	}
	r, err := workspace.Open(ctx, w.Repo)
	if err != nil && w.Worktree != "" {
		// The worktree is gone; the refs are its repository's.
		r, err = workspace.Open(ctx, filepath.Dir(filepath.Dir(filepath.Dir(w.Worktree))))
	}
	if err != nil {
		r = nil
	}
	c.repos[w.Repo] = r
	return r
}

// worktrees removes the worktrees of runs that ended, and their branches
// when HEAD has them.
func (c *cleaner) worktrees(ctx context.Context, repo *workspace.Repo) {
	list, err := repo.Worktrees(ctx)
	if err != nil {
		c.warn("%v", err)
		c.failed++
		return
	}
	var kept []string
	keptVerb := "kept"
	if c.dry {
		keptVerb = "would keep"
	}
	for _, w := range list {
		dir := relToCwd(w.Dir)
		err := repo.RemoveWorktree(ctx, w, c.force, c.dry)
		var changed *workspace.WorktreeChangedError
		switch {
		case errors.Is(err, workspace.ErrWorktreeInUse):
			continue // a run goes on in it
		case errors.As(err, &changed):
			c.warn("%s worktree %s: %d %s changed (edited, added or deleted) and not committed on branch %s: %s", keptVerb, dir, changed.Files,
				types.Choose(changed.Files, "file", "files"), w.Branch, joinPaths(changed.Paths, changed.Files))
			fmt.Fprintf(c.a.Err, "dtree: hint: commit them there, or remove it all the same: dtree clean --force\n")
			continue
		case err != nil:
			c.warn("%v", err)
			c.failed++
			continue
		}
		c.did("worktree " + dir)
		merged, err := repo.DeleteMergedBranch(ctx, w.Branch, c.dry)
		switch {
		case err != nil:
			c.warn("branch %s: %v", w.Branch, err)
		case merged:
			c.did("branch " + w.Branch + " (HEAD has it)")
		default:
			kept = append(kept, w.Branch)
		}
	}
	if len(kept) > 0 && !c.quiet {
		if len(kept) == 1 {
			fmt.Fprintf(c.a.Err, "dtree: %s branch %s, the run's result, which HEAD does not have\n", keptVerb, kept[0])
			fmt.Fprintf(c.a.Err, "dtree: hint: git merge %s takes it; git branch -D %s drops it\n", kept[0], kept[0])
		} else {
			fmt.Fprintf(c.a.Err, "dtree: %s branches, the runs' results, which HEAD does not have: %s\n", keptVerb, joinPaths(kept[:min(len(kept), 5)], len(kept)))
			fmt.Fprintf(c.a.Err, "dtree: hint: git merge BRANCH takes one; git branch -D BRANCH drops one\n")
		}
	}
}

// branchTrees removes the worktrees of fork branches that a run killed
// during its fork left (readme/parallel.md#isolation-and-merge); those of
// a run still going it leaves, its hold says which.
func (c *cleaner) branchTrees(ctx context.Context, repo *workspace.Repo) {
	list, err := repo.BranchTrees(ctx)
	if err != nil {
		c.warn("%v", err)
		c.failed++
		return
	}
	var runDirs []string
	byRun := map[string][]workspace.BranchTreeInfo{}
	for _, b := range list {
		if _, ok := byRun[b.RunDir]; !ok {
			runDirs = append(runDirs, b.RunDir)
		}
		byRun[b.RunDir] = append(byRun[b.RunDir], b)
	}
	for _, runDir := range runDirs {
		trees := byRun[runDir]
		var dirs []string
		for _, b := range trees {
			if !b.Gone {
				dirs = append(dirs, b.Dir)
			}
		}
		err := repo.RemoveDeadBranchTrees(ctx, runDir, dirs, c.dry)
		switch {
		case errors.Is(err, workspace.ErrWorktreeInUse):
			continue // its run goes on
		case err != nil:
			c.warn("%v", err)
			c.failed++
			continue
		}
		for _, b := range trees {
			c.did("worktree " + relToCwd(b.Dir) + " (branch of run " + b.RunID + ", which is not going)")
		}
	}
}

// leftoverAge is how long an index file of a run not going in logDir is
// left alone: it may be a run's of another log directory, between two
// checkpoints (and a run whose index is removed makes it again).
const leftoverAge = time.Hour

// leftovers removes the index files runs left in $GIT_DIR/dtree when
// they were killed.
func (c *cleaner) leftovers(repo *workspace.Repo, logDir string) {
	files, err := repo.LeftoverIndexes()
	if err != nil {
		return
	}
	for path, id := range files {
		dir := filepath.Join(logDir, id)
		if runlog.Going(dir) {
			continue
		}
		// A run of logDir that ended left it; another one only when old.
		if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err != nil && !c.gone[id] {
			if st, err := os.Stat(path); err != nil || time.Since(st.ModTime()) < leftoverAge {
				continue
			}
		}
		if !c.dry {
			if err := os.Remove(path); err != nil {
				c.warn("%v", err)
				continue
			}
		}
		c.did("index " + relToCwd(path))
	}
}

// joinPaths is the first paths, and how many more.
func joinPaths(paths []string, total int) string {
	s := ""
	for i, p := range paths {
		if i > 0 {
			s += ", "
		}
		s += p
	}
	if total > len(paths) {
		s += fmt.Sprintf(" and %d more", total-len(paths))
	}
	return s
}

// keepRuns applies keep_runs at the start of a run: the oldest finished
// runs of the log directory past it go, with their checkpoints; skip is
// the run a resume goes on from. Worktrees are dtree clean's.
func (a *App) keepRuns(ctx context.Context, logDir string, keep int, skip string, quiet bool) {
	if keep <= 0 {
		return
	}
	c := &cleaner{a: a, quiet: true}
	c.pruneRuns(ctx, logDir, keep, skip)
	if c.runs > 0 && !quiet {
		fmt.Fprintf(a.Err, "dtree: removed the %s of %s past the newest %d (keep_runs)\n", types.Plural(c.runs, "oldest run"), logDir, keep)
	}
}
