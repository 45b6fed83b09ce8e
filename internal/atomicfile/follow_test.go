//go:build unix

package atomicfile_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/atomicfile"
)

// A file the user named is followed: `-o link.mmd` replaces what the link
// points at and keeps the link. A run's own files are not: a link planted
// in a run's directory is replaced, and what it pointed at is untouched.
func TestFollowSymlink(t *testing.T) {
	t.Parallel()
	for _, follow := range []bool{true, false} {
		dir := t.TempDir()
		target, link := filepath.Join(dir, "target.mmd"), filepath.Join(dir, "link.mmd")
		require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
		require.NoError(t, os.Symlink("target.mmd", link))

		require.NoError(t, atomicfile.WriteBytes(link, []byte("new"), 0o644, atomicfile.Options{Follow: follow}))

		fi, err := os.Lstat(link)
		require.NoError(t, err)
		got, err := os.ReadFile(target)
		require.NoError(t, err)
		if follow {
			assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is kept")
			assert.Equal(t, "new", string(got))
		} else {
			assert.True(t, fi.Mode().IsRegular(), "the link is replaced")
			assert.Equal(t, "old", string(got), "what the link pointed at is untouched")
		}
	}
}

// A path that is not a regular file (a FIFO here; /dev/null and the
// terminal are devices) is written in place: replacing it would leave a
// regular file where the device was, for every program when dtree runs
// as root. Through a link too, as -o /dev/stdout is.
func TestFollowWritesADeviceInPlace(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fifo", "link-to-fifo"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "fifo")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			path := fifo
			if name == "link-to-fifo" {
				path = filepath.Join(dir, "out")
				require.NoError(t, os.Symlink(fifo, path))
			}
			read := make(chan string, 1)
			go func() {
				f, err := os.Open(fifo)
				if err != nil {
					read <- err.Error()
					return
				}
				defer f.Close()
				b, _ := io.ReadAll(f)
				read <- string(b)
			}()

			require.NoError(t, atomicfile.Write(path, 0o644, atomicfile.Options{Follow: true}, func(w io.Writer) error {
				_, err := io.WriteString(w, "flowchart TD\n")
				return err
			}))

			select {
			case got := <-read:
				assert.Equal(t, "flowchart TD\n", got)
			case <-time.After(10 * time.Second):
				t.Fatal("nothing came through the FIFO: it was replaced, not written")
			}
			fi, err := os.Lstat(fifo)
			require.NoError(t, err)
			assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "still a FIFO")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, map[string]int{"fifo": 1, "link-to-fifo": 2}[name], "no temporary file left")
		})
	}
}
