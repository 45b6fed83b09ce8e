package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitRepo makes a repository in a temporary directory with files
// committed, and returns its root.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q", "-b", "main")
	for name, text := range files {
		write(t, dir, name, text)
	}
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(b)
}

func TestOpenOutsideGit(t *testing.T) {
	t.Parallel()
	_, err := Open(context.Background(), t.TempDir())
	require.ErrorIs(t, err, ErrNotGit)
}

func TestCheckpointRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "one\ntwo\n", ".gitignore": "build/\n", "sub/b.txt": "b\n"})
	write(t, dir, "wip.txt", "uncommitted\n") // untracked, there before the run
	userState := func() string {
		return mustGit(t, dir, "status", "--porcelain=v2", "--branch") + mustGit(t, dir, "stash", "list") +
			mustGit(t, dir, "reflog") + mustGit(t, dir, "branch", "-a")
	}
	before := userState()

	repo, err := Open(ctx, filepath.Join(dir, "sub"))
	require.NoError(t, err)
	assert.Equal(t, dir, repo.Root)
	run, err := repo.Begin(ctx, "20261126T230000Z-abcdef", "")
	require.NoError(t, err)
	defer run.Close()
	base := run.Last

	// A step: edit, add, delete, odd names, an ignored file.
	write(t, dir, "a.txt", "one\nTWO\nthree\n")
	write(t, dir, "new file\nwith newline.txt", "x\n")
	write(t, dir, "caf\xe9.txt", "latin-1 name\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "sub/b.txt")))
	write(t, dir, "build/out.bin", "ignored\n")
	c, err := run.Checkpoint(ctx, "after node 2")
	require.NoError(t, err)
	assert.Equal(t, 4, c.Files)
	assert.Equal(t, 4, c.Added)   // TWO, three, x, latin-1 name
	assert.Equal(t, 2, c.Removed) // two, b
	assert.Equal(t, base.Commit, c.From)
	assert.NotEqual(t, c.From, c.To)
	var paths []string
	for _, p := range c.Paths {
		paths = append(paths, p.Status+" "+p.Path)
	}
	assert.ElementsMatch(t, []string{"M a.txt", "A new file\nwith newline.txt", "A caf\xe9.txt", "D sub/b.txt"}, paths)

	// Nothing changed: no commit, an empty change.
	c2, err := run.Checkpoint(ctx, "after node 3")
	require.NoError(t, err)
	assert.Equal(t, 0, c2.Files)
	assert.Equal(t, c.To, c2.To)

	// Back to before the run: edits undone, new files gone, the deleted
	// one back, the ignored one and the user's untracked file kept.
	_, err = run.Restore(ctx, base.Commit, "undo")
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", read(t, dir, "a.txt"))
	assert.Equal(t, "b\n", read(t, dir, "sub/b.txt"))
	assert.Equal(t, "uncommitted\n", read(t, dir, "wip.txt"))
	assert.Equal(t, "ignored\n", read(t, dir, "build/out.bin"))
	assert.NoFileExists(t, filepath.Join(dir, "new file\nwith newline.txt"))
	assert.NoFileExists(t, filepath.Join(dir, "caf\xe9.txt"))

	// The user's HEAD, index, branches, stash and reflog are as they were.
	assert.Equal(t, before, userState())
	refs := mustGit(t, dir, "for-each-ref", "--format=%(refname)")
	assert.Contains(t, refs, "refs/dtree/runs/20261126T230000Z-abcdef")

	// The restore itself can be undone: its first checkpoint is c.To's tree.
	_, err = run.Restore(ctx, c.To, "redo")
	require.NoError(t, err)
	assert.Equal(t, "one\nTWO\nthree\n", read(t, dir, "a.txt"))

	ids, err := repo.Runs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"20261126T230000Z-abcdef"}, ids)
	require.NoError(t, repo.Prune(ctx, "20261126T230000Z-abcdef"))
	assert.NotContains(t, mustGit(t, dir, "for-each-ref"), "refs/dtree/")
}

func TestCheckpointExcludesLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r1", "", filepath.Join(dir, "logs"))
	require.NoError(t, err)
	defer run.Close()
	write(t, dir, "logs/events.jsonl", "{}\n")
	write(t, dir, "a.txt", "b\n")
	c, err := run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	require.Len(t, c.Paths, 1)
	assert.Equal(t, "a.txt", c.Paths[0].Path)
}

