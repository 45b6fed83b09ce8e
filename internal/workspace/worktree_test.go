package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userState is what of the user's repository a worktree must not touch.
func userState(t *testing.T, dir string) string {
	t.Helper()
	return mustGit(t, dir, "status", "--porcelain=v2", "--branch", "--untracked-files=all") + mustGit(t, dir, "stash", "list") +
		mustGit(t, dir, "rev-parse", "HEAD") + mustGit(t, dir, "ls-files", "--stage") + mustGit(t, dir, "reflog")
}

// hostile gives the repository hooks that leave a mark when they run.
func hostile(t *testing.T, dir string) string {
	t.Helper()
	hooks := t.TempDir()
	mark := filepath.Join(hooks, "hook-ran")
	for _, h := range []string{"post-checkout", "reference-transaction", "pre-commit", "post-commit", "post-index-change"} {
		write(t, hooks, h, "#!/bin/sh\necho "+h+" >> '"+mark+"'\n")
		require.NoError(t, os.Chmod(filepath.Join(hooks, h), 0o755))
	}
	mustGit(t, dir, "config", "core.hooksPath", hooks)
	return mark
}

func TestWorktreeFromHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", ".gitignore": "build/\n", "sub/b.txt": "b\n"})
	write(t, dir, "a.txt", "uncommitted\n")
	write(t, dir, "wip.txt", "untracked\n")
	before := userState(t, dir)
	mark := hostile(t, dir) // the test's own git commands may run them

	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	wt, err := repo.AddWorktree(ctx, "run1", false)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, ".dtree", "worktrees", "run1"), wt.Dir)
	assert.Equal(t, "dtree/run1", wt.Branch)
	assert.Equal(t, strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD")), wt.Base)
	// HEAD's files, not the user's uncommitted ones.
	assert.Equal(t, "a\n", read(t, wt.Dir, "a.txt"))
	assert.Equal(t, "b\n", read(t, wt.Dir, "sub/b.txt"))
	assert.NoFileExists(t, filepath.Join(wt.Dir, "wip.txt"))
	assert.Equal(t, wt.Dir, wt.Repo.Root)

	// The run's work, committed on the branch with the user's identity.
	write(t, wt.Dir, "a.txt", "done\n")
	write(t, wt.Dir, "new.txt", "new\n")
	write(t, wt.Dir, "build/out", "ignored\n")
	mustGit(t, dir, "config", "user.name", "Ada")
	mustGit(t, dir, "config", "user.email", "ada@example.com")
	commit, changed, err := wt.Commit(ctx, "dtree run run1")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, commit, strings.TrimSpace(mustGit(t, dir, "rev-parse", "dtree/run1")))
	assert.Equal(t, "Ada <ada@example.com>|Ada|dtree run run1", strings.TrimSpace(mustGit(t, dir, "log", "-1", "--format=%an <%ae>|%cn|%s", "dtree/run1")))
	assert.Equal(t, "a.txt\nnew.txt\n", mustGit(t, dir, "diff", "--name-only", "HEAD...dtree/run1"))
	// Nothing more: no commit.
	again, changed, err := wt.Commit(ctx, "dtree run run1")
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, commit, again)
	// No hook of the repository ran.
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("hooks ran: %s", b)
	}
	mustGit(t, dir, "config", "--unset", "core.hooksPath")
	// The worktree's own status is clean: its index follows its branch.
	assert.Empty(t, mustGit(t, wt.Dir, "status", "--porcelain"))

	// The user's checkout is as it was, its status too (the worktrees'
	// directory ignores itself).
	assert.Equal(t, before, userState(t, dir))
}

func TestWorktreeDirty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", ".gitignore": "build/\nlogs/\n"})
	write(t, dir, "a.txt", "uncommitted\n")
	write(t, dir, "wip.txt", "untracked\n")
	write(t, dir, "build/out", "ignored\n")
	write(t, dir, "mylogs/x", "log\n")
	before := userState(t, dir)
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	wt, err := repo.AddWorktree(ctx, "run2", true, filepath.Join(dir, "mylogs"))
	require.NoError(t, err)
	assert.Equal(t, "uncommitted\n", read(t, wt.Dir, "a.txt"))
	assert.Equal(t, "untracked\n", read(t, wt.Dir, "wip.txt"))
	assert.NoFileExists(t, filepath.Join(wt.Dir, "build/out"))
	assert.NoFileExists(t, filepath.Join(wt.Dir, "mylogs/x"))
	// The branch starts at a commit of the tree on HEAD.
	assert.Equal(t, strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD")), strings.TrimSpace(mustGit(t, dir, "rev-parse", wt.Base+"^")))
	assert.Equal(t, before, userState(t, dir))
	assert.NoDirExists(t, filepath.Join(dir, ".git", "dtree", "run2.base.index"))
}

