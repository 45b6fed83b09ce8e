package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinedEvents is the log of a run of the whole fork: the first run's
// steps before its branch, then each branch's events from its
// branch_start to its branch_end (no run_end), their checkpoints the
// join's own commits.
func TestJoinedEvents(t *testing.T) {
	const (
		forkCP = "d13a1fb6a508e7e78c82a1e97ab9dc1533230ad9"
		tipA   = "c3daf77c9027e4e51056c12f1ffac4b84127483b"
		tipB   = "67395dd954f70e60b651c3ddaf6f2fd9b295727e"
		base   = "1111111111111111111111111111111111111111"
		newA   = "2222222222222222222222222222222222222222"
		newB   = "3333333333333333333333333333333333333333"
	)
	runDir := func(name, id, tip string) branchRun {
		dir := t.TempDir()
		ev := func(rest string) string { return `{"time":"2026-11-27T09:10:27.8Z",` + rest + "}\n" }
		log := ev(`"event":"run_start","chart":"Fork","page":"1","run_id":"r-`+name+`","source":"fork.yaml"`) +
			ev(`"event":"node_start","cli":"sh","node":"plan","role":"process","run_id":"r-`+name+`","visit":1`) +
			ev(`"event":"node_end","node":"plan","next":"`+name+`","run_id":"r-`+name+`","status":"succeeded","visit":1`) +
			ev(`"event":"branch_start","branch":"`+id+`","checkpoint":"`+forkCP+`","first":"`+name+`","fork":"plan","name":"`+name+`","run_id":"r-`+name+`"`) +
			ev(`"event":"node_start","branch":"`+id+`","cli":"sh","node":"`+name+`","role":"process","run_id":"r-`+name+`","visit":1`) +
			ev(`"event":"node_end","branch":"`+id+`","node":"`+name+`","next":"review","run_id":"r-`+name+`","status":"succeeded","visit":1`) +
			ev(`"event":"branch_end","branch":"`+id+`","checkpoint":"`+tip+`","path":["`+name+`"],"run_id":"r-`+name+`","status":"succeeded"`) +
			ev(`"event":"run_end","run_id":"r-`+name+`","status":"succeeded"`)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(log), 0o644))
		return branchRun{dir: dir, fork: "plan", name: name}
	}
	a, b := runDir("a", "plan/a", tipA), runDir("b", "plan/b", tipB)
	path, err := joinedEvents([]branchRun{a, b}, base, []string{newA, newB})
	require.NoError(t, err)
	defer os.Remove(path)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	got := string(raw)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.Len(t, lines, 11, got) // 3 of the trunk, 4 a branch
	assert.Contains(t, lines[0], `"run_id":"r-a"`)
	assert.Equal(t, 1, strings.Count(got, `"event":"run_start"`))
	assert.Equal(t, 1, strings.Count(got, `"node":"plan"`+`,"next"`))
	assert.NotContains(t, got, `"event":"run_end"`)
	assert.NotContains(t, got, forkCP)
	assert.Contains(t, lines[3], `"checkpoint":"`+base+`"`)
	assert.Contains(t, lines[6], `"checkpoint":"`+newA+`"`)
	assert.Contains(t, lines[7], `"branch":"plan/b","checkpoint":"`+base+`"`)
	assert.Contains(t, lines[10], `"checkpoint":"`+newB+`"`)
}

// A branch of 100,000 steps (30 MB of events) is copied a line at a
// time: the heap does not grow with it.
func TestJoinedEventsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 30 MB")
	}
	const steps = 100_000
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"time":"2026-11-27T09:10:27.8Z","event":"run_start","chart":"Fork","page":"1","run_id":"r","source":"fork.yaml"}`)
	fmt.Fprintln(w, `{"time":"2026-11-27T09:10:27.8Z","event":"branch_start","branch":"plan/a","checkpoint":"d13a1fb6a508e7e78c82a1e97ab9dc1533230ad9","first":"a","fork":"plan","name":"a","run_id":"r"}`)
	for i := range steps {
		fmt.Fprintf(w, `{"time":"2026-11-27T09:10:27.8Z","event":"node_start","branch":"plan/a","cli":"sh","node":"a","role":"process","run_id":"r","visit":%d}`+"\n", i+1)
		fmt.Fprintf(w, `{"time":"2026-11-27T09:10:27.8Z","event":"node_end","branch":"plan/a","node":"a","next":"a","run_id":"r","status":"succeeded","visit":%d,"padding":"%s"}`+"\n", i+1, strings.Repeat("x", 100))
	}
	fmt.Fprintln(w, `{"time":"2026-11-27T09:10:27.8Z","event":"branch_end","branch":"plan/a","checkpoint":"c3daf77c9027e4e51056c12f1ffac4b84127483b","path":["a"],"run_id":"r","status":"succeeded"}`)
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseline := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
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
	})
	path, err := joinedEvents([]branchRun{{dir: dir, fork: "plan", name: "a"}}, "1111111111111111111111111111111111111111", []string{"2222222222222222222222222222222222222222"})
	close(stop)
	wg.Wait()
	require.NoError(t, err)
	defer os.Remove(path)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(30<<20))
	grew := int64(peak.Load()) - int64(baseline)
	t.Logf("joined %d MiB of events; the heap grew %d KiB at most", st.Size()>>20, grew>>10)
	assert.Less(t, grew, int64(16<<20), "the heap grew with the log")
}
