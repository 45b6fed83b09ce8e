//go:build unix

package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A run held by one resume is refused to the next, with the holder's pid,
// until the first lets it go.
func TestLockResumeRefusesASecondResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	release, err := LockResume(dir)
	require.NoError(t, err)

	_, err = LockResume(dir)
	var busy *ResumingError
	require.ErrorAs(t, err, &busy)
	assert.Equal(t, os.Getpid(), busy.Pid)
	assert.EqualError(t, err, fmt.Sprintf("another dtree (pid %d) is resuming it", os.Getpid()))

	release()
	again, err := LockResume(dir)
	require.NoError(t, err, "a lock let go is free")
	again()
}

// keep_runs at a run's start: the oldest runs past the newest keep go,
// except one a dtree still holds (BenchmarkOldRuns100 times the reading).
func TestOldRunsKeepsTheNewestAndAHeldRun(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	ids := []string{"20261125T090000Z-aaaaaa", "20261125T090001Z-bbbbbb", "20261125T090002Z-cccccc", "20261125T090003Z-dddddd", "20261125T090004Z-eeeeee"}
	for _, id := range ids {
		require.NoError(t, os.MkdirAll(filepath.Join(logDir, id), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(logDir, id, "events.jsonl"), []byte(`{"time":"2026-11-25T09:00:00Z","event":"run_start"}`+"\n"), 0o644))
	}
	// The oldest is going: its dtree holds its events.jsonl.
	f, err := os.Open(filepath.Join(logDir, ids[0], "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	holdRun(f)

	old, err := OldRuns(logDir, 2)
	require.NoError(t, err)
	var got []string
	for _, r := range old {
		got = append(got, r.ID)
	}
	assert.Equal(t, ids[1:3], got, "the held run stays, the newest 2 stay")

	none, err := OldRuns(logDir, 5)
	require.NoError(t, err)
	assert.Empty(t, none)
	all, err := OldRuns(logDir, 0)
	require.NoError(t, err)
	assert.Len(t, all, 4, "keep 0: every run no dtree holds")

	// dtree clean names the held run as kept: PastRuns has it, going.
	past, err := PastRuns(logDir, 2)
	require.NoError(t, err)
	require.Len(t, past, 3)
	assert.True(t, past[0].Going)
	assert.Equal(t, ids[0], past[0].ID)
	assert.False(t, past[1].Going || past[2].Going)
}

// A run's start in a log directory of 100 runs: what keep_runs costs it.
// Each run was read whole (its first event, and whether a dtree holds
// it) until only those past keep were.
func BenchmarkOldRuns100(b *testing.B) {
	logDir := b.TempDir()
	for i := range 101 {
		dir := filepath.Join(logDir, fmt.Sprintf("20261125T09%02d%02dZ-%06x", i/60, i%60, i))
		require.NoError(b, os.MkdirAll(dir, 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(`{"time":"2026-11-25T09:00:00Z","event":"run_start"}`+"\n"), 0o644))
	}
	b.ResetTimer()
	for b.Loop() {
		old, err := OldRuns(logDir, 100)
		if err != nil || len(old) != 1 {
			b.Fatal(old, err)
		}
	}
}

// The log's files are opened close-on-exec, as os.OpenFile's are: an agent
// never inherits events.jsonl, long.log or a stream file.
func TestOpenFileIsCloseOnExec(t *testing.T) {
	t.Parallel()
	f, err := openOS(filepath.Join(t.TempDir(), "x"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	require.NoError(t, err)
	defer f.Close()
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	require.NoError(t, err)
	assert.NotZero(t, flags&unix.FD_CLOEXEC)
	st, err := f.Stat()
	require.NoError(t, err)
	assert.Zero(t, st.Mode().Perm()&^0o640, "no more than the mode asked for")
	_, err = openOS(f.Name(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	assert.ErrorIs(t, err, os.ErrExist, "an error os.OpenFile's callers know")
}

// A resume.lock that is a second name of another file is not written
// into: the pid would land in that file (a run directory is a file anyone
// may have edited).
func TestLockResumeRefusesASecondName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep me"), 0o644))
	require.NoError(t, os.Link(victim, filepath.Join(dir, ResumeLockFile)))
	_, err := LockResume(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a file of dtree's")
	kept, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep me", string(kept))
}
