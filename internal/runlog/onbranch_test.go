package runlog

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OnBranch tells a fork's branch's events (Log.EventOn) from the run's.
func TestEventReaderOnBranch(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	lines := []struct {
		line string
		want bool
	}{
		{`{"time":"2026-11-27T08:00:00Z","event":"node_end","branch":"plan/a","node":"a","run_id":"R"}`, true},
		{`{"time":"2026-11-27T08:00:00Z","event":"node_end","node":"review","run_id":"R"}`, false},
		{`{"time":"2026-11-27T08:00:00Z","event":"node_end","node":"x","output":"\",\"branch\":\"no","run_id":"R"}`, false},
		{`{"event":"node_end","branch":"plan/a","time":"2026-11-27T08:00:00Z","node":"a","run_id":"R"}`, false},
		{`{"time":"2026-11-27T08:00:00Z","event":"join","branches":["plan/a"],"run_id":"R"}`, false},
	}
	for _, l := range lines {
		buf.WriteString(l.line + "\n")
	}
	r := NewEventReader(strings.NewReader(buf.String()))
	for i := 0; ; i++ {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			require.Equal(t, len(lines), i)
			break
		}
		require.NoError(t, err)
		assert.Equal(t, lines[i].want, r.OnBranch(), lines[i].line)
	}
}
