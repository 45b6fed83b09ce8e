package cli

import (
	"context"
	"errors"

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
