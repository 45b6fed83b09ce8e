package run

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// Node 2 runs on fake with its own model and is validated by other; node 3
// names no model.
const usageCSV = `Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments,model,validate_cli
1,Page,,,,,,,,,,,P,,,
2,Process,Flowchart Shapes/Containers,1,,,,,,,,,Work,,opus,other
3,Process,Flowchart Shapes/Containers,1,,,,,,,NoValidation,,More,,,
4,Line,,1,,,2,3,None,Arrow,,,,,,`

// Every call is counted into its node's visit and the run: figures the CLI
// reported are summed, those it did not are counted as unreported, and
// dtree's wall time is summed for all. The node's model goes to calls of
// its own CLI; other calls get the run's model.
func TestUsageAndModel(t *testing.T) {
	t.Parallel()
	doc, err := document.FromCSV(strings.NewReader(usageCSV))
	require.NoError(t, err)
	reg := agent.NewRegistry(map[string]agent.Definition{
		"fake":  {Name: "fake", Binary: "fake", Output: agent.OutputText},
		"other": {Name: "other", Binary: "other", Output: agent.OutputText},
	})
	d := types.BuiltinDefaults()
	d.CLI = "fake"
	c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
	require.Empty(t, c.Errors)

	var mu sync.Mutex
	models := map[string]string{} // "node cli" -> model
	runner := func(ctx context.Context, call agent.Call) (agent.Result, error) {
		node := call.Request.Node
		mu.Lock()
		models[node+" "+call.Def.Name] = call.Model
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		if call.Def.Name == "other" { // reports nothing
			return agent.Result{Answer: `{"fully_completed": true}`}, nil
		}
		in, out, cost := int64(100), int64(7), 0.0042
		return agent.Result{Answer: `{"completed": true}`,
			Usage: types.Usage{InputTokens: &in, OutputTokens: &out, CostUSD: &cost}}, nil
	}
	log, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: "2", Model: "flag-model",
		Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log})
	require.NoError(t, err)

	assert.Equal(t, map[string]string{"2 fake": "opus", "2 other": "flag-model", "3 fake": "flag-model"}, models)

	require.Len(t, sum.Nodes, 2)
	n2, n3 := sum.Nodes[0].Usage, sum.Nodes[1].Usage
	assert.Equal(t, 2, n2.Calls)
	assert.Equal(t, int64(100), *n2.InputTokens)
	assert.Equal(t, int64(7), *n2.OutputTokens)
	assert.InDelta(t, 0.0042, *n2.CostUSD, 1e-12)
	assert.Nil(t, n2.DurationMS, "no call reported a duration")
	assert.Equal(t, types.UsageCounts{InputTokens: 1, OutputTokens: 1, CostUSD: 1, DurationMS: 2}, n2.Unreported)
	assert.GreaterOrEqual(t, n2.WallMS, int64(4))
	assert.Equal(t, 1, n3.Calls)
	assert.Equal(t, types.UsageCounts{DurationMS: 1}, n3.Unreported)

	u := sum.Usage
	assert.Equal(t, 3, u.Calls)
	assert.Equal(t, int64(200), *u.InputTokens)
	assert.Equal(t, 0.0084, *u.CostUSD)
	assert.Equal(t, types.UsageCounts{InputTokens: 1, OutputTokens: 1, CostUSD: 1, DurationMS: 3}, u.Unreported)
	assert.Equal(t, n2.WallMS+n3.WallMS, u.WallMS)
	var attemptsMS int64
	for _, n := range sum.Nodes {
		for _, a := range n.Attempts {
			attemptsMS += a.DurationMS
		}
	}
	assert.Equal(t, attemptsMS, u.WallMS, "the run's wall time is its calls'")
}
