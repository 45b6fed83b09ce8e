package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/checkpoints"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/internal/workspace"
)

// dtree diff and dtree undo (readme/workspace.md): what a run, or a
// step of it, changed in the working tree, and putting it back.

// runFlags name a run's log directory: --log-dir, else the settings'.
type runFlags struct {
	logDir string
	config string
}

func (f *runFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.logDir, "log-dir", "", "where run logs are (log_dir, default .dtree/runs)")
	cmd.Flags().StringVar(&f.config, "config", "", "settings file to use instead of ./dtree.yaml")
}

// runWorkspace is a run's checkpoints and the repository they are in.
type runWorkspace struct {
	dir  string // the run's log directory
	rec  *checkpoints.Record
	repo *workspace.Repo
}

// openRun finds the run id names and reads its checkpoints; verb is the
// command, "diff" or "undo", for messages.
func (a *App) openRun(ctx context.Context, verb, id string, f runFlags) (*runWorkspace, error) {
	logDir := f.logDir
	if logDir == "" {
		s, err := a.settings(f.config, []string{settings.KeyLogDir})
		if err != nil {
			return nil, err
		}
		logDir = s.LogDir
	}
	dir, err := runlog.FindRun(logDir, id)
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("%s: %w", verb, err),
			Hint: fmt.Sprintf("give the id of a run under %s (its directory's name), or latest; pass --log-dir when its logs are elsewhere", logDir)}
	}
	rec, err := checkpoints.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: read run %s: %w", verb, filepath.Base(dir), err)
	}
	if err := rec.Check(); err != nil {
		return nil, checkpointError(verb, err)
	}
	at := rec.Repo
	if st, err := os.Stat(rec.Repo); err != nil || !st.IsDir() {
		hint := "a repository moved or removed: its checkpoints went with it"
		top, wt, inWorktree := strings.Cut(filepath.ToSlash(rec.Repo), "/"+workspace.WorktreesDir+"/")
		if inWorktree {
			// A --worktree run's worktree, removed by dtree clean or git
			// worktree remove: its result is still on its branch, and
			// its checkpoints in the repository it was made from, which
			// shares their commits and refs. A diff reads them there;
			// an undo has no tree to put them back into.
			id, _, _ := strings.Cut(wt, "/")
			hint = fmt.Sprintf("the run's worktree was removed (dtree clean, git worktree remove); its result is on branch dtree/%s: git diff HEAD...dtree/%s", id, id)
			if st, err := os.Stat(filepath.FromSlash(top)); verb == "diff" && err == nil && st.IsDir() {
				at = filepath.FromSlash(top)
			}
		}
		if at == rec.Repo {
			return nil, &UsageError{Err: fmt.Errorf("%s: run %s's checkpoints are in the repository %s, which is not there any more", verb, rec.RunID, rec.Repo),
				Hint: hint}
		}
	}
	repo, err := workspace.Open(ctx, at)
	if err != nil {
		if errors.Is(err, workspace.ErrNotGit) {
			return nil, &UsageError{Err: fmt.Errorf("%s needs a git repository: run %s's checkpoints are in %s: %w", verb, rec.RunID, rec.Repo, err),
				Hint: "run dtree " + verb + " where git is installed and the run's repository is"}
		}
		return nil, fmt.Errorf("%s: %w", verb, err)
	}
	return &runWorkspace{dir: dir, rec: rec, repo: repo}, nil
}

// checkpointError is a checkpoints.Error as a usage error (exit 2), with
// its hint; other errors as they are.
func checkpointError(verb string, err error) error {
	var ce *checkpoints.Error
	if errors.As(err, &ce) {
		return &UsageError{Err: fmt.Errorf("%s: %w", verb, err), Hint: ce.Hint}
	}
	return fmt.Errorf("%s: %w", verb, err)
}

// known says whether a node is one of the chart the run walked, from its
// outline.json; nil when that cannot be read.
func (w *runWorkspace) known() func(string) bool {
	b, err := os.ReadFile(filepath.Join(w.dir, outlineFile))
	if err != nil {
		return nil
	}
	var o chart.Outline
	if json.Unmarshal(b, &o) != nil {
		return nil
	}
	ids := make(map[string]bool, len(o.Nodes))
	for _, n := range o.Nodes {
		ids[n.ID] = true
	}
	return func(id string) bool { return ids[id] }
}