// A log directory the user's .gitignore names is left out as ignored:
// naming it in an exclude pathspec made git add fail, and every
// checkpoint with it.
func TestCheckpointIgnoredLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", ".gitignore": ".dtree/\n"})
	write(t, dir, ".dtree/runs/r0/events.jsonl", "{}\n")
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r1", "", filepath.Join(dir, ".dtree/runs"))
	require.NoError(t, err)
	defer run.Close()
	write(t, dir, ".dtree/runs/r1/events.jsonl", "{}\n")
	write(t, dir, "a.txt", "b\n")
	c, err := run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	require.Len(t, c.Paths, 1)
	assert.Equal(t, "a.txt", c.Paths[0].Path)
}

func TestChangesBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r1", "")
	require.NoError(t, err)
	defer run.Close()
	for i := range 250 {
		write(t, dir, filepath.Join("gen", strings.Repeat("x", i%7)+string(rune('a'+i%26))+"-"+strconv.Itoa(i)), "1\n2\n")
	}
	c, err := run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	assert.Equal(t, 250, c.Files)
	assert.Equal(t, 500, c.Added)
	assert.Len(t, c.Paths, 100)
	assert.Equal(t, 150, c.PathsLeftOut)
}

// A restore that would write where an ignored file is (a file the run
// added, undone, then made again by the user's build, ignored) refuses
// before it moves anything: git's read-tree -m -u writes over ignored
// files, and no checkpoint has one (readme/workspace.md#safety).
func TestRestoreIgnoredInTheWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "20261126T230000Z-abcdef", "")
	require.NoError(t, err)
	defer run.Close()
	base := run.Last
	write(t, dir, "build.txt", "from the run\n")
	write(t, dir, "out/x", "from the run\n")
	c, err := run.Checkpoint(ctx, "after node 1")
	require.NoError(t, err)
	_, err = run.Restore(ctx, base.Commit, "undo")
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(dir, "build.txt"))

	// Ignored now: a file where the redo would write one, and a file
	// where it would make a directory.
	write(t, dir, ".git/info/exclude", "build.txt\nout\n")
	write(t, dir, "build.txt", "precious\n")
	write(t, dir, "out", "precious too\n")
	_, err = run.Restore(ctx, c.To, "redo")
	var way *InTheWayError
	require.ErrorAs(t, err, &way)
	assert.ElementsMatch(t, []string{"build.txt", "out"}, way.Paths)
	assert.Contains(t, err.Error(), `ignored files are where it would write, and no checkpoint has them: `)
	assert.Equal(t, "precious\n", read(t, dir, "build.txt"))
	assert.Equal(t, "precious too\n", read(t, dir, "out"))
	assert.Equal(t, "a\n", read(t, dir, "a.txt"))

	// Moved away, the restore goes.
	require.NoError(t, os.Remove(filepath.Join(dir, "build.txt")))
	require.NoError(t, os.Remove(filepath.Join(dir, "out")))
	_, err = run.Restore(ctx, c.To, "redo")
	require.NoError(t, err)
	assert.Equal(t, "from the run\n", read(t, dir, "build.txt"))
	assert.Equal(t, "from the run\n", read(t, dir, "out/x"))
}

// A file where a directory is: the directory's recorded files go with the
// move, an ignored file in it is in the way.
func TestRestoreIgnoredInADirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"gen": "a file\n"})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "20261126T230000Z-abcdef", "")
	require.NoError(t, err)
	defer run.Close()
	base := run.Last
	require.NoError(t, os.Remove(filepath.Join(dir, "gen")))
	write(t, dir, "gen/a", "a\n")
	_, err = run.Checkpoint(ctx, "after node 1")
	require.NoError(t, err)
	write(t, dir, ".git/info/exclude", "*.o\n")
	write(t, dir, "gen/keep.o", "precious\n")
	_, err = run.Restore(ctx, base.Commit, "undo")
	var way *InTheWayError
	require.ErrorAs(t, err, &way)
	assert.Equal(t, []string{"gen"}, way.Paths)
	assert.Equal(t, "precious\n", read(t, dir, "gen/keep.o"))

	require.NoError(t, os.Remove(filepath.Join(dir, "gen/keep.o")))
	_, err = run.Restore(ctx, base.Commit, "undo")
	require.NoError(t, err)
	assert.Equal(t, "a file\n", read(t, dir, "gen"))
}
