package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RestorePaths undoes the change of the paths it is told to, whatever
// the change (edit, addition, deletion, odd names), and leaves the rest
// of the change, ignored files and the user's index alone; the
// checkpoint before still has everything.
func TestRestorePaths(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"src/a.go": "a\n", "keep.txt": "k\n", "del.txt": "d\n", ".gitignore": "*.log\n"})
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r1", "")
	require.NoError(t, err)
	defer run.Close()
	start := run.Last.Commit

	write(t, dir, "src/a.go", "a2\n")
	write(t, dir, "src/new.go", "n\n")
	write(t, dir, "keep.txt", "changed\n")
	write(t, dir, "new.txt", "new\n")
	write(t, dir, "-dash/odd\nname é", "x\n")
	write(t, dir, "build.log", "ignored\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "del.txt")))

	u, err := run.RestorePaths(ctx, start, func(p string) bool { return !strings.HasPrefix(p, "src/") }, "scope")
	require.NoError(t, err)
	assert.Equal(t, 4, u.Files)
	var got []string
	for _, p := range u.Paths {
		got = append(got, p.Status+" "+p.Path)
	}
	assert.ElementsMatch(t, []string{"A -dash/odd\nname é", "D del.txt", "M keep.txt", "A new.txt"}, got)

	assert.Equal(t, "a2\n", read(t, dir, "src/a.go"))
	assert.Equal(t, "n\n", read(t, dir, "src/new.go"))
	assert.Equal(t, "k\n", read(t, dir, "keep.txt"))
	assert.Equal(t, "d\n", read(t, dir, "del.txt"))
	assert.Equal(t, "ignored\n", read(t, dir, "build.log"))
	assert.NoFileExists(t, filepath.Join(dir, "new.txt"))
	assert.NoDirExists(t, filepath.Join(dir, "-dash"))
	// What was undone is in the checkpoint before.
	assert.Equal(t, "new\n", mustGit(t, dir, "show", u.Before.Commit+":new.txt"))
	// The user's index is untouched: git status sees the src changes.
	assert.Contains(t, mustGit(t, dir, "status", "--porcelain"), " M src/a.go")
	assert.NotContains(t, mustGit(t, dir, "status", "--porcelain"), "keep.txt")
	// The newest checkpoint is the tree as it is now.
	c, err := run.Checkpoint(ctx, "after")
	require.NoError(t, err)
	assert.True(t, c.Empty())
}

func TestRestorePathsNothingOutside(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"a": "a\n"})
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r1", "")
	require.NoError(t, err)
	defer run.Close()
	start := run.Last.Commit
	write(t, dir, "a", "b\n")
	u, err := run.RestorePaths(ctx, start, func(string) bool { return false }, "scope")
	require.NoError(t, err)
	assert.Zero(t, u.Files)
	assert.Equal(t, "b\n", read(t, dir, "a"))
}

// Every changed path is listed, not only the first MaxChangePaths, and
// the kept list stays bounded.
func TestRestorePathsMany(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"a": "a\n"})
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r1", "")
	require.NoError(t, err)
	defer run.Close()
	start := run.Last.Commit
	for i := range 500 {
		write(t, dir, fmt.Sprintf("out/f%03d", i), "x\n")
	}
	n := 0
	require.NoError(t, countChanges(ctx, run, start, &n))
	assert.Equal(t, 500, n)
	u, err := run.RestorePaths(ctx, start, func(string) bool { return true }, "scope")
	require.NoError(t, err)
	assert.Equal(t, 500, u.Files)
	assert.Len(t, u.Paths, 100)
	assert.NoDirExists(t, filepath.Join(dir, "out"))
}

// countChanges counts the paths EachChange lists since from.
func countChanges(ctx context.Context, run *Run, from string, n *int) error {
	if _, err := run.Checkpoint(ctx, "count"); err != nil {
		return err
	}
	return run.Repo.EachChange(ctx, from, run.Last.Commit, func(PathEntry) error { *n++; return nil })
}

// An agent that deletes .git/dtree mid-run does not stop the undo: the
// index is made again, and the checkpoints are on the ref.
func TestRestorePathsAfterDtreeDirDeleted(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"a": "a\n"})
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r1", "")
	require.NoError(t, err)
	defer run.Close()
	start := run.Last.Commit
	write(t, dir, "a", "b\n")
	write(t, dir, "new", "n\n")
	require.NoError(t, os.RemoveAll(filepath.Join(repo.GitDir, "dtree")))
	u, err := run.RestorePaths(ctx, start, func(p string) bool { return p == "new" }, "scope")
	require.NoError(t, err)
	assert.Equal(t, 1, u.Files)
	assert.NoFileExists(t, filepath.Join(dir, "new"))
	assert.Equal(t, "b\n", read(t, dir, "a"))
}
