package workspace

// TEMPORARY: a minimal stand-in for the fork branch API that forkmerge
// builds; removed when it lands.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

type Tip struct{ Name, Commit string }

type Conflict struct {
	Path     string
	Branches []string
}

type Merge struct {
	Commit    string
	Conflicts []Conflict
	Clean     bool
}

func (r *Repo) AddBranchTree(ctx context.Context, runID, name, from string) (*Worktree, error) {
	parent := filepath.Join(r.Root, filepath.FromSlash(WorktreesDir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(parent, ".gitignore"), []byte(worktreeGitignore), 0o644); err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, runID+".b", name)
	if err := r.git(ctx, "", nil, nil, nil, "worktree", "add", "--quiet", "--detach", dir, from); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	wt := &Worktree{Dir: dir, Base: from}
	var err error
	if wt.Repo, err = Open(ctx, dir); err != nil {
		return nil, err
	}
	return wt, nil
}

func (r *Repo) RemoveBranchTree(ctx context.Context, wt *Worktree) error {
	return r.git(ctx, "", nil, nil, nil, "worktree", "remove", "--force", wt.Dir)
}

func (r *Repo) MergeBranches(ctx context.Context, base string, tips []Tip) (Merge, error) {
	m := Merge{Commit: base, Clean: true}
	for _, t := range tips {
		out, err := r.output(ctx, "", nil, "merge-tree", "--write-tree", "--name-only", m.Commit, t.Commit)
		conflicted := false
		if err != nil {
			var ge *GitError
			if !errorsAs(err, &ge) || ge.Code != 1 {
				return m, err
			}
			conflicted = true
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		tree := lines[0]
		if conflicted {
			m.Clean = false
			for _, l := range lines[1:] {
				if l == "" {
					break
				}
				m.Conflicts = append(m.Conflicts, Conflict{Path: l, Branches: []string{t.Name}})
			}
		}
		c, err := r.output(ctx, "", nil, "commit-tree", tree, "-p", m.Commit, "-p", t.Commit, "-m", "dtree: merge "+t.Name)
		if err != nil {
			return m, err
		}
		m.Commit = strings.TrimSpace(c)
	}
	return m, nil
}

func errorsAs(err error, target **GitError) bool { return errors.As(err, target) }
