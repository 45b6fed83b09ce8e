package procs

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// marked starts `sleep 300` with entry in its environment, one in a
// session of its own the same way, and returns both pids once they run;
// they are killed when the test ends.
func marked(t *testing.T, entry string) []int {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$1/a"; setsid sh -c 'echo $$ > "$1/b.tmp"; mv "$1/b.tmp" "$1/b"; exec sleep 300' sh "$1" </dev/null >/dev/null 2>&1 &`, "sh", dir)
	cmd.Env = append(os.Environ(), entry)
	require.NoError(t, cmd.Run())
	var pids []int
	for _, f := range []string{"a", "b"} {
		var b []byte
		require.Eventually(t, func() bool {
			var err error
			b, err = os.ReadFile(dir + "/" + f)
			return err == nil && len(b) > 0
		}, 10*time.Second, 10*time.Millisecond)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	// sleep has exec'd once its environment names it.
	require.Eventually(t, func() bool { return len(withEnv(entry, 0)) >= 2 }, 10*time.Second, 10*time.Millisecond)
	t.Cleanup(func() {
		for _, p := range pids {
			kill(p, true)
		}
		reapZombies(os.Getpid(), nil)
	})
	return pids
}

// The watcher, once dtree is gone (its pipe closed), ends every process
// whose environment holds the run's id, and only those.
func TestWatchEndsTheRunsProcessesWhenDtreeDies(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	run := "DTREE_RUN_ID=test-" + strconv.Itoa(os.Getpid()) + "-died"
	ours := marked(t, run)
	other := marked(t, run+"-other")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	code := make(chan int, 1)
	go func() { code <- watch(r, strings.TrimPrefix(run, "DTREE_RUN_ID=")) }()
	require.NoError(t, w.Close()) // dtree dies
	select {
	case c := <-code:
		assert.Equal(t, 0, c)
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not end")
	}
	for _, p := range ours {
		assert.False(t, alive(p), "pid %d of the run", p)
	}
	for _, p := range other {
		assert.True(t, alive(p), "pid %d of another run", p)
	}
}

// A watcher whose pipe says anything but end of file (dtree writes
// nothing) takes it for no death, and ends nothing.
func TestWatchEndsNothingWithoutEndOfFile(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	run := "DTREE_RUN_ID=test-" + strconv.Itoa(os.Getpid()) + "-byte"
	ours := marked(t, run)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	_, err = w.Write([]byte{1})
	require.NoError(t, err)
	w.Close()
	assert.Equal(t, 2, watch(r, strings.TrimPrefix(run, "DTREE_RUN_ID=")))
	for _, p := range ours {
		assert.True(t, alive(p), "pid %d", p)
	}
}

// A dtree started as a watcher is told apart by its argv and its
// environment together; anything else is a command line.
func TestWatcherMainOnlyForAWatcher(t *testing.T) {
	args := os.Args
	t.Cleanup(func() { os.Args = args })
	for _, tc := range []struct {
		args []string
		env  string
	}{
		{[]string{"dtree", "run", "x.csv"}, "3"},
		{[]string{"dtree", watchArg, "id"}, ""},
		{[]string{"dtree", watchArg}, "3"},
	} {
		os.Args = tc.args
		t.Setenv(watchEnv, tc.env)
		_, ok := WatcherMain()
		assert.False(t, ok, "%v %s=%s", tc.args, watchEnv, tc.env)
	}
}

// TestMain lets this test binary run as a watcher, as dtree's main does.
func TestMain(m *testing.M) {
	if code, ok := WatcherMain(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// The watcher Watch starts is a process of its own: dtree's death (its
// pipe closed) makes it end the run's processes; at the end of the run
// it is killed and reaped, not left a zombie, and ends nothing.
func TestWatcherProcess(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	t.Run("dtree dies", func(t *testing.T) {
		id := "test-" + strconv.Itoa(os.Getpid()) + "-process-died"
		ours := marked(t, "DTREE_RUN_ID="+id)
		r := New(time.Second).WithWatcher(os.Args[0])
		require.NoError(t, r.Watch(id))
		proc := r.watcherProc
		require.NoError(t, r.watcherPipe.Close()) // as the kernel does when dtree dies
		_, err := proc.Wait()
		require.NoError(t, err)
		for _, p := range ours {
			assert.False(t, alive(p), "pid %d of the run", p)
		}
	})
	t.Run("the run ends", func(t *testing.T) {
		id := "test-" + strconv.Itoa(os.Getpid()) + "-process-ended"
		r := New(time.Second).WithWatcher(os.Args[0])
		require.NoError(t, r.Watch(id))
		pid := r.watcherPid
		require.True(t, alive(pid))
		// A process of the run that EndAll spares, as one it could not
		// see would be: the watcher must not end it after the run's end.
		ours := marked(t, "DTREE_RUN_ID="+id)
		r.mu.Lock()
		r.self = -1 // EndAll sees no descendants
		r.mu.Unlock()
		r.EndAll()
		_, ok := readStat(strconv.Itoa(pid))
		assert.False(t, ok, "the watcher is gone and reaped: it can end nothing now")
		for _, p := range ours {
			assert.True(t, alive(p), "pid %d", p)
		}
	})
}

// What each agent call's sweep costs when nothing is left and the run's
// watcher is dtree's one child: the waitid of the no-children path, then
// the children lists of dtree's threads
// (go test -run XXX -bench StepEnded ./internal/procs).
func BenchmarkStepEndedNothingLeftWithWatcher(b *testing.B) {
	r := New(time.Second).WithWatcher(os.Args[0])
	if err := r.Watch("bench"); err != nil {
		b.Fatal(err)
	}
	defer r.EndAll()
	for b.Loop() {
		r.StepEnded(false)
	}
}

// What the watcher costs a run: its start (a fork and exec of this
// program) and, at the end, its kill and reaping
// (go test -run XXX -bench WatcherPerRun ./internal/procs).
func BenchmarkWatcherPerRun(b *testing.B) {
	for b.Loop() {
		r := New(time.Second).WithWatcher(os.Args[0])
		if err := r.Watch("bench"); err != nil {
			b.Fatal(err)
		}
		r.EndAll()
	}
}

// The threads are listed once and read again after each call; a child of
// a thread made since (Go starts threads as it needs them, and an agent is
// started from whichever the call's goroutine locked) is still seen.
func TestChildListsSeeAChildOfAThreadMadeSince(t *testing.T) {
	var c childLists
	defer c.close()
	_, ok := c.children() // lists the threads as they are
	require.True(t, ok)
	listed := map[string]bool{}
	for _, tid := range c.tids {
		listed[tid] = true
	}

	// Goroutines that hold their threads, more than there are, make the
	// runtime start more; the child is started from one of those.
	type held struct {
		tid  string
		fork chan bool
	}
	heldc := make(chan held)
	startedc := make(chan *exec.Cmd)
	for range len(c.tids) + 3 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			h := held{strconv.Itoa(syscall.Gettid()), make(chan bool)}
			heldc <- h
			if <-h.fork {
				cmd := exec.Command("sleep", "300")
				if err := cmd.Start(); err != nil {
					cmd = nil
				}
				startedc <- cmd
				<-h.fork
			}
		}()
	}
	var all []held
	for range len(c.tids) + 3 {
		all = append(all, <-heldc)
	}
	var forker *held
	for i := range all {
		if !listed[all[i].tid] && forker == nil {
			forker = &all[i]
			continue
		}
		close(all[i].fork)
	}
	require.NotNil(t, forker, "a thread made since the listing")
	defer close(forker.fork)
	forker.fork <- true
	cmd := <-startedc
	require.NotNil(t, cmd)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	kids, ok := c.children()
	require.True(t, ok)
	assert.Contains(t, kids, cmd.Process.Pid, "the child of thread %s, made since the last listing", forker.tid)
	assert.True(t, c.otherThan(0))
}