func TestWorktreeUnborn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q")
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	_, err = repo.AddWorktree(ctx, "run1", false)
	require.ErrorIs(t, err, ErrUnborn)
	// From the working tree it works: the commit has no parent.
	write(t, dir, "a.txt", "a\n")
	wt, err := repo.AddWorktree(ctx, "run2", true)
	require.NoError(t, err)
	assert.Equal(t, "a\n", read(t, wt.Dir, "a.txt"))
}

func TestWorktreesApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	one, err := repo.AddWorktree(ctx, "one", false)
	require.NoError(t, err)
	two, err := repo.AddWorktree(ctx, "two", false)
	require.NoError(t, err)
	write(t, one.Dir, "one.txt", "1\n")
	write(t, two.Dir, "two.txt", "2\n")
	assert.NoFileExists(t, filepath.Join(two.Dir, "one.txt"))
	assert.NoFileExists(t, filepath.Join(one.Dir, "two.txt"))
	list, err := repo.Worktrees(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "dtree/one", list[0].Branch)
	assert.Equal(t, one.Dir, list[0].Dir)
}

func TestWorktreeRemoveAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	wt, err := repo.AddWorktree(ctx, "r1", false)
	require.NoError(t, err)
	info := WorktreeInfo{Dir: wt.Dir, Branch: wt.Branch}

	// In use by a run: kept.
	release, err := wt.Hold()
	require.NoError(t, err)
	require.ErrorIs(t, repo.RemoveWorktree(ctx, info, true, false), ErrWorktreeInUse)
	release()

	// Files not committed on the branch: kept, unless forced.
	write(t, wt.Dir, "left.txt", "x\n")
	var changed *WorktreeChangedError
	require.ErrorAs(t, repo.RemoveWorktree(ctx, info, false, false), &changed)
	assert.Equal(t, []string{"left.txt"}, changed.Paths)
	_, _, err = wt.Commit(ctx, "result")
	require.NoError(t, err)
	require.NoError(t, repo.RemoveWorktree(ctx, info, false, false))
	assert.NoDirExists(t, wt.Dir)
	list, err := repo.Worktrees(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)

	// The branch stays until HEAD has it.
	merged, err := repo.DeleteMergedBranch(ctx, "dtree/r1", false)
	require.NoError(t, err)
	assert.False(t, merged)

	// A resume makes it again from its branch, with the run's result.
	back, err := repo.Worktree(ctx, "dtree/r1")
	require.NoError(t, err)
	assert.Equal(t, "x\n", read(t, back.Dir, "left.txt"))
	_, err = repo.Worktree(ctx, "dtree/../../x")
	require.Error(t, err)
	_, err = repo.Worktree(ctx, "main")
	require.Error(t, err)

	require.NoError(t, repo.RemoveWorktree(ctx, WorktreeInfo{Dir: back.Dir, Branch: back.Branch}, false, false))
	mustGit(t, dir, "merge", "-q", "--ff-only", "dtree/r1")
	merged, err = repo.DeleteMergedBranch(ctx, "dtree/r1", false)
	require.NoError(t, err)
	assert.True(t, merged)
	assert.Empty(t, mustGit(t, dir, "branch", "--list", "dtree/*"))
}

// A checkout whose .dtree is a link elsewhere gets no worktree there.
func TestWorktreeNotThroughALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, ".dtree")))
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	_, err = repo.AddWorktree(ctx, "r1", false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a link")
	assert.NoDirExists(t, filepath.Join(elsewhere, "worktrees", "r1"))
}

// Files with odd names are committed as they are: spaces, a newline, a
// leading dash, bytes that are not UTF-8.
func TestWorktreeCommitOddNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	wt, err := repo.AddWorktree(ctx, "r1", false)
	require.NoError(t, err)
	names := []string{"with space.txt", "new\nline.txt", "-dash.txt", "caf\xe9.txt"}
	for _, n := range names {
		write(t, wt.Dir, n, "x\n")
	}
	_, changed, err := wt.Commit(ctx, "odd")
	require.NoError(t, err)
	require.True(t, changed)
	got := strings.Split(strings.TrimSuffix(mustGit(t, dir, "ls-tree", "-r", "-z", "--name-only", "dtree/r1"), "\x00"), "\x00")
	assert.ElementsMatch(t, append(names, "a.txt"), got)
}
