package run

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// heard is a Progress that listens to the run's events and watches the
// agents' activity.
type heard struct {
	nopProgress
	events     []runlog.Event
	activities int
}

func (h *heard) Event(ev runlog.Event) { h.events = append(h.events, ev) }
func (h *heard) Activity(_ *types.ProcessedNode, _ int, _, _ string, _ agent.Activity) {
	h.activities++
}

// What an agent's stream reports becomes the run's events and the step's
// record: a tool call without an id, or one past the calls awaiting
// their end, is written at once, unfinished; the ones still running at
// the call's end are written then; past runlog.MaxToolCalls a call's
// tool calls are counted in one tool_calls_left_out; the record counts
// them all and keeps the newest LastTools and the files written once.
func TestToolCallsBecomeEvents(t *testing.T) {
	t.Parallel()
	c, reg := fakeChart(t, strings.NewReader(loopCSV))
	const started = 400
	runner := func(ctx context.Context, call agent.Call) (agent.Result, error) {
		if call.Request.Node == "3" && call.Request.Purpose == agent.PurposeRun {
			obs := call.Observe
			require.NotNil(t, obs)
			require.NoError(t, obs(agent.Activity{Kind: agent.ActivityTool, Tool: "Read", Arg: "go.mod"})) // no id
			require.NoError(t, obs(agent.Activity{Kind: agent.ActivityTool, Tool: "Edit", Arg: "a.go", File: "a.go", ID: "e1"}))
			require.NoError(t, obs(agent.Activity{Kind: agent.ActivityToolEnd, ID: "e1", Failed: true}))
			for i := range started - 2 {
				require.NoError(t, obs(agent.Activity{Kind: agent.ActivityTool, Tool: "Edit", Arg: "b.go", File: "b.go", ID: fmt.Sprint("t", i)}))
			}
			require.NoError(t, obs(agent.Activity{Kind: agent.ActivityUsage, Turns: 3}))
		}
		if strings.Contains(call.Prompt, `"fully_completed"`) {
			return agent.Result{Answer: valid}, nil
		}
		if strings.Contains(call.Prompt, `"answer"`) {
			return agent.Result{Answer: `{"answer": "Yes"}`}, nil
		}
		return agent.Result{Answer: done}, nil
	}
	log, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true})
	require.NoError(t, err)
	defer log.Close()
	h := &heard{}
	sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root,
		Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log, Progress: h})
	require.NoError(t, err)

	var calls []runlog.ToolCall
	var left []runlog.ToolCallsLeftOut
	for _, ev := range h.events {
		switch e := ev.(type) {
		case runlog.ToolCall:
			calls = append(calls, e)
		case runlog.ToolCallsLeftOut:
			left = append(left, e)
		}
	}
	require.Len(t, calls, runlog.MaxToolCalls)
	assert.Equal(t, runlog.ToolCall{Node: "3", Attempt: 1, Purpose: "run", CLI: "fake", N: 1, Tool: "Read", Arg: "go.mod", Status: runlog.ToolUnfinished}, calls[0])
	assert.Equal(t, runlog.ToolCall{Node: "3", Attempt: 1, Purpose: "run", CLI: "fake", N: 2, Tool: "Edit", Arg: "a.go", File: "a.go", Status: runlog.ToolError}, calls[1])
	// 256 await their end; the rest are written as they start.
	assert.Equal(t, 3+maxOpenTools, calls[2].N, "the first started past the open ones")
	assert.Equal(t, runlog.ToolUnfinished, calls[2].Status)
	assert.Equal(t, []runlog.ToolCallsLeftOut{{Node: "3", Attempt: 1, Purpose: "run", CLI: "fake", LeftOut: started - runlog.MaxToolCalls}}, left)
	assert.Equal(t, started+2, h.activities, "every activity reaches the watcher")

	// The events are those of events.jsonl.
	evs, err := runlog.ReadEvents(log.Dir)
	require.NoError(t, err)
	n := 0
	for _, ev := range evs {
		if _, ok := ev.(runlog.ToolCall); ok {
			n++
		}
	}
	assert.Equal(t, runlog.MaxToolCalls, n)

	r := sum.Nodes[0]
	assert.Equal(t, "3", r.ID)
	assert.Equal(t, started, r.ToolCalls)
	require.Len(t, r.Tools, LastTools)
	assert.Equal(t, ToolUse{Tool: "Edit", Arg: "b.go", Status: runlog.ToolUnfinished}, ToolUse{Tool: r.Tools[4].Tool, Arg: r.Tools[4].Arg, Status: r.Tools[4].Status})
	assert.Equal(t, []string{"a.go", "b.go"}, r.Files)
	assert.Zero(t, sum.Nodes[1].ToolCalls, "a step whose agent reported none")
}
