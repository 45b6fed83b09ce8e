package runlog

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRenumber(t *testing.T) {
	t.Parallel()
	ids := map[string]string{"4": "12", "5": "13"}
	tests := []struct {
		name, line string
		want       Event
		branch     string
	}{
		{name: "node_end: node and next", line: `{"time":"2026-11-25T00:00:03Z","event":"node_end","label":"","next":"5","node":"4","output":"ok","response":null,"run_id":"r1","status":"succeeded","usage":{},"validation":null,"visit":2}`,
			want: NodeEnd{Node: "12", Next: "13", Output: "ok", RunID: "r1", Status: "succeeded", Visit: 2, Response: []byte("null")}},
		{name: "decision", line: `{"time":"2026-11-25T00:00:03Z","event":"decision","answer":"yes","label":"Yes","next":"4","node":"5","run_id":"r1"}`,
			want: Decision{Node: "13", Next: "12", Answer: "yes", Label: "Yes", RunID: "r1"}},
		{name: "a fork branch's event stays its", line: `{"time":"2026-11-25T00:00:03Z","event":"node_start","branch":"4/b","cli":"fake","node":"5","role":"process","run_id":"r1","visit":1}`,
			want: NodeStart{Node: "13", CLI: "fake", Role: "process", RunID: "r1", Visit: 1}, branch: "4/b"},
		{name: "branch_start: its fork and first step", line: `{"time":"2026-11-25T00:00:03Z","event":"branch_start","branch":"4/b","checkpoint":"c","first":"5","fork":"4","name":"b","run_id":"r1"}`,
			want: BranchStart{Fork: "12", First: "13", Name: "b", Checkpoint: "c", RunID: "r1"}, branch: "4/b"},
		{name: "branch_end: its path", line: `{"time":"2026-11-25T00:00:03Z","event":"branch_end","branch":"4/b","path":["5","9"],"run_id":"r1","status":"succeeded"}`,
			want: BranchEnd{Path: []string{"13", "9"}, RunID: "r1", Status: "succeeded"}, branch: "4/b"},
		{name: "join: its node and fork", line: `{"time":"2026-11-25T00:00:03Z","event":"join","branches":["4/b"],"fork":"4","mode":"all","node":"5","run_id":"r1"}`,
			want: Join{Node: "13", Fork: "12", Mode: "all", Branches: []string{"4/b"}, RunID: "r1"}},
		{name: "an id not renamed stays", line: `{"time":"2026-11-25T00:00:03Z","event":"node_start","cli":"fake","node":"9","role":"process","run_id":"r1","visit":1}`,
			want: NodeStart{Node: "9", CLI: "fake", Role: "process", RunID: "r1", Visit: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Renumber([]byte(tt.line), ids)
			assert.True(t, bytes.HasPrefix(got, []byte(`{"time":"2026-11-25T00:00:03Z","event":"`)), "%s", got)
			rd := NewEventReader(bytes.NewReader(got))
			ev, err := rd.Next()
			require.NoError(t, err)
			assert.Equal(t, tt.want, ev)
			assert.Equal(t, tt.branch, rd.Branch())
		})
	}
	other := []byte(`{"time":"t","event":"from_the_future","node":"4"}`)
	assert.Equal(t, other, Renumber(other, ids), "an event of a newer dtree is left as it is")
}
