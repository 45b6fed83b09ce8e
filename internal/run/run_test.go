package run

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
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

const loopCSV = `Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments,max_visits,retries
1,Page,,,,,,,,,,,P,,,
2,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,Start,,,
3,Process,Flowchart Shapes/Containers,1,,,,,,,,,Work,,3,1
4,Decision,Flowchart Shapes/Containers,1,,,,,,,,,Done?,,,1
5,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,End,,,
6,Line,,1,,,2,3,None,Arrow,,,,,,
7,Line,,1,,,3,4,None,Arrow,,,,,,
8,Line,,1,,,4,5,None,Arrow,,,Yes,,,
9,Line,,1,,,4,3,None,Arrow,,,No,,,`

// fakeChart reads a CSV chart whose nodes run on CLI "fake", and checks
// it has no errors.
func fakeChart(tb testing.TB, csv io.Reader) (*chart.Chart, *agent.Registry) {
	tb.Helper()
	doc, err := document.FromCSV(csv)
	require.NoError(tb, err)
	reg := agent.NewRegistry(map[string]agent.Definition{"fake": {Name: "fake", Binary: "fake", Output: agent.OutputText}})
	d := types.BuiltinDefaults()
	d.CLI = "fake"
	c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
	require.Empty(tb, c.Errors)
	return c, reg
}

// script answers agent calls: it gets the node, the purpose (run,
// decide, validate) and the prompt, and returns the reply or an error.
type script func(node, purpose, prompt string) (string, error)

func walk(t *testing.T, csv string, s script) (*Summary, []string, error) {
	t.Helper()
	c, reg := fakeChart(t, strings.NewReader(csv))
	var prompts []string
	runner := func(ctx context.Context, call agent.Call) (agent.Result, error) {
		node := call.Request.Node
		purpose := "run"
		switch {
		case strings.Contains(call.Prompt, `"fully_completed"`):
			purpose = "validate"
		case strings.Contains(call.Prompt, `"answer"`):
			purpose = "decide"
		}
		prompts = append(prompts, node+" "+purpose+": "+call.Prompt)
		reply, err := s(node, purpose, call.Prompt)
		return agent.Result{Answer: reply}, err
	}
	log, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root,
		Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log})
	return sum, prompts, err
}

const done = `{"completed": true}`
const valid = `{"fully_completed": true}`

func TestWalk(t *testing.T) {
	t.Parallel()
	decides := 0
	tests := []struct {
		name      string
		script    script
		wantPath  []string
		wantErr   string // "", "failed" or "limit"
		wantExit  int
		wantInAny string // some prompt contains this
	}{
		{
			name: "loop until yes",
			script: func(node, purpose, _ string) (string, error) {
				switch purpose {
				case "decide":
					decides++
					if decides < 3 {
						return `{"answer": "No"}`, nil
					}
					return `{"answer": "yes."}`, nil
				case "validate":
					return valid, nil
				}
				return done, nil
			},
			wantPath: []string{"2", "3", "4", "3", "4", "3", "4", "5"},
		},
		{
			name: "loop that never exits hits max_visits",
			script: func(node, purpose, _ string) (string, error) {
				switch purpose {
				case "decide":
					return `{"answer": "No"}`, nil
				case "validate":
					return valid, nil
				}
				return done, nil
			},
			wantErr:  "limit",
			wantExit: 4,
		},
		{
			name: "failed validation is retried with the critique, then gives up",
			script: func(node, purpose, _ string) (string, error) {
				if purpose == "validate" {
					return `{"fully_completed": false, "warnings": ["tests still red"]}`, nil
				}
				return done, nil
			},
			wantErr:   "failed",
			wantExit:  1,
			wantInAny: "## Previous attempt feedback (attempt 1)\n\nvalidation did not pass (fully_completed: false): tests still red",
		},
		{
			name: "an answer matching no branch lists the allowed ones",
			script: func(node, purpose, _ string) (string, error) {
				switch purpose {
				case "decide":
					return `{"answer": "Maybe"}`, nil
				case "validate":
					return valid, nil
				}
				return done, nil
			},
			wantErr:   "failed",
			wantExit:  1,
			wantInAny: `Answer with exactly one of: "Yes", "No".`,
		},
		{
			name: "a validation call that keeps failing fails the node without rerunning the work",
			script: func(node, purpose, _ string) (string, error) {
				if purpose == "validate" {
					return "", errors.New("overloaded")
				}
				return done, nil
			},
			wantErr:  "failed",
			wantExit: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum, prompts, err := walk(t, loopCSV, tt.script)
			assert.Equal(t, tt.wantExit, sum.ExitCode)
			var (
				failed *NodeFailedError
				limit  *LimitError
			)
			switch tt.wantErr {
			case "":
				require.NoError(t, err)
				assert.Equal(t, tt.wantPath, sum.Path)
			case "failed":
				require.ErrorAs(t, err, &failed)
			case "limit":
				require.ErrorAs(t, err, &limit)
				assert.Equal(t, "max_visits", limit.Limit)
				assert.Equal(t, "3", limit.Node)
			}
			for _, p := range prompts {
				assert.NotContains(t, p, "Start", "terminators never reach an agent")
			}
			if tt.wantInAny != "" {
				assert.Contains(t, strings.Join(prompts, "\n---\n"), tt.wantInAny)
			}
		})
	}
}

