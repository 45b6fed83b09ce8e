package procs

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// alive reports whether pid runs (a zombie runs nothing).
func alive(pid int) bool {
	st, ok := readStat(strconv.Itoa(pid))
	return ok && !st.zombie
}

// orphan starts a shell that starts `sleep 300` in a session of its own
// and exits, as an agent whose tool detaches; it returns the sleep's pid,
// which the subreaper (this test process) has inherited.
func orphan(t *testing.T) int {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$1/pid"`, "sh", dir)
	require.NoError(t, cmd.Run())
	b, err := os.ReadFile(dir + "/pid")
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, ok := readStat(strconv.Itoa(pid))
		return ok && st.PPid == os.Getpid()
	}, 5*time.Second, 10*time.Millisecond, "the orphan is reparented to the subreaper")
	t.Cleanup(func() { kill(pid, true); reapZombies(os.Getpid(), nil) })
	return pid
}

// The tests run one after another: this process is the subreaper of all
// of them, and a sweep of one would end another's processes.
func TestReaper(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	r := New(time.Second)
	require.NoError(t, r.Subreap())

	t.Run("a step's orphan is ended and reaped when the step ends", func(t *testing.T) {
		pid := orphan(t)
		r.StepEnded(false)
		assert.False(t, alive(pid))
		_, ok := readStat(strconv.Itoa(pid))
		assert.False(t, ok, "reaped, not left a zombie")
	})

	t.Run("keep_running keeps it past later steps, until the run ends", func(t *testing.T) {
		kept := orphan(t)
		r.StepEnded(true)
		other := orphan(t)
		r.StepEnded(false)
		assert.True(t, alive(kept), "a later step's end spares it")
		assert.False(t, alive(other), "the later step's own is ended")
		assert.Equal(t, []int{kept}, pids(r.Running()))
		r.EndAll()
		assert.False(t, alive(kept))
		assert.Empty(t, r.Running())
	})

	t.Run("while another call runs, the sweep waits for the last call's end", func(t *testing.T) {
		// Two branches of a fork: one call ends while the other runs; the
		// other's processes cannot be told from leftovers, so nothing is
		// ended until the second call ends too.
		r.StepStarted()
		r.StepStarted()
		other := orphan(t)
		r.StepEnded(false)
		assert.True(t, alive(other), "the other call's processes run on")
		r.StepEnded(false)
		assert.False(t, alive(other), "ended with the last call")
	})

	t.Run("SIGKILL after the grace period for one that ignores SIGTERM", func(t *testing.T) {
		dir := t.TempDir()
		cmd := exec.Command("sh", "-c", `setsid sh -c 'trap "" TERM; echo ready > "$1/ready"; while :; do sleep 1; done' sh "$1" </dev/null >/dev/null 2>&1 &`, "sh", dir)
		require.NoError(t, cmd.Run())
		require.Eventually(t, func() bool { _, err := os.Stat(dir + "/ready"); return err == nil }, 5*time.Second, 10*time.Millisecond)
		require.NotEmpty(t, r.Running())
		start := time.Now()
		r.StepEnded(false)
		assert.Empty(t, r.Running())
		assert.GreaterOrEqual(t, time.Since(start), time.Second, "it had the grace period")
	})

	t.Run("the watcher is spared by every sweep, and is no child to sweep for", func(t *testing.T) {
		w := exec.Command("sleep", "300")
		require.NoError(t, w.Start())
		t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
		st, ok := readStat(strconv.Itoa(w.Process.Pid))
		require.True(t, ok)
		r.mu.Lock()
		r.watcherPid, r.watcher = st.Pid, map[int]uint64{st.Pid: st.Start}
		r.mu.Unlock()
		t.Cleanup(func() { r.mu.Lock(); r.watcherPid, r.watcher = 0, nil; r.mu.Unlock() })
		assert.False(t, r.anyChild(), "the watcher alone: the sweep after a call is skipped")
		pid := orphan(t)
		assert.True(t, r.anyChild())
		assert.Equal(t, []int{pid}, pids(r.Running()), "an interrupt does not name the watcher")
		r.StepEnded(false)
		assert.False(t, alive(pid))
		r.Force()
		r.EndAll()
		assert.True(t, alive(w.Process.Pid), "the watcher runs on until dtree writes its byte or dies")
	})

	t.Run("Force kills at once", func(t *testing.T) {
		pid := orphan(t)
		r.Force()
		assert.Eventually(t, func() bool { return !alive(pid) }, 2*time.Second, 10*time.Millisecond)
		r.EndAll()
		_, ok := readStat(strconv.Itoa(pid))
		assert.False(t, ok, "reaped")
	})
}

func pids(ps []Proc) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.Pid)
	}
	return out
}

// A nil Reaper (dtree run in a test, or where there is no subreaper) does
// nothing and does not fail.
func TestNilReaper(t *testing.T) {
	var r *Reaper
	assert.NoError(t, r.Subreap())
	r.StepEnded(false)
	r.StepEnded(true)
	r.Force()
	r.EndAll()
	assert.Empty(t, r.Running())
}

// What each agent call's sweep costs when nothing is left: one read of
// /proc (go test -bench StepEnded ./internal/procs).
func BenchmarkStepEndedNothingLeft(b *testing.B) {
	r := New(time.Second)
	for b.Loop() {
		r.StepEnded(false)
	}
}
