package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/runlog"
)

// A run with --answers starts no process: with nothing on PATH, and no
// dtree to start again, every call is answered, in dtree itself
// (readme/replay.md). The --timeout bounds a dtree that would start a
// child: that child, this test binary, would not answer.
func TestReplayStartsNoProcess(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // empty: no program can be found
	dir := t.TempDir()
	config := filepath.Join(dir, "dtree.yaml")
	require.NoError(t, os.WriteFile(config, nil, 0o644))
	env := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": dir, "DTREE_RETRY_BACKOFF": "0"}
	var out, errb bytes.Buffer
	a := &App{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
	logs := filepath.Join(dir, "logs")
	code := a.Run(t.Context(), []string{"run", "--config", config, "--log-dir", logs, "--timeout", "2s",
		"../../testdata/quickstart/update-deps.csv", "--answers", "../../testdata/quickstart/update-deps.answers.yaml"})
	require.Equal(t, 0, code, errb.String())
	assert.Contains(t, errb.String(), "path: 3 → 4 → 5 → 6 → 7 → 8 → 9 → 7 → 8 → 10 → 11")

	events, err := runlog.ReadEvents(filepath.Join(logs, "latest"))
	require.NoError(t, err)
	calls := 0
	for _, e := range events {
		if c, ok := e.(runlog.AgentCall); ok {
			calls++
			assert.Equal(t, "replay", c.CLI)
			assert.Equal(t, "dtree (replay)", c.Argv[0])
			assert.Zero(t, c.ExitCode)
		}
	}
	assert.Equal(t, 14, calls)
	entries, err := os.ReadDir(filepath.Join(logs, "latest"))
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), ".replay"), "a replay file in the run directory: %s", e.Name())
	}
}
