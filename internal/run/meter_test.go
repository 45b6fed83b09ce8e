package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

const meterCSV = `Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments
1,Page,,,,,,,,,,,P,
2,Process,Flowchart Shapes/Containers,1,,,,,,,NoValidation,,Work,
3,Process,Flowchart Shapes/Containers,1,,,,,,,NoValidation,,More,
4,Line,,1,,,2,3,None,Arrow,,,,`

// A call's usage is metered as its stream reports it (meter.go): the
// call that crosses the budget is stopped at the message that crossed it,
// what it reported is counted, and the run ends budget_reached; a call
// that begins a turn past max_turns is stopped, and the attempt retried.
func TestMeter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		maxCost   float64
		maxTokens int64
		maxTurns  int
		// each call streams these messages, each of 100 tokens and $0.02
		messages int
		wantErr  string
		wantStop int // the call stopped after this many messages, 0: none
		// wantCalls is how many calls were made
		wantCalls int
		wantCost  float64
	}{
		{name: "within the budget", maxCost: 1, messages: 3, wantCalls: 2, wantCost: 0.12},
		{name: "cost crossed mid-call", maxCost: 0.09, messages: 3, wantCalls: 2, wantStop: 2, wantCost: 0.10,
			wantErr: `the run reached its budget during node 3 "More", which was stopped: it spent $0.1 of $0.09 (--max-cost), $0.04 of it by attempt 1 run (fake)`},
		{name: "tokens crossed mid-call", maxTokens: 150, messages: 3, wantCalls: 1, wantStop: 2, wantCost: 0.04,
			wantErr: `during node 2 "Work", which was stopped: it spent 200 tokens of 150 tokens (--max-tokens), 200 tokens of it by attempt 1 run (fake)`},
		{name: "max_turns", maxTurns: 2, messages: 3, wantCalls: 1 + types.DefaultRetries, wantStop: 3, wantCost: 0.24,
			wantErr: `node 2 "Work" failed after 4 attempts: the agent call failed: fake was stopped: it began turn 3, past max_turns 2`},
		{name: "max_turns not reached", maxTurns: 3, messages: 3, wantCalls: 2, wantCost: 0.12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := document.FromCSV(strings.NewReader(meterCSV))
			require.NoError(t, err)
			reg := agent.NewRegistry(map[string]agent.Definition{"fake": {Name: "fake", Binary: "fake", Output: agent.OutputText}})
			d := types.BuiltinDefaults()
			d.CLI, d.MaxTurns = "fake", tt.maxTurns
			c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
			require.Empty(t, c.Errors)
			calls, stopped := 0, 0
			// runner streams its messages to Observe as agent.Run does.
			runner := func(ctx context.Context, call agent.Call) (agent.Result, error) {
				calls++
				var u types.Usage
				for i := 1; i <= tt.messages; i++ {
					in, out, cost := int64(90*i), int64(10*i), 0.02*float64(i)
					u = types.Usage{InputTokens: &in, OutputTokens: &out, CostUSD: &cost}
					if err := call.Observe(agent.Activity{Kind: agent.ActivityUsage, Usage: u, Turns: i}); err != nil {
						stopped = i
						return agent.Result{ExitCode: -1, Usage: u}, &agent.AgentError{Name: "fake", ExitCode: -1, Reason: "was stopped: " + err.Error(), Stop: err}
					}
				}
				return agent.Result{Answer: `{"completed": true}`, Usage: u}, nil
			}
			sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: "2", Registry: reg, Runner: runner,
				Backoff: func(int) time.Duration { return 0 }, MaxCost: tt.maxCost, MaxTokens: tt.maxTokens})
			assert.Equal(t, tt.wantCalls, calls)
			assert.Equal(t, tt.wantStop, stopped)
			require.NotNil(t, sum.Usage.CostUSD)
			assert.InDelta(t, tt.wantCost, *sum.Usage.CostUSD, 1e-9, "a stopped call's usage is counted")
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			if be := (*BudgetError)(nil); errors.As(err, &be) {
				assert.Equal(t, StatusBudget, sum.Status)
				assert.Equal(t, types.ExitLimit, sum.ExitCode)
				assert.True(t, sum.Budget.Reached)
			}
		})
	}
}

// Past 80 % of a budget, a call's prompt leads with what is left; before
// that, it says nothing of the budget.
func TestBudgetLine(t *testing.T) {
	t.Parallel()
	doc, err := document.FromCSV(strings.NewReader(strings.ReplaceAll(meterCSV, "NoValidation", "")))
	require.NoError(t, err)
	reg := agent.NewRegistry(map[string]agent.Definition{"fake": {Name: "fake", Binary: "fake", Output: agent.OutputText}})
	d := types.BuiltinDefaults()
	d.CLI = "fake"
	c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
	require.Empty(t, c.Errors)
	var prompts []string
	runner := func(ctx context.Context, call agent.Call) (agent.Result, error) {
		prompts = append(prompts, call.Prompt)
		in, out := int64(250), int64(50)
		answer := `{"completed": true}`
		if call.Request.Purpose == agent.PurposeValidate {
			answer = `{"fully_completed": true}`
		}
		return agent.Result{Answer: answer, Usage: types.Usage{InputTokens: &in, OutputTokens: &out}}, nil
	}
	_, err = Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: "2", Registry: reg, Runner: runner,
		Backoff: func(int) time.Duration { return 0 }, MaxTokens: 1000})
	require.NoError(t, err)
	require.Len(t, prompts, 4) // spent before each: 0, 300, 600 (60 %), 900 (90 %)
	for _, p := range prompts[:3] {
		assert.NotContains(t, p, "Budget:")
	}
	assert.True(t, strings.HasPrefix(prompts[3], "Budget: this run has spent 900 tokens of the 1,000 tokens it may spend; 100 tokens is left for this step and every step after it."), prompts[3])
}
