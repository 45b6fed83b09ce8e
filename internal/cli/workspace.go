package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/internal/workspace"
)

// openWorkspace is the git work tree a run's checkpoints are taken in
// (readme/workspace.md), or why there is none.
func openWorkspace(ctx context.Context, workdir string) (*workspace.Repo, string) {
	repo, err := workspace.Open(ctx, workdir)
	if err != nil {
		if errors.Is(err, workspace.ErrNotGit) {
			return nil, workspace.ErrNotGit.Error()
		}
		return nil, err.Error()
	}
	return repo, ""
}

// runWorkspace is the git work tree a run's checkpoints are taken in,
// or nil and why there is none, for the run's workspace event ("" for a
// run outside git, which has none: dtree diff and undo read its absence
// so). With checkpoints false it runs no git command and says nothing.
// Outside git it says so once, a note on stderr (not with --quiet: the
// run is as it was before dtree had checkpoints); a git that fails is a
// warning, even with --quiet, as the run's other warnings are.
func (a *App) runWorkspace(ctx context.Context, s *settings.Settings, workdir string, quiet bool) (*workspace.Repo, string) {
	if !s.Checkpoints {
		return nil, "the setting checkpoints is false (" + s.Sources[settings.KeyCheckpoints].String() + ")"
	}
	if _, err := exec.LookPath("git"); err != nil {
		if !quiet {
			fmt.Fprintf(a.Err, "dtree: note: git is not installed: checkpoints are off (dtree docs workspace)\n")
		}
		return nil, ""
	}
	repo, err := workspace.Open(ctx, workdir)
	switch {
	case errors.Is(err, workspace.ErrNotGit):
		if !quiet {
			fmt.Fprintf(a.Err, "dtree: note: %s is not in a git repository: checkpoints are off (dtree docs workspace)\n", workdir)
		}
		return nil, ""
	case err != nil:
		fmt.Fprintf(a.Err, "dtree: warning: checkpoints are off: %v\n", err)
		return nil, err.Error()
	}
	return repo, ""
}
