package export_test

import (
	"strings"
	"testing"

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
				Steps: []export.Step{{From: "start", To: "plan"}, {From: "plan", To: "a", Branch: "plan/a"}, {From: "plan", To: "b", Branch: "plan/b"}}},
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
