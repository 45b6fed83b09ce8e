package runlog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/runlog"
)

// Each call's stream is a file of its own, masked, cut at StreamMax at a
// line's end with a line that says so; a second call of the same name
// gets a file of its own, and a call that prints nothing none.
func TestStreamFiles(t *testing.T) {
	t.Parallel()
	l, err := runlog.Open(runlog.Options{Dir: t.TempDir(), RunID: "r1", Streams: true, StreamMax: 100,
		Redactor: runlog.NewRedactor([]string{"GH_TOKEN=ghp_secret1"})})
	require.NoError(t, err)
	defer l.Close()

	w := l.Stream("4/x", 2, 1, "run")
	for _, s := range []string{`{"type":"assistant","text":"gh`, `p_secret1"}` + "\n", strings.Repeat(`{"n":1}`+"\n", 20)} {
		n, err := w.Write([]byte(s))
		require.NoError(t, err)
		assert.Equal(t, len(s), n)
	}
	require.NoError(t, w.Close())
	assert.Equal(t, filepath.Join(l.Dir, "streams", "4_x.v2.a1.run.jsonl"), w.Path())
	b, err := os.ReadFile(w.Path())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	assert.Equal(t, `{"type":"assistant","text":"***"}`, lines[0], "masked, across two writes")
	assert.Equal(t, `{"dtree":"cut here: this call's stream passed 100 bytes (stream_log_max); the rest is not kept, agent_call's stdout_bytes says how much there was"}`, lines[len(lines)-1])
	for _, line := range lines[1 : len(lines)-1] {
		assert.Equal(t, `{"n":1}`, line, "cut at a line's end")
	}

	again := l.Stream("4/x", 2, 1, "run")
	_, err = again.Write([]byte("{}\n"))
	require.NoError(t, err)
	require.NoError(t, again.Close())
	assert.Equal(t, filepath.Join(l.Dir, "streams", "4_x.v2.a1.run-2.jsonl"), again.Path())

	none := l.Stream("5", 1, 1, "validate")
	require.NoError(t, none.Close())
	assert.Equal(t, "", none.Path())
	require.NoError(t, l.Err())
}
