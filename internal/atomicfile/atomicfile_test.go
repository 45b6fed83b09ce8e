package atomicfile_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/atomicfile"
)

// fullDisk takes limit bytes, then fails as a full disk does.
type fullDisk struct {
	f     *os.File
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.limit {
		n, _ := d.f.Write(p[:d.limit])
		d.limit = 0
		return n, errors.New("no space left on device")
	}
	d.limit -= len(p)
	return d.f.Write(p)
}

func (d *fullDisk) Close() error { return d.f.Close() }

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		o       atomicfile.Options
		perm    os.FileMode
		write   string
		diskCap int // 0: no limit
		wantErr string
	}{
		{name: "new file", perm: 0o644, write: "new"},
		{name: "settings: synced, private", o: atomicfile.Options{Sync: true}, perm: 0o600, write: "cli: codex\n"},
		{name: "rewritten often", o: atomicfile.Options{Rewrite: true}, perm: 0o644, write: `{"status":"running"}`},
		{name: "larger than the buffer", perm: 0o644, write: strings.Repeat("x", 200<<10)},
		{name: "disk full keeps the old file", perm: 0o644, write: strings.Repeat("y", 100<<10), diskCap: 1000,
			wantErr: "no space left on device"},
		{name: "disk full, rewritten", o: atomicfile.Options{Rewrite: true}, perm: 0o644, write: strings.Repeat("z", 100<<10),
			diskCap: 10, wantErr: "no space left on device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "file.json")
			require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
			o := tt.o
			if tt.diskCap > 0 {
				o.Open = func(name string, flag int, perm os.FileMode) (atomicfile.File, error) {
					f, err := os.OpenFile(name, flag, perm)
					return &fullDisk{f: f, limit: tt.diskCap}, err
				}
			}
			err := atomicfile.WriteBytes(path, []byte(tt.write), tt.perm, o)
			got, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), "write "+path)
				assert.Equal(t, "old", string(got), "the old file stays whole")
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.write, string(got))
				st, err := os.Stat(path)
				require.NoError(t, err)
				assert.Equal(t, tt.perm, st.Mode().Perm())
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temporary file is left beside it")
		})
	}
}

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The caller's own error comes back as it is, and nothing is replaced.
	path := filepath.Join(dir, "out.svg")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	mine := errors.New("the chart is too large")
	err := atomicfile.Write(path, 0o644, atomicfile.Options{}, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return mine
	})
	assert.Same(t, mine, err)
	got, _ := os.ReadFile(path)
	assert.Equal(t, "old", string(got))
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1)
	// A directory that does not exist is named.
	missing := filepath.Join(dir, "nope", "x.yaml")
	err = atomicfile.WriteBytes(missing, []byte("x"), 0o644, atomicfile.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "write "+missing)
	// A directory in the file's place stays, whole, empty or not: the
	// write fails as a rename over it would.
	for _, files := range []int{0, 1} {
		taken := filepath.Join(dir, fmt.Sprint("taken", files, ".xml"))
		require.NoError(t, os.Mkdir(taken, 0o755))
		if files > 0 {
			require.NoError(t, os.WriteFile(filepath.Join(taken, "keep"), []byte("mine"), 0o644))
		}
		err = atomicfile.WriteBytes(taken, []byte("x"), 0o644, atomicfile.Options{})
		require.Error(t, err)
		assert.ErrorIs(t, err, syscall.EISDIR)
		st, serr := os.Stat(taken)
		require.NoError(t, serr)
		assert.True(t, st.IsDir())
		if files > 0 {
			got, _ := os.ReadFile(filepath.Join(taken, "keep"))
			assert.Equal(t, "mine", string(got))
		}
	}
	// A temporary file left over by a crash is replaced, not in the way.
	rewritten := filepath.Join(dir, "short.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".short.json.tmp"), []byte("stale"), 0o644))
	require.NoError(t, atomicfile.WriteBytes(rewritten, []byte("{}"), 0o644, atomicfile.Options{Rewrite: true}))
	_, err = os.Stat(filepath.Join(dir, ".short.json.tmp"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