func TestWalkValidationCallsDoNotRerunWork(t *testing.T) {
	t.Parallel()
	runs, validations := 0, 0
	sum, _, err := walk(t, loopCSV, func(node, purpose, _ string) (string, error) {
		switch purpose {
		case "validate":
			validations++
			return "", errors.New("overloaded")
		case "run":
			runs++
		}
		return done, nil
	})
	require.Error(t, err)
	assert.Equal(t, 1, runs, "the work ran once")
	assert.Equal(t, validationCalls, validations, "validation was tried three times")
	// The node's end says why it failed, not the whole run error again.
	events, rerr := os.ReadFile(sum.Logs.Events)
	require.NoError(t, rerr)
	assert.Contains(t, string(events), `"event":"node_end","error":"validation with fake failed 3 times: overloaded"`)
	assert.NotContains(t, string(events), `"event":"node_end","error":"node `)
}

// A failure that no retry can mend (a bad key, an untrusted folder) fails
// the node at its first attempt, for the work call and for the validation
// call alike; any other agent failure is retried.
func TestPermanentFailureNotRetried(t *testing.T) {
	t.Parallel()
	badKey := &agent.AgentError{Name: "fake", ExitCode: 1, Reason: "exited with status 1: Invalid API key",
		Permanent: agent.PermanentAuth, Hint: "check the key"}
	tests := []struct {
		name      string
		failOn    string // the purpose whose call fails
		err       error
		wantCalls int
	}{
		{"work call, bad key", "run", badKey, 1},
		{"validation call, bad key", "validate", badKey, 2},
		{"work call, other failure", "run", &agent.AgentError{Name: "fake", ExitCode: 1, Reason: "exited with status 1"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			_, _, err := walk(t, loopCSV, func(node, purpose, prompt string) (string, error) {
				calls++
				if purpose == tt.failOn {
					return "", tt.err
				}
				if purpose == "validate" {
					return valid, nil
				}
				return done, nil
			})
			var failed *NodeFailedError
			require.ErrorAs(t, err, &failed)
			assert.Equal(t, "3", failed.Node)
			assert.Equal(t, tt.wantCalls, calls, "agent calls before the node failed")
			if kind, _ := agent.Permanent(tt.err); kind != "" {
				assert.Contains(t, failed.Last, "not retried: check the key")
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		base time.Duration
		n    int
		want time.Duration
	}{
		{time.Second, 1, time.Second},
		{time.Second, 2, 2 * time.Second},
		{time.Second, 3, 4 * time.Second},
		{time.Second, 5, 16 * time.Second},
		{time.Second, 6, 30 * time.Second},
		{time.Second, 60, 30 * time.Second},
		{time.Second, 0, time.Second},
		{100 * time.Millisecond, 3, 400 * time.Millisecond},
		{100 * time.Millisecond, 9, 3 * time.Second},
		{0, 4, 0},
	}
	for _, tt := range tests {
		if got := Backoff(tt.base)(tt.n); got != tt.want {
			t.Errorf("Backoff(%s)(%d) = %s, want %s", tt.base, tt.n, got, tt.want)
		}
	}
}