// has checks that the repository has the checkpoints the log names.
func (w *runWorkspace) has(ctx context.Context, verb string, commits ...string) error {
	for _, c := range commits {
		ok, err := w.repo.HasCommit(ctx, c)
		if err != nil {
			return fmt.Errorf("%s: %w", verb, err)
		}
		if !ok {
			return &UsageError{Err: fmt.Errorf("%s: checkpoint %s of run %s is not in the repository %s", verb, c, w.rec.RunID, w.repo.Root),
				Hint: "its ref " + w.rec.Ref + " was removed (dtree clean, git update-ref -d) and git gc pruned its commits"}
		}
	}
	return nil
}

type diffOptions struct {
	runFlags
	stat, nameOnly bool
}

func (a *App) newDiff() *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff RUN_ID|latest [NODE|NODE@VISIT] [-- PATH...]",
		Short: "Show what a run, or a step of it, changed in the working tree",
		Long: `Diff prints what a run changed in the working tree, as git diff does: from
the checkpoint before the run to the last one it took. With NODE, what the
node's last visit changed; with NODE@VISIT, that visit's (NODE@2, its
second). Paths after -- limit it, as git diff's do.

The checkpoints are read from the run's events.jsonl, and taken only in a
git repository (dtree docs workspace).

Exit status: 0; 2 when there is no such run, it has no checkpoints (it
ran outside git), or NODE did not run or has no such visit. A run in a
worktree of its own (--worktree) that was removed since is read from the
repository the worktree was made from.

Docs: dtree docs workspace`,
		Example: `  dtree diff latest                 # what the latest run changed
  dtree diff latest fix             # what node fix did on its last visit
  dtree diff latest fix@2 --stat    # its second visit, as a summary
  dtree diff latest -- src/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			pos, paths := splitAtDash(cmd, args)
			if len(pos) < 1 || len(pos) > 2 {
				return &UsageError{Err: fmt.Errorf("dtree diff takes a run and at most one node, got %d arguments", len(pos)),
					Hint: "dtree diff RUN_ID|latest [NODE|NODE@VISIT] [-- PATH...]"}
			}
			if o.stat && o.nameOnly {
				return &UsageError{Err: errors.New("diff: --stat and --name-only: give one of them")}
			}
			return a.diff(cmd.Context(), pos, paths, o)
		},
	}
	o.register(cmd)
	cmd.Flags().BoolVar(&o.stat, "stat", false, "a summary of the files changed, as git diff --stat")
	cmd.Flags().BoolVar(&o.nameOnly, "name-only", false, "the names of the files changed only")
	return cmd
}

// splitAtDash is the arguments before -- and the paths after it.
func splitAtDash(cmd *cobra.Command, args []string) (pos, paths []string) {
	if i := cmd.ArgsLenAtDash(); i >= 0 {
		return args[:i], args[i:]
	}
	return args, nil
}

func (a *App) diff(ctx context.Context, pos, paths []string, o diffOptions) error {
	w, err := a.openRun(ctx, "diff", pos[0], o.runFlags)
	if err != nil {
		return err
	}
	from, to, what := w.rec.Before, w.rec.Last, "run "+w.rec.RunID
	if len(pos) == 2 {
		v, err := w.rec.Find(pos[1], w.known())
		if err != nil {
			return checkpointError("diff", err)
		}
		from, to, what = v.From, v.To, fmt.Sprintf("node %s (visit %d)", v.Node, v.Visit)
		if v.Branch != "" { // its checkpoints are of the branch's worktree
			what = fmt.Sprintf("node %s (visit %d, fork branch %s)", v.Node, v.Visit, v.Branch)
		}
	}
	if err := w.has(ctx, "diff", from, to); err != nil {
		return err
	}
	dir := ""
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(w.repo.Root, cwd); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			dir = cwd // paths are the user's, relative to where they are
		}
	}
	if len(pos) == 1 && runlog.Going(w.dir) {
		// Its steps so far: the one going has no checkpoint after it yet.
		what += " (still going: the steps it finished)"
		if from != to {
			fmt.Fprintf(a.Err, "dtree: run %s is still going: this is what the steps it finished changed\n", w.rec.RunID)
		}
	}
	if from == to {
		fmt.Fprintf(a.Err, "dtree: %s changed no file\n", what)
		return nil
	}
	err = w.repo.Diff(ctx, a.Out, from, to, workspace.DiffOptions{
		Color: isTerminal(a.Out, a.Getenv) && a.Getenv("NO_COLOR") == "",
		Stat:  o.stat, NameOnly: o.nameOnly, Dir: dir, Paths: paths})
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return nil
}
