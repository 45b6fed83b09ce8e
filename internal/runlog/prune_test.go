package runlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunsOldRemove(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	mk := func(id, first string) {
		require.NoError(t, os.MkdirAll(filepath.Join(logDir, id), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(logDir, id, "events.jsonl"), []byte(`{"time":"`+first+`","event":"run_start"}`+"\n"), 0o644))
	}
	// Two of one second, written in the other order of their ids.
	mk("20261126T100000Z-ffffff", "2026-11-26T10:00:00.7Z")
	mk("20261126T100000Z-000000", "2026-11-26T10:00:00.75Z")
	mk("20261125T090000Z-abcdef", "2026-11-25T09:00:00.000000000Z")
	// A run just starting, its first event not written yet.
	mk("20261126T100000Z-aaaaaa", "")
	require.NoError(t, os.WriteFile(filepath.Join(logDir, "20261126T100000Z-aaaaaa", "events.jsonl"), nil, 0o644))
	mk("20261127T090000Z-123456", "2026-11-27T09:00:00.000000000Z")
	// Not runs: a name that is no run id, a run id without events.
	mk("notes", "2026-11-20T00:00:00.000000000Z")
	require.NoError(t, os.MkdirAll(filepath.Join(logDir, "20261101T000000Z-aaaaaa"), 0o755))
	require.NoError(t, os.Symlink("20261127T090000Z-123456", filepath.Join(logDir, Latest)))

	runs, err := listRuns(logDir)
	require.NoError(t, err)
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []string{"20261125T090000Z-abcdef", "20261126T100000Z-ffffff", "20261126T100000Z-000000", "20261126T100000Z-aaaaaa", "20261127T090000Z-123456"}, ids)

	require.NoError(t, RemoveRun(runs[1]))
	assert.NoDirExists(t, runs[1].Dir)
	assert.DirExists(t, filepath.Join(logDir, "notes"))
	// latest stays while it points at a run that is there, and goes with it.
	require.NoError(t, RemoveRun(runs[4]))
	_, err = os.Lstat(filepath.Join(logDir, Latest))
	assert.ErrorIs(t, err, os.ErrNotExist)

	none, err := OldRuns(filepath.Join(logDir, "missing"), 0)
	require.NoError(t, err)
	assert.Empty(t, none)
}
