package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// short.json is rewritten after every node without a file made each time
// (the file the write before replaced is written over), and the log's
// directory holds no temporary file once the log is closed.
func TestShortRewritesMakeNoFileEach(t *testing.T) {
	t.Parallel()
	var made atomic.Int32
	open := func(name string, flag int, perm os.FileMode) (File, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err == nil && flag&os.O_CREATE != 0 && filepath.Base(name) == ".short.json.tmp" {
			made.Add(1)
		}
		return f, err
	}
	l, err := Open(Options{Dir: t.TempDir(), Short: true, OpenFile: open})
	require.NoError(t, err)
	for i := range 50 {
		require.NoError(t, l.ShortJSON(fmt.Appendf(nil, `{"n":%d}`, i)))
	}
	assert.LessOrEqual(t, made.Load(), int32(2), "files made for 50 rewrites")
	require.NoError(t, l.Close())
	got, err := os.ReadFile(filepath.Join(l.Dir, "short.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"n":49}`, string(got))
	entries, err := os.ReadDir(l.Dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotEqual(t, ".short.json.tmp", e.Name(), "left behind after Close")
	}
}
