package atomicfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/atomicfile"
)

// With Reuse, a file rewritten after every node is written into the file
// the write before replaced, not into a new one each time; but never while
// a reader still has that file open: the reader sees its version whole.
func TestReuseWritesOverTheReplacedFileOnlyWhenNoOneHasIt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "short.json")
	made := 0
	o := atomicfile.Options{Rewrite: true, Reuse: true, Open: func(name string, flag int, perm os.FileMode) (atomicfile.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err == nil && flag&os.O_CREATE != 0 {
			made++
		}
		return f, err
	}}
	version := func(n int) string { return fmt.Sprintf(`{"n":%d,"pad":"%s"}`, n, strings.Repeat("x", 100*n)) }
	for n := 1; n <= 10; n++ {
		require.NoError(t, atomicfile.WriteBytes(path, []byte(version(n)), 0o644, o))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, version(n), string(got))
	}
	assert.Equal(t, 2, made, "files made for 10 versions: the first two, then each reuses the one replaced")

	// A reader holds version 10; two writes later its file would be the
	// one to write over.
	r, err := os.Open(path)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, atomicfile.WriteBytes(path, []byte(version(11)), 0o644, o))
	require.NoError(t, atomicfile.WriteBytes(path, []byte(version(12)), 0o644, o))
	held, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, version(10), string(held), "the reader's version, whole")
	assert.Equal(t, 3, made, "a new file for the write that found the old one open")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, version(12), string(got))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())

	// A version shorter than the one it is written over: the old tail
	// is cut, in both files as they take turns.
	for _, n := range []int{2, 1, 3} {
		require.NoError(t, atomicfile.WriteBytes(path, []byte(version(n)), 0o644, o))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, version(n), string(got))
	}

	// What is left to reuse is the caller's to remove.
	_, err = os.Stat(atomicfile.TempOf(path))
	require.NoError(t, err)
}

// What an agent may put where the next version would be written (a run's
// directory can be in its working tree) is not written through: a link
// is not followed, a FIFO does not hang the write, a second name of
// another file does not change that file.
func TestReuseWritesOnlyIntoAFileOfItsOwn(t *testing.T) {
	t.Parallel()
	for _, plant := range []string{"symlink", "fifo", "hardlink"} {
		t.Run(plant, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "short.json")
			victim := filepath.Join(dir, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("keep me"), 0o644))
			o := atomicfile.Options{Rewrite: true, Reuse: true}
			require.NoError(t, atomicfile.WriteBytes(path, []byte(`{"n":1}`), 0o644, o))
			tmp := atomicfile.TempOf(path)
			_ = os.Remove(tmp)
			switch plant {
			case "symlink":
				require.NoError(t, os.Symlink(victim, tmp))
			case "fifo":
				require.NoError(t, syscall.Mkfifo(tmp, 0o644))
			case "hardlink":
				require.NoError(t, os.Link(victim, tmp))
			}
			done := make(chan error, 1)
			go func() { done <- atomicfile.WriteBytes(path, []byte(`{"n":2}`), 0o644, o) }()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("the write hung on what was put in its way")
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, `{"n":2}`, string(got))
			kept, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "keep me", string(kept))
		})
	}
}
