package workspace

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsCommitID(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		strings.Repeat("a", 40):               true,
		strings.Repeat("0", 64):               true,
		strings.Repeat("A", 40):               false,
		strings.Repeat("a", 39):               false,
		"--output=" + strings.Repeat("a", 31): false,
		"HEAD":                                false,
		"":                                    false,
	} {
		assert.Equal(t, want, IsCommitID(s), "%q", s)
	}
}

func TestDiffRefusesWhatIsNotACommitID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	head, err := repo.Head(ctx)
	require.NoError(t, err)
	var out strings.Builder
	err = repo.Diff(ctx, &out, "--output="+filepath.Join(dir, "pwned"), head, DiffOptions{})
	require.Error(t, err)
	assert.NoFileExists(t, filepath.Join(dir, "pwned"))
	ok, err := repo.HasCommit(ctx, "--output=x")
	require.NoError(t, err)
	assert.False(t, ok)
	ok, err = repo.HasCommit(ctx, head)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = repo.HasCommit(ctx, strings.Repeat("1", 40))
	require.NoError(t, err)
	assert.False(t, ok)
}

// A run taken up again after it ended snapshots without moving its ref,
// restores on top of the ref as it is now, and makes the ref again when
// it was removed.
func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "one\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r1", "")
	require.NoError(t, err)
	before := run.Last
	write(t, dir, "a.txt", "two\n")
	c, err := run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	run.Close()

	again, err := repo.Reopen(ctx, "r1")
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, c.To, again.Last.Commit)
	write(t, dir, "a.txt", "three\n")
	snap, err := again.Snapshot(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, c.To, snap.Commit)
	ref := strings.TrimSpace(mustGit(t, dir, "rev-parse", Ref("r1")))
	assert.Equal(t, c.To, ref, "a snapshot moves no ref")

	_, err = again.Restore(ctx, before.Commit, "undo")
	require.NoError(t, err)
	assert.Equal(t, "one\n", read(t, dir, "a.txt"))

	// The ref removed: the checkpoints start it again.
	require.NoError(t, repo.Prune(ctx, "r1"))
	gone, err := repo.Reopen(ctx, "r1")
	require.NoError(t, err)
	defer gone.Close()
	assert.Empty(t, gone.Last.Commit)
	_, err = gone.Restore(ctx, c.To, "redo")
	require.NoError(t, err)
	assert.Equal(t, "two\n", read(t, dir, "a.txt"))
	log := mustGit(t, dir, "log", "--format=%s", Ref("r1"))
	assert.Contains(t, log, "redo")
}
