package runlog

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dtree-dev/dtree/types"
)

// BenchmarkEvent encodes the events of one node visit as the run does
// (node_start, agent_call, node_end), without writing them.
func BenchmarkEvent(b *testing.B) {
	l := &Log{RunID: "20261124T060929Z-abcdef", redact: NewRedactor(nil), now: time.Now}
	var usage types.UsageTotal
	usage.Add(types.Usage{}, 4)
	for b.Loop() {
		resp, _ := json.Marshal(types.ProcessResponse{Completed: true, Comments: []string{"done"}})
		_ = l.Event(NodeStart{Node: "4", Visit: 1, Role: "process", CLI: "fake"})
		_ = l.Event(AgentCall{Node: "4", Attempt: 1, Purpose: "run", CLI: "fake",
			Argv: []string{"/usr/local/bin/fakeagent", "<prompt: 317 bytes>"}, DurationMS: 4, StdoutBytes: 81})
		_ = l.Event(NodeEnd{Node: "4", Visit: 1, Status: "succeeded", Response: resp, Next: "5", Usage: usage})
		l.unwritten = l.unwritten[:0]
	}
}
