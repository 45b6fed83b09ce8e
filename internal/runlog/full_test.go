package runlog_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/runlog/runlogtest"
)

// jsonLines reads path and requires every line to be whole JSON; it
// returns their "event" and "node" fields.
func jsonLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if len(b) > 0 {
		require.True(t, strings.HasSuffix(string(b), "\n"), "events.jsonl ends in a torn line: %q", b[max(0, len(b)-80):])
	}
	var got []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		var ev struct {
			Event string `json:"event"`
			N     string `json:"node"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "line %q", sc.Text())
		got = append(got, ev.Event+ev.N)
	}
	return got
}

func requireFull(t *testing.T, err error, name string) {
	t.Helper()
	var we *runlog.WriteError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, name, filepath.Base(we.Path))
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Contains(t, err.Error(), "cannot write the run log ")
	assert.True(t, strings.HasSuffix(err.Error(), name+": no space left on device"), "%q", err)
}

// A full disk takes part of a write of events: the file is cut back to its
// last whole line, so it stays valid JSONL, and the events left out are
// written by the next Flush once there is room.
func TestFlushOnAFullDiskLeavesWholeLines(t *testing.T) {
	t.Parallel()
	// The lines are all as long: the time has a fixed width.
	now := func() time.Time { return time.Date(2026, 11, 24, 20, 0, 0, 123456789, time.UTC) }
	line := int64(len(`{"time":"2026-11-24T20:00:00.123456789Z","event":"end","node":"1","run_id":"r"}` + "\n"))
	for _, room := range []int64{0, 1, line - 1, line, line + 1, 2*line + 5, 3*line - 1} {
		disk := &runlogtest.Disk{Room: 10_000, Names: []string{"events.jsonl"}}
		l, err := runlog.Open(runlog.Options{Dir: t.TempDir(), RunID: "r", OpenFile: disk.Open, Now: now})
		require.NoError(t, err)
		require.NoError(t, l.Event(runlog.End{Node: "1"}))
		require.NoError(t, l.Flush())
		disk.SetRoom(room)
		for _, n := range []string{"2", "3", "4"} {
			require.NoError(t, l.Event(runlog.End{Node: n}))
		}
		events := filepath.Join(l.Dir, "events.jsonl")
		err = l.Flush()
		requireFull(t, err, "events.jsonl")
		requireFull(t, l.Err(), "events.jsonl")
		got := jsonLines(t, events)
		assert.Equal(t, []string{"end1", "end2", "end3", "end4"}[:1+room/line], got, "room %d: the lines that fit, whole", room)
		assert.Equal(t, 4-len(got), l.Unwritten(), "room %d", room)

		// Room again: the next Flush writes what was left out, in order.
		disk.SetRoom(10_000)
		require.NoError(t, l.Event(runlog.End{Node: "5"}))
		require.NoError(t, l.Flush())
		assert.Equal(t, []string{"end1", "end2", "end3", "end4", "end5"}, jsonLines(t, events), "room %d", room)
		assert.Zero(t, l.Unwritten())
		requireFull(t, l.Err(), "events.jsonl") // the first failure stays
		requireFull(t, l.Close(), "events.jsonl")
	}
}

// long.log full: the call's writer says so with a *WriteError, and so
// does Err, which the run checks after each call; a failed header counts.
func TestLongLogOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, room := range []int64{0, 200} {
		disk := &runlogtest.Disk{Room: room, Names: []string{"long.log"}}
		l, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Long: true, OpenFile: disk.Open})
		require.NoError(t, err)
		w := l.Call("4", "fake", 1, "run")
		_, err = w.Write([]byte(strings.Repeat("x", 300)))
		requireFull(t, err, "long.log")
		requireFull(t, w.Close(), "long.log")
		requireFull(t, l.Err(), "long.log")
		// events.jsonl is another file, written as before.
		require.NoError(t, l.Event(runlog.End{Node: "1"}))
		require.NoError(t, l.Flush())
		requireFull(t, l.Close(), "long.log")
	}
}

// short.json on a full disk: the old file stays whole, and the error,
// also of a write in the background, comes back from Wait and Err.
func TestShortJSONOnAFullDiskKeepsTheOld(t *testing.T) {
	t.Parallel()
	disk := &runlogtest.Disk{Room: 20, Names: []string{".short.json.tmp"}}
	l, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true, OpenFile: disk.Open})
	require.NoError(t, err)
	require.NoError(t, l.ShortJSON([]byte(`{"n": 1}`)))
	require.NoError(t, l.Wait())
	l.QueueShort([]byte(`{"n": 2, "more": "than fits"}`))
	requireFull(t, l.Wait(), "short.json")
	requireFull(t, l.Err(), "short.json")
	requireFull(t, l.ShortJSON([]byte(`{"n": 3, "more": "than fits"}`)), "short.json")
	got, err := os.ReadFile(filepath.Join(l.Dir, "short.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"n": 1}`, string(got))
	entries, err := os.ReadDir(l.Dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasSuffix(e.Name(), ".tmp"), "%s left behind", e.Name())
	}
	assert.ErrorIs(t, l.Close(), syscall.ENOSPC, "the queued write's error")
}
