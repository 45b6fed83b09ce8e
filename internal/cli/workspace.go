package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// needsGit refuses, before any agent runs, a run outside git that asks
// for what only checkpoints can do: rollback attempt (the setting, or a
// node's) and paths (readme/workspace.md#scope). off is why checkpoints
// are off in a git repository (the setting, a git that failed), "" for a
// run outside git.
func needsGit(c *chart.Chart, page types.Page, s *settings.Settings, off string) error {
	var paths, rollback, forks []string
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Page == page.ID && n.Fork != nil {
			forks = append(forks, n.ID)
		}
		if n.Page != page.ID || n.Role == types.RoleTerminator {
			continue
		}
		if len(n.Paths) > 0 {
			paths = append(paths, n.ID)
		}
		if n.Rollback == types.RollbackAttempt {
			rollback = append(rollback, n.ID)
		}
	}
	var what []string
	if len(paths) > 0 {
		what = append(what, fmt.Sprintf("paths (%s %s)", nodeWord(len(paths)), strings.Join(paths, ", ")))
	}
	if len(rollback) > 0 {
		what = append(what, fmt.Sprintf("rollback attempt (%s %s)", nodeWord(len(rollback)), strings.Join(rollback, ", ")))
	} else if s.Rollback == types.RollbackAttempt {
		what = append(what, fmt.Sprintf("rollback attempt (%s)", "the rollback setting, from "+s.Sources[settings.KeyRollback].String()))
	}
	if len(forks) > 0 {
		// Each branch works in a git worktree made from the fork's
		// checkpoint (readme/parallel.md#isolation-and-merge).
		what = append(what, fmt.Sprintf("the fork%s of %s %s (parallel branches)", plural(len(forks)), nodeWord(len(forks)), strings.Join(forks, ", ")))
	}
	if len(what) == 0 {
		return nil
	}
	remove := "remove paths and rollback from the chart and the settings ('dtree docs workspace')"
	if len(forks) > 0 {
		remove = "draw the branches one after another ('dtree docs parallel')"
	}
	if off != "" {
		return &UsageError{Err: fmt.Errorf("%s %s checkpoints, and they are off: %s", strings.Join(what, " and "), needs(len(what)), off),
			Hint: "let dtree take checkpoints (checkpoints: true, without --no-checkpoints), or " + remove}
	}
	return &UsageError{Err: fmt.Errorf("%s %s a git repository, and the workdir is in none", strings.Join(what, " and "), needs(len(what))),
		Hint: "run the chart in a git repository (git init, and commit what is there), or " + remove}
}

func plural(n int) string {
	if n > 1 {
		return "s"
	}
	return ""
}

func needs(n int) string {
	if n > 1 {
		return "need"
	}
	return "needs"
}

func nodeWord(n int) string {
	if n > 1 {
		return "nodes"
	}
	return "node"
}

// runWorkspace is the git work tree a run's checkpoints are taken in,
// or nil and why there is none, for the run's workspace event ("" for a
// run outside git, which has none: dtree diff and undo read its absence
// so). With checkpoints false it runs no git command and says nothing.
// Outside git, note is what to say once (the run says it when it starts,
// not with --quiet: the run is as it was before dtree had checkpoints); a
// git that fails is a warning, said now even with --quiet, as the run's
// other warnings are.
func (a *App) runWorkspace(ctx context.Context, s *settings.Settings, workdir string) (repo *workspace.Repo, off, note string) {
	if !s.Checkpoints {
		return nil, "the setting checkpoints is false (" + s.Sources[settings.KeyCheckpoints].String() + ")", ""
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, "", "dtree: note: git is not installed: checkpoints are off (dtree docs workspace)"
	}
	repo, err := workspace.Open(ctx, workdir)
	switch {
	case errors.Is(err, workspace.ErrNotGit):
		return nil, "", fmt.Sprintf("dtree: note: %s is not in a git repository: checkpoints are off (dtree docs workspace)", workdir)
	case err != nil:
		fmt.Fprintf(a.Err, "dtree: warning: checkpoints are off: %v\n", err)
		return nil, err.Error(), ""
	}
	return repo, "", ""
}
