package export_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/export"
)

func TestTraceFrom(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, events string
		want         export.Trace
	}{
		{
			name: "failed", events: failedRun,
			want: export.Trace{RunID: "20261122T052846Z-cba5a1", Status: "failed", Page: "2", Start: "3", Source: "build-green.csv",
				Error:   `node 8 "Add the missing entries to CHANGELOG.md." failed after 2 attempts: the agent call failed: fake exited with status 3`,
				Visits:  map[string]int{"3": 1, "4": 2, "5": 2, "6": 1, "7": 1, "8": 1},
				Retries: map[string]int{"6": 1, "8": 1}, Stopped: "8", StoppedHow: "failed",
				Steps: []export.Step{{"3", "4", "", ""}, {"4", "5", "", ""}, {"5", "6", "No", ""}, {"6", "4", "", ""}, {"4", "5", "", ""}, {"5", "7", "Yes", ""}, {"7", "8", "No", ""}}},
		},
		{
			name: "start to end", events: emptyRun,
			want: export.Trace{RunID: "r1", Status: "succeeded", Page: "1", Start: "s", GraphDigest: "9f2c", Visits: map[string]int{"s": 1, "e": 1},
				Retries: map[string]int{}, Steps: []export.Step{{"s", "e", "", ""}}},
		},
		{
			name: "limit", events: limitRun,
			want: export.Trace{RunID: "r2", Status: "limit_reached", Error: "node a reached its visit limit", Page: "1", Start: "a",
				Visits: map[string]int{"a": 2, "b": 2}, Retries: map[string]int{}, Stopped: "a", StoppedHow: "limit_reached",
				Steps: []export.Step{{"a", "b", "", ""}, {"b", "a", "No", ""}, {"a", "b", "", ""}, {"b", "a", "No", ""}}},
		},
		{
			// The fork's move is into each branch, not to its join;
			// each step names its branch, in the order logged.
			name: "fork", events: forkRun,
			want: export.Trace{RunID: "r4", Status: "succeeded", Page: "1", Start: "start", Source: "chart.yaml",
				Visits:  map[string]int{"start": 1, "plan": 1, "a": 1, "b": 1, "c": 1, "review": 1, "done": 1},
				Retries: map[string]int{},
				Steps: []export.Step{{From: "start", To: "plan"}, {From: "plan", To: "a", Branch: "plan/a"}, {From: "plan", To: "b", Branch: "plan/b"},
					{From: "b", To: "review", Branch: "plan/b"}, {From: "a", To: "c", Branch: "plan/a"}, {From: "c", To: "review", Branch: "plan/a"},
					{From: "review", To: "done"}}},
		},
		{
			// The run stopped at the branch that failed, not at the one
			// its failure interrupted.
			name: "fork failed", events: forkFailedRun,
			want: export.Trace{RunID: "r5", Status: "failed", Error: "node b failed", Page: "1", Start: "start",
				Visits: map[string]int{"start": 1, "plan": 1, "a": 1, "b": 1}, Retries: map[string]int{}, Stopped: "b", StoppedHow: "failed",
				Interrupted: map[string]bool{"a": true},
				Steps:       []export.Step{{From: "start", To: "plan"}, {From: "plan", To: "a", Branch: "plan/a"}, {From: "plan", To: "b", Branch: "plan/b"}}},
		},
		{
			// Ctrl-C stops every branch: the run stopped at the first,
			// and the other's visit did not finish either.
			name: "fork interrupted", events: forkInterruptedRun,
			want: export.Trace{RunID: "r6", Status: "interrupted", Error: "interrupted", Page: "1", Start: "start",
				Visits: map[string]int{"start": 1, "plan": 1, "a": 1, "b": 1}, Retries: map[string]int{}, Stopped: "a", StoppedHow: "interrupted",
				Interrupted: map[string]bool{"b": true},
				Steps:       []export.Step{{From: "start", To: "plan"}, {From: "plan", To: "a", Branch: "plan/a"}, {From: "plan", To: "b", Branch: "plan/b"}}},
		},
		{
			name: "interrupted and cut short", events: interruptedRun,
			want: export.Trace{RunID: "r3", Status: "running", Page: "1", Start: "a", Visits: map[string]int{"a": 1},
				Retries: map[string]int{}, Stopped: "a", StoppedHow: "interrupted"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := export.TraceFrom(strings.NewReader(tc.events))
			require.NoError(t, err)
			assert.Equal(t, tc.want, *got)
		})
	}
}

func TestTraceFromRejectsOtherFiles(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "not json\n", `{"format_version":1,"run_id":"x"}`} {
		_, err := export.TraceFrom(strings.NewReader(in))
		assert.ErrorContains(t, err, "not the events.jsonl of a dtree run")
	}
}

// A fork of many branches (readme/parallel.md) is read in linear time:
// each branch_start is one step, whatever the branches before it.
func TestTraceOfAWideForkIsLinear(t *testing.T) {
	log := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"time":"2026-11-27T08:00:00Z","event":"run_start","run_id":"r","page":"1","start":"start"}` + "\n")
		b.WriteString(`{"time":"2026-11-27T08:00:00Z","event":"node_start","node":"plan","visit":1}` + "\n")
		b.WriteString(`{"time":"2026-11-27T08:00:00Z","event":"node_end","next":"join","node":"plan","status":"succeeded","visit":1}` + "\n")
		for i := range n {
			fmt.Fprintf(&b, `{"time":"2026-11-27T08:00:00Z","event":"branch_start","branch":"plan/b%d","first":"b%d","fork":"plan","name":"b%d"}`+"\n", i, i, i)
		}
		for i := range n {
			fmt.Fprintf(&b, `{"time":"2026-11-27T08:00:00Z","event":"node_start","branch":"plan/b%d","node":"b%d","visit":1}`+"\n", i, i)
			fmt.Fprintf(&b, `{"time":"2026-11-27T08:00:00Z","event":"node_end","branch":"plan/b%d","next":"join","node":"b%d","status":"succeeded","visit":1}`+"\n", i, i)
		}
		return b.String()
	}
	took := func(n int) time.Duration {
		in := log(n)
		best := time.Duration(1 << 62)
		for range 2 {
			runtime.GC()
			start := time.Now()
			tr, err := export.TraceFrom(strings.NewReader(in))
			best = min(best, time.Since(start))
			require.NoError(t, err)
			require.Equal(t, 1+2*n, len(tr.Steps), "start to the fork, then a step into each branch and one out of it")
			require.Equal(t, export.Step{From: "plan", To: "b0", Branch: "plan/b0"}, tr.Steps[1], "the fork's own step is the first branch's")
		}
		return best
	}
	small, large := took(5_000), took(20_000)
	t.Logf("5,000 branches: %v; 20,000 branches: %v", small, large)
	assert.Less(t, large, 10*time.Second)
	assert.Less(t, float64(large)/float64(max(small, time.Millisecond)), 12.0, "four times the branches take more than 12 times as long")
}
