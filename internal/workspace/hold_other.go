//go:build !unix

package workspace

// holdWorktree holds nothing where there is no flock: dtree clean cannot
// tell a worktree in use, and relies on its check of changed files.
func holdWorktree(string, bool) (func(), error) { return func() {}, nil }
