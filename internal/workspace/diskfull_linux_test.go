package workspace

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tmpfs mounts a file system of size (tmpfs's size=, such as 8m) on a new
// directory, unmounted when the test ends; it skips the test where it
// cannot (the tests run as root in CI).
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (the tests run as root in CI): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes name until the disk is full, then gives back keep bytes.
func fill(t *testing.T, name string, keep int64) {
	t.Helper()
	f, err := os.Create(name)
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := f.Write(buf)
		n += int64(k)
		if err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling the disk: %v", err)
			break
		}
	}
	require.NoError(t, f.Truncate(max(n-keep, 0)))
}

// TestSafetyRestoreDiskFull: a restore that runs out of disk part way
// (the file it must write back does not fit) leaves the tree as it was
// before the restore, says so, and succeeds once there is room.
func TestSafetyRestoreDiskFull(t *testing.T) {
	t.Parallel()
	disk := tmpfs(t, "8m")
	dir := filepath.Join(disk, "repo")
	require.NoError(t, os.Mkdir(dir, 0o755))
	mustGit(t, dir, "init", "-q", "-b", "main")
	big := make([]byte, 3<<20)
	_, err := rand.Read(big)
	require.NoError(t, err)
	write(t, dir, "big.bin", string(big))
	commitFiles(t, dir, map[string]string{"a.txt": "base\n", ".gitignore": "fill.bin\n"})
	treeBase := fingerprint(t, dir)

	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "full", "")
	require.NoError(t, err)
	defer run.Close()
	base := run.Last
	// The step deletes the big file and edits a.txt: undoing it writes
	// a.txt, then the big file, which the disk has no room for.
	require.NoError(t, os.Remove(filepath.Join(dir, "big.bin")))
	write(t, dir, "a.txt", "step\n")
	_, err = run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	fill(t, filepath.Join(dir, "fill.bin"), 256<<10)
	treeStep := fingerprint(t, dir)

	_, err = run.Restore(ctx, base.Commit, "undo")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the working tree is as it was")
	sameTree(t, treeStep, fingerprint(t, dir), "a restore that failed left the tree part way")

	require.NoError(t, os.Remove(filepath.Join(dir, "fill.bin")))
	_, err = run.Restore(ctx, base.Commit, "undo")
	require.NoError(t, err)
	sameTree(t, treeBase, fingerprint(t, dir), "the restore with room")
}
