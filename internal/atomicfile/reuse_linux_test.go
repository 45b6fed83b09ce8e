package atomicfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
