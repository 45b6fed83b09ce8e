//go:build unix

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

// A run killed during a fork leaves its branch trees: dtree clean finds
// them (the repository's own, and those of a --worktree run's fork, in
// its worktree) and removes them, unless their run holds them.
func TestRemoveDeadBranchTrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"f.txt": "f\n"})
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	runWT, err := repo.AddWorktree(ctx, "wt1", false)
	require.NoError(t, err)

	live, err := repo.HoldBranchTrees("live")
	require.NoError(t, err)
	defer live()
	tree := map[string]*Worktree{}
	for _, c := range []struct {
		repo         *Repo
		runID, label string
	}{{repo, "live", "a"}, {repo, "dead", "a"}, {repo, "dead", "b"}, {runWT.Repo, "wt1", "a"}} {
		wt, err := c.repo.AddBranchTree(ctx, c.runID, c.label, base)
		require.NoError(t, err)
		write(t, wt.Dir, "half.txt", "half done\n")
		tree[c.runID+"/"+c.label] = wt
	}
	// Not branch trees: the run's own worktree, one out of place.
	other := filepath.Join(dir, ".dtree", "worktrees", "x")
	mustGit(t, dir, "worktree", "add", "--detach", other, base)

	list, err := repo.BranchTrees(ctx)
	require.NoError(t, err)
	var got []string
	for _, b := range list {
		assert.Equal(t, filepath.Dir(b.Dir), b.RunDir)
		got = append(got, b.RunID+" "+filepath.Base(b.Dir))
	}
	assert.ElementsMatch(t, []string{"live a", "dead a", "dead b", "wt1 a"}, got)

	byRun := map[string][]string{}
	for _, b := range list {
		byRun[b.RunDir] = append(byRun[b.RunDir], b.Dir)
	}
	require.Len(t, byRun, 3)
	for runDir, dirs := range byRun {
		err := repo.RemoveDeadBranchTrees(ctx, runDir, dirs, true)
		if filepath.Base(runDir) == "live.b" {
			require.ErrorIs(t, err, ErrWorktreeInUse)
			continue
		}
		require.NoError(t, err, "dry run")
		for _, d := range dirs {
			assert.DirExists(t, d, "a dry run removes nothing")
		}
		require.NoError(t, repo.RemoveDeadBranchTrees(ctx, runDir, dirs, false))
		assert.NoDirExists(t, runDir)
	}
	assert.FileExists(t, filepath.Join(tree["live/a"].Dir, "half.txt"), "the live run's tree stays")
	assert.DirExists(t, other)
	list, err = repo.BranchTrees(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "live", list[0].RunID)

	// Its run gone, the live one's goes too; a tree whose directory went
	// by hand leaves only git's record, which goes.
	live()
	require.NoError(t, os.RemoveAll(tree["live/a"].Dir))
	list, err = repo.BranchTrees(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, list[0].Gone)
	require.NoError(t, repo.RemoveDeadBranchTrees(ctx, list[0].RunDir, nil, false))
	list, err = repo.BranchTrees(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
}

// The directory a run holds, or one clean is asked to clear, as a link
// to elsewhere: refused, nothing there removed.
func TestBranchTreesThroughALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"f.txt": "f\n"})
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	elsewhere := t.TempDir()
	write(t, elsewhere, "a/mine.txt", "mine\n")
	runDir := filepath.Join(dir, ".dtree", "worktrees", "r1.b")
	require.NoError(t, os.MkdirAll(filepath.Dir(runDir), 0o755))
	require.NoError(t, os.Symlink(elsewhere, runDir))
	_, err = repo.HoldBranchTrees("r1")
	require.ErrorContains(t, err, runDir+" is a link (to "+elsewhere+")")
	require.ErrorContains(t, repo.RemoveDeadBranchTrees(ctx, runDir, []string{filepath.Join(runDir, "a")}, false), "a link?")
	assert.FileExists(t, filepath.Join(elsewhere, "a", "mine.txt"))

	// A tree of a run whose directory became a link after: the same.
	require.NoError(t, os.Remove(runDir))
	wt, err := repo.AddBranchTree(ctx, "r1", "a", base)
	require.NoError(t, err)
	require.NoError(t, os.Rename(runDir, runDir+"-moved"))
	require.NoError(t, os.Symlink(elsewhere, runDir))
	require.ErrorContains(t, repo.RemoveDeadBranchTrees(ctx, runDir, []string{wt.Dir}, false), "a link?")
	assert.FileExists(t, filepath.Join(elsewhere, "a", "mine.txt"))

	// A file where the run's directory goes: refused, kept.
	require.NoError(t, os.Remove(runDir))
	write(t, filepath.Dir(runDir), "r1.b", "mine\n")
	_, err = repo.HoldBranchTrees("r1")
	require.ErrorContains(t, err, runDir+" is not a directory")
	assert.Equal(t, "mine\n", read(t, filepath.Dir(runDir), "r1.b"))
}
