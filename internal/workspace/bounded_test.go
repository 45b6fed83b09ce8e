package workspace

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChangesHugeBounded: the change of a step that added 100,000 files
// of 150-byte names (15 MB of names) is read in bounded memory: the
// change keeps 100 paths and counts the rest, and the heap never holds
// the list. Not parallel: it measures the process's heap alone.
func TestChangesHugeBounded(t *testing.T) {
	const n = 100_000
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	blob := strings.TrimSpace(mustGit(t, dir, "hash-object", "-w", "a.txt"))
	var listing strings.Builder
	fmt.Fprintf(&listing, "100644 blob %s\ta.txt\n", blob) // as it was
	for i := range n {
		fmt.Fprintf(&listing, "100644 blob %s\t%s-%06d.txt\n", blob, strings.Repeat("long-name-", 14), i)
	}
	cmd := exec.Command("git", "mktree")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(listing.String())
	out, err := cmd.Output()
	require.NoError(t, err)
	listing = strings.Builder{}
	tree := strings.TrimSpace(string(out))
	commit := strings.TrimSpace(mustGit(t, dir, "commit-tree", tree, "-p", "HEAD", "-m", "100k files"))
	head := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))

	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	// HeapAlloc counts garbage not yet collected, up to GOGC percent of
	// what is live: collecting at 10% makes it what the reading holds,
	// not when the collector last ran.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseline := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	c, err := repo.Changes(ctx, head, commit)
	close(stop)
	wg.Wait()
	require.NoError(t, err)
	assert.Equal(t, n, c.Files)
	assert.Equal(t, n, c.Added)
	assert.Len(t, c.Paths, 100)
	assert.Equal(t, n-100, c.PathsLeftOut)
	grew := int64(peak.Load()) - int64(baseline)
	t.Logf("heap grew by at most %d KiB reading a change of %d files", grew>>10, n)
	assert.Less(t, grew, int64(8<<20), "the heap grew with the change")
}
