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

// gateYAML is a gate between two agent steps, in a loop: rejected goes
// back to the work.
const gateYAML = `title: Gate
nodes:
  - id: s
    kind: start
    next: work
  - id: work
    text: Do the work
    next: gate
  - id: gate
    kind: approval
    text: Ship it?
    branches:
      approved: ship
      rejected: work
  - id: ship
    text: Ship it
    next: e
  - id: e
    kind: end
`

// TestApprovalGate: with no answer the run stops at the gate, waiting
// (exit 5), having called no agent for it; an answer given once, to every
// gate, or from answers routes along its branch, and the reason goes to
// the next agent's prompt.
func TestApprovalGate(t *testing.T) {
	t.Parallel()
	replayed := func(answers ...string) func(string, int) (string, error) {
		i := 0
		return func(string, int) (string, error) {
			if i == len(answers) {
				return "", errors.New("replay: no reply left")
			}
			i++
			return answers[i-1], nil
		}
	}
	asked := func(answers ...string) func(context.Context, Gate) (string, string, error) {
		i := 0
		return func(context.Context, Gate) (string, string, error) {
			i++
			return answers[i-1], "said at the terminal", nil
		}
	}
	tests := []struct {
		name     string
		approval Approval
		status   string
		exit     int
		path     string
		prompt   string // in the prompt of the last agent call
	}{
		{"no answer: it waits", Approval{}, StatusWaiting, types.ExitWaiting, "s work gate", ""},
		{"approved", Approval{Answer: Approve}, StatusSucceeded, types.ExitOK, "s work gate ship e", ""},
		{"rejected with a reason, then it waits again", Approval{Answer: Reject, Reason: "no tests"}, StatusWaiting, types.ExitWaiting,
			"s work gate work gate", "Answer: rejected\nReasons:\n- no tests"},
		{"rejected, then every gate approved", Approval{Answer: Reject, Reason: "no tests", All: Approve}, StatusSucceeded, types.ExitOK,
			"s work gate work gate ship e", "Answer: approved"},
		{"answers: a label, then a synonym", Approval{Answers: replayed("rejected", "YES")}, StatusSucceeded, types.ExitOK,
			"s work gate work gate ship e", "Answer: approved"},
		// A replay is never resumed: waiting would be a dead end.
		{"answers run out: the gate fails", Approval{Answers: replayed("no")}, StatusFailed, types.ExitFailed, "s work gate work gate", ""},
		{"an answer neither approved nor rejected: the gate fails", Approval{Answers: replayed("maybe")}, StatusFailed, types.ExitFailed, "s work gate", ""},
		{"answers run out at a terminal: it asks", Approval{Answers: replayed("no"), Ask: asked(Approve)}, StatusSucceeded, types.ExitOK, "s work gate work gate ship e", ""},
		{"asked at the terminal: rejected, then approved", Approval{Ask: asked(Reject, Approve)}, StatusSucceeded, types.ExitOK,
			"s work gate work gate ship e", "Answer: rejected\nReasons:\n- said at the terminal"},
		{"the terminal closed at the prompt: it waits", Approval{Ask: asked("")}, StatusWaiting, types.ExitWaiting, "s work gate", ""},
		{"an answer given to resume comes before the terminal", Approval{Answer: Approve, Ask: asked("")}, StatusSucceeded, types.ExitOK, "s work gate ship e", ""},
		{"a reason of a megabyte: its beginning reaches the prompt, within the prompt's bound", Approval{Answer: Reject, Reason: "the start " + strings.Repeat("x", 1<<20)},
			StatusWaiting, types.ExitWaiting, "s work gate work gate", "Reasons:\n- the start xxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := document.FromYAML(strings.NewReader(gateYAML))
			require.NoError(t, err)
			reg := agent.NewRegistry(map[string]agent.Definition{"fake": {Name: "fake", Binary: "fake", Output: agent.OutputText}})
			d := types.BuiltinDefaults()
			d.CLI = "fake"
			c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
			require.Empty(t, c.Errors)
			var prompts []string
			runner := func(_ context.Context, call agent.Call) (agent.Result, error) {
				assert.NotEqual(t, "gate", call.Request.Node, "no agent is called for a gate")
				prompts = append(prompts, call.Prompt)
				if strings.Contains(call.Prompt, `"fully_completed"`) {
					return agent.Result{Answer: valid}, nil
				}
				return agent.Result{Answer: done}, nil
			}
			sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root,
				Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Approval: tt.approval})
			assert.Equal(t, tt.status, sum.Status)
			assert.Equal(t, tt.exit, sum.ExitCode)
			assert.Equal(t, tt.path, strings.Join(sum.Path, " "))
			var waiting *WaitingError
			var failed *NodeFailedError
			switch tt.status {
			case StatusWaiting:
				require.True(t, errors.As(err, &waiting), "%v", err)
				assert.Equal(t, "gate", waiting.Node)
				assert.Contains(t, waiting.Hint(), "--reject --reason TEXT")
			case StatusFailed:
				require.True(t, errors.As(err, &failed), "%v", err)
				assert.Equal(t, "gate", failed.Node)
			default:
				require.NoError(t, err)
			}
			for _, n := range sum.Nodes { // what the summary and the logs keep of a reason is bounded
				if r, ok := n.Response.(types.DecisionResponse); ok && n.ID == "gate" {
					for _, why := range r.Reasons {
						assert.LessOrEqual(t, len(why), maxOutput)
					}
				}
			}
			if tt.prompt != "" {
				require.NotEmpty(t, prompts)
				last := prompts[len(prompts)-1]
				assert.Contains(t, last, tt.prompt, "%s", types.TailBytes(last, 600))
				assert.Less(t, len(prompts[len(prompts)-1]), 32<<10, "the run so far is bounded")
			}
		})
	}
}

// TestApprovalAsk: what a gate on a terminal is shown (the run so far, no
// timeout unless the node sets one), and its answer logged as the
// terminal's.
func TestApprovalAsk(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, meta string
		timeout    time.Duration
	}{
		{"no timeout of its own: none, whatever the default", "", 0},
		{"its own timeout", "    metadata: {Timeout: 90s}\n", 90 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			y := strings.Replace(gateYAML, "    text: Ship it?\n", "    text: Ship it?\n"+tt.meta, 1)
			doc, err := document.FromYAML(strings.NewReader(y))
			require.NoError(t, err)
			reg := agent.NewRegistry(map[string]agent.Definition{"fake": {Name: "fake", Binary: "fake", Output: agent.OutputText}})
			d := types.BuiltinDefaults()
			d.CLI = "fake"
			c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
			require.Empty(t, c.Errors)
			runner := func(_ context.Context, call agent.Call) (agent.Result, error) {
				if strings.Contains(call.Prompt, `"fully_completed"`) {
					return agent.Result{Answer: valid}, nil
				}
				return agent.Result{Answer: done}, nil
			}
			var got []Gate
			ask := func(_ context.Context, g Gate) (string, string, error) {
				got = append(got, g)
				return Approve, "", nil
			}
			sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root,
				Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Approval: Approval{Ask: ask}})
			require.NoError(t, err)
			assert.Equal(t, "s work gate ship e", strings.Join(sum.Path, " "))
			require.Len(t, got, 1)
			assert.Equal(t, "gate", got[0].Node)
			assert.Equal(t, "Ship it?", got[0].Text)
			assert.Equal(t, tt.timeout, got[0].Timeout)
			assert.Equal(t, []string{"work Do the work: succeeded"}, got[0].SoFar)
			assert.Nil(t, got[0].Change, "no checkpoints: no change to show")
		})
	}
}
