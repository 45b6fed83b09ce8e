package workspace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/types"
)

// TestKillHelper is the process TestSafetyKilledRestore kills: it takes
// up run "crash" in DTREE_WS_HELPER_ROOT and restores checkpoint
// DTREE_WS_HELPER_TO. It is no test on its own.
func TestKillHelper(t *testing.T) {
	root := os.Getenv("DTREE_WS_HELPER_ROOT")
	if root == "" {
		t.Skip("a helper process of TestSafetyKilledRestore")
	}
	ctx := context.Background()
	repo, err := Open(ctx, root)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "crash", "")
	require.NoError(t, err)
	fmt.Println("restoring")
	_, err = run.Restore(ctx, os.Getenv("DTREE_WS_HELPER_TO"), "undo")
	require.NoError(t, err)
	fmt.Println("restored")
}

// TestSafetyKilledRestore: a process killed (SIGKILL, with its git) in the
// middle of a restore leaves a tree part way, and nothing is lost: Begin
// on the same run then Restore to the same checkpoint finishes the move
// (the recovery readme/workspace.md#safety documents), and the tree from
// before the restore can still be restored too.
func TestSafetyKilledRestore(t *testing.T) {
	t.Parallel()
	const n = 2000
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("f%04d.txt", i)] = string(bytes.Repeat([]byte(fmt.Sprintf("base %d\n", i)), 2000))
	}
	dir := gitRepo(t, files)
	ctx := context.Background()
	treeBase := fingerprint(t, dir)
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "crash", "")
	require.NoError(t, err)
	base := run.Last
	// The step rewrites every file and adds as many.
	for i := range n {
		write(t, dir, fmt.Sprintf("f%04d.txt", i), string(bytes.Repeat([]byte(fmt.Sprintf("step %d\n", i)), 2000)))
		write(t, dir, fmt.Sprintf("new/g%04d.txt", i), "added\n")
	}
	treeStep := fingerprint(t, dir)
	_, err = run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	step := run.Last
	run.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "DTREE_WS_HELPER_ROOT="+dir, "DTREE_WS_HELPER_TO="+base.Commit)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	killed := false
	// Kill the helper and its git as soon as the move has begun: the added
	// files are being removed, or the first file has its base text back.
	first := filepath.Join(dir, "f0000.txt")
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(first)
		_, err := os.Lstat(filepath.Join(dir, "new", "g1999.txt"))
		if bytes.HasPrefix(b, []byte("base")) || os.IsNotExist(err) {
			require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
			killed = true
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	cmd.Wait() //nolint:errcheck // killed
	require.True(t, killed, "the restore did not begin: %s", out.String())
	partial := fingerprint(t, dir)
	if partial == treeBase || partial == treeStep {
		// A busy machine can let the move end before the kill: what
		// follows holds all the same, but proves less.
		t.Logf("the kill came at an end of the move, not in its middle: %s", out.String())
	}

	// The documented recovery: the same undo again, with --force, which
	// takes the run's checkpoints up again (Reopen), records the tree as
	// it is (Snapshot) and restores.
	run, err = repo.Reopen(ctx, "crash")
	require.NoError(t, err, "after the kill")
	defer run.Close()
	_, err = run.Snapshot(ctx)
	require.NoError(t, err)
	before, err := run.Restore(ctx, base.Commit, "undo, again")
	require.NoError(t, err)
	sameTree(t, treeBase, fingerprint(t, dir), "the tree is not as the checkpoint says")
	// The part-way tree itself was recorded before the restore moved it.
	if partial != treeBase {
		assert.NotEqual(t, step.Commit, before.To)
	}
	// Nothing was lost: the tree before the interrupted restore is on the
	// run's ref, and comes back whole.
	_, err = run.Restore(ctx, step.Commit, "redo")
	require.NoError(t, err)
	sameTree(t, treeStep, fingerprint(t, dir), "the tree before the killed restore did not come back")
	assert.Contains(t, mustGit(t, dir, "log", "--format=%s", run.Ref), "before undo, again")
}

// TestSafetyStaleIndex: a process that died left the run's index and its
// lock; a Run taken up again (by Begin, or made from the ref as dtree undo
// does) starts a new index, from the user's, and records the tree: a
// tracked file a .gitignore matches included.
func TestSafetyStaleIndex(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", "keep.local": "k\n"})
	commitFiles(t, dir, map[string]string{".gitignore": "*.local\n"})
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "stale", "")
	require.NoError(t, err)
	first := run.Last
	index := run.index
	require.NoError(t, os.WriteFile(index, []byte("not an index"), 0o644))
	require.NoError(t, os.WriteFile(index+".lock", nil, 0o644))

	taken := &Run{Repo: repo, ID: "stale", Ref: Ref("stale"), index: index, Last: first}
	defer taken.Close()
	write(t, dir, "keep.local", "edited\n")
	c, err := taken.Checkpoint(ctx, "after the crash")
	require.NoError(t, err)
	assert.Equal(t, []string{"M keep.local"}, paths(c))
	_, err = taken.Restore(ctx, first.Commit, "undo")
	require.NoError(t, err)
	assert.Equal(t, "k\n", read(t, dir, "keep.local"))
}

func paths(c types.Change) []string {
	var out []string
	for _, p := range c.Paths {
		out = append(out, p.Status+" "+p.Path)
	}
	return out
}

// TestBeginTakesUpTheRef: Begin on a run that has checkpoints goes on
// from them (a resumed run keeps every checkpoint reachable); on a ref
// something pointed at a blob, it starts again from HEAD.
func TestBeginTakesUpTheRef(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "r", "")
	require.NoError(t, err)
	write(t, dir, "a.txt", "b\n")
	_, err = run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	step := run.Last
	run.Close()

	again, err := repo.Begin(ctx, "r", "")
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, step.Commit+"\n", mustGit(t, dir, "rev-parse", again.Last.Commit+"^"))

	blob := strings.TrimSpace(mustGit(t, dir, "hash-object", "-w", "a.txt"))
	mustGit(t, dir, "update-ref", Ref("r"), blob)
	fresh, err := repo.Begin(ctx, "r", "")
	require.NoError(t, err)
	defer fresh.Close()
	assert.Equal(t, strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))+"\n", mustGit(t, dir, "rev-parse", fresh.Last.Commit+"^"))
}
