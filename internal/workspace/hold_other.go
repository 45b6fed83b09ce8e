//go:build !unix

package workspace

import "errors"

// holdWorktree holds nothing where there is no flock: dtree clean cannot
// tell a worktree in use, and relies on its check of changed files.
func holdWorktree(string, bool) (func(), error) { return func() {}, nil }

// errNoLocks is a branch tree dtree clean cannot tell in use or not.
var errNoLocks = errors.New("this system has no file locks, so dtree cannot tell whether its run goes on: remove it with git worktree remove when it does not")

// holdDir holds nothing for a run; dtree clean keeps branch trees, which
// it cannot tell in use.
func holdDir(_ string, shared bool) (func(), error) {
	if shared {
		return func() {}, nil
	}
	return nil, errNoLocks
}
