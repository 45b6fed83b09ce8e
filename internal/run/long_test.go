package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/prompts"
)

// A loop of two NoValidation process nodes, each allowed a million visits.
const twoStepLoopCSV = `Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments,max_visits
1,Page,,,,,,,,,,,P,,
2,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,Start,,
3,Process,Flowchart Shapes/Containers,1,,,,,,,NoValidation,,Step a,,1000000
4,Process,Flowchart Shapes/Containers,1,,,,,,,NoValidation,,Step b,,1000000
5,Line,,1,,,2,3,None,Arrow,,,,,
6,Line,,1,,,3,4,None,Arrow,,,,,
7,Line,,1,,,4,3,None,Arrow,,,,,`

// walkLoop runs steps steps of the two-step loop with agents that answer
// at once, and returns the summary and the run's short.json.
func walkLoop(t *testing.T, steps int) (*Summary, map[string]any) {
	t.Helper()
	c, reg := fakeChart(t, strings.NewReader(twoStepLoopCSV))
	runner := func(ctx context.Context, call agent.Call) (agent.Result, error) {
		return agent.Result{Answer: `{"completed": true, "comments": ["` + call.Request.Node + `"]}`}, nil
	}
	log, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true})
	require.NoError(t, err)
	sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root,
		Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log, MaxSteps: steps})
	require.ErrorAs(t, err, new(*LimitError))
	require.NoError(t, log.Close())
	b, err := os.ReadFile(filepath.Join(log.Dir, "short.json"))
	require.NoError(t, err)
	var short map[string]any
	require.NoError(t, json.Unmarshal(b, &short))
	return sum, short
}

// What a run keeps of its steps stops growing: the newest KeptSteps in the
// summary, the newest ShortSteps in short.json, and how many are left out.
func TestLongRunKeepsItsNewestSteps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		steps, kept, leftOut int
	}{
		{steps: 10, kept: 10},
		{steps: ShortSteps, kept: ShortSteps},
		{steps: 2*ShortSteps + 3, kept: 2*ShortSteps + 3},
		{steps: KeptSteps, kept: KeptSteps},
		{steps: 2*KeptSteps + 7, kept: KeptSteps, leftOut: KeptSteps + 7},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.steps), func(t *testing.T) {
			t.Parallel()
			sum, short := walkLoop(t, tt.steps)
			assert.Equal(t, tt.steps, sum.Steps())
			require.Len(t, sum.Nodes, tt.kept)
			assert.Equal(t, tt.leftOut, sum.NodesLeftOut)
			last := sum.Nodes[len(sum.Nodes)-1]
			assert.Equal(t, (tt.steps+1)/2, last.Visit, "the newest step is kept")
			assert.Len(t, sum.Path, 1+tt.steps, "the summary's path is whole")

			// short.json: the newest ShortSteps of them, and of the path,
			// which has the start too; a count of 0 is absent.
			nodes := short["nodes"].([]any)
			require.Len(t, nodes, min(tt.steps, ShortSteps))
			assert.Equal(t, float64(last.Visit), nodes[len(nodes)-1].(map[string]any)["visit"])
			assert.Len(t, short["path"].([]any), min(1+tt.steps, ShortSteps))
			leftOut := func(key string) int { f, _ := short[key].(float64); return int(f) }
			assert.Equal(t, max(tt.steps-ShortSteps, 0), leftOut("nodes_left_out"))
			assert.Equal(t, max(1+tt.steps-ShortSteps, 0), leftOut("path_left_out"))
		})
	}
}

// A branch keeps at most 2*keptHistory finished visits however long the
// run, and each node's latest for its variables.
func TestHistoryIsBounded(t *testing.T) {
	t.Parallel()
	w := &branch{}
	const n = 100_000
	for i := range n {
		w.addHistory(pastStep{ID: fmt.Sprint(i % 3), Text: "Step", Output: strings.Repeat("x", 100), ExitCode: i})
		require.Less(t, len(w.history), 2*keptHistory)
	}
	assert.Equal(t, n, w.steps())
	p, ok := w.lastOf("1")
	require.True(t, ok)
	assert.Equal(t, n-3, p.ExitCode, "the latest visit of node 1") // 99,997
	assert.Equal(t, n-1, w.past(n-1).ExitCode)
	assert.Equal(t, n-keptHistory, w.past(n-keptHistory).ExitCode)
}

// The run so far never reaches a visit the walker no longer keeps: each
// step it shows costs at least its heading.
func TestRunSoFarReadsOnlyKeptHistory(t *testing.T) {
	t.Parallel()
	const n = 1_000_000
	oldest := n
	out := prompts.RunSoFar(n, func(i int) prompts.Step {
		oldest = min(oldest, i)
		return prompts.Step{}
	}, prompts.RunSoFarBytes)
	assert.NotEmpty(t, out)
	assert.GreaterOrEqual(t, oldest, n-keptHistory, "read a step %d back", n-oldest)
}

// A resume read from the file keeps no step of the earlier run: it reads
// them again one at a time as it takes them, copies every line of theirs
// to the new log, and --from cuts where it goes on as with ReadCarried.
func TestResumeStreamsTheEarlierRun(t *testing.T) {
	t.Parallel()
	c, reg := resumeChart(t, 2*carryFlushSteps+10)
	dir := failingRun(t, c, reg, t.TempDir())
	events := filepath.Join(dir, "events.jsonl")
	whole, err := os.ReadFile(events)
	require.NoError(t, err)
	f, err := os.Open(events)
	require.NoError(t, err)
	kept, err := ReadCarried(f)
	f.Close()
	require.NoError(t, err)

	for _, from := range []string{"", c.Nodes[5].ID} {
		t.Run("from "+from, func(t *testing.T) {
			t.Parallel()
			carried, err := ReadCarriedFile(events)
			require.NoError(t, err)
			assert.Nil(t, carried.Steps, "no step held")
			assert.Equal(t, kept.Path(), carried.Path())
			assert.Equal(t, kept.At, carried.At)
			want := 2*carryFlushSteps + 9
			if from != "" {
				require.NoError(t, carried.From(from))
				want = 4 // the start terminator is node 0: steps 1-4 are taken
			}
			require.Equal(t, want, carried.Len())

			log, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			runner := func(context.Context, agent.Call) (agent.Result, error) {
				cancel() // the first call: every carried step is taken
				return agent.Result{}, context.Canceled
			}
			page := c.Doc.Pages[0]
			sum, err := Walk(ctx, Options{Chart: c, Page: page, Start: carried.Start.Start, Registry: reg, Runner: runner,
				Backoff: func(int) time.Duration { return 0 }, Log: log, Resume: carried, MaxSteps: 10000})
			require.ErrorIs(t, err, context.Canceled)
			require.NoError(t, log.Close())
			assert.Equal(t, want+1, sum.Steps(), "the carried steps and the one interrupted")
			assert.Equal(t, 2*want+1, sum.Usage.Calls, "each carried step's run and validation, and the call interrupted")
			got, err := os.ReadFile(filepath.Join(log.Dir, "events.jsonl"))
			require.NoError(t, err)
			// Every line of each carried step, as it was.
			copied := 0
			for line := range strings.SplitSeq(string(got), "\n") {
				if strings.Contains(line, `"run_id":"`+carried.Start.RunID+`"`) {
					require.Contains(t, string(whole), line)
					copied++
				}
			}
			assert.Equal(t, 5*want, copied, "node_start, two agent_calls, validation, node_end a step")
		})
	}
}
