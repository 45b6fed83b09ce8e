//go:build unix

package agent_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
)

// heardLine is an Activity on one line: its kind, tool, argument, file,
// failure, turns and usage so far.
func heardLine(a agent.Activity) string {
	in, out := "-", "-"
	if a.Usage.InputTokens != nil {
		in = fmt.Sprint(*a.Usage.InputTokens)
	}
	if a.Usage.OutputTokens != nil {
		out = fmt.Sprint(*a.Usage.OutputTokens)
	}
	s := fmt.Sprintf("%s %s %q", a.Kind, a.Tool, a.Arg)
	if a.File != "" {
		s += " file=" + a.File
	}
	if a.Failed {
		s += " failed"
	}
	return s + fmt.Sprintf(" turns=%d in=%s out=%s", a.Turns, in, out)
}

// TestClaudeStreams runs the stream-json that real Claude Code printed
// against mockllm (testdata/streams/claude, its README says how) through
// the built-in claude: what Observe hears as the stream arrives — each
// tool call with its argument, each result and whether it failed, the
// turns and the usage growing — and the call's answer, usage and error.
func TestClaudeStreams(t *testing.T) {
	t.Parallel()
	const path = "/tmp/dtree-fixture/work/notes.txt"
	tools := []string{
		`usage  "" turns=1 in=1000 out=1`,
		`tool Bash "echo hi" turns=1 in=1000 out=1`,
		`tool_end Bash "" turns=1 in=1000 out=1`,
		`usage  "" turns=2 in=2100 out=2`,
		`tool Read "` + path + `" turns=2 in=2100 out=2`,
		`tool_end Read "" turns=2 in=2100 out=2`,
		`usage  "" turns=3 in=3300 out=3`,
		`tool Edit "` + path + `" file=` + path + ` turns=3 in=3300 out=3`,
		`tool_end Edit "" turns=3 in=3300 out=3`,
		`usage  "" turns=4 in=4600 out=4`,
		`tool Bash "cat /nonexistent/file" turns=4 in=4600 out=4`,
		`tool_end Bash "" failed turns=4 in=4600 out=4`,
		`usage  "" turns=5 in=6000 out=5`,
		// The result event: the whole call's usage, output included.
		`usage  "" turns=5 in=6000 out=175`,
	}
	api500 := []string{
		`usage  "" turns=1 in=1000 out=1`,
		`tool Bash "echo hi" turns=1 in=1000 out=1`,
		`tool_end Bash "" turns=1 in=1000 out=1`,
		// claude's own message saying the API failed (model
		// "<synthetic>") is no turn.
		`usage  "" turns=1 in=1000 out=40`,
	}
	killed := []string{
		`usage  "" turns=1 in=1000 out=1`,
		`tool Bash "echo started" turns=1 in=1000 out=1`,
		`tool_end Bash "" turns=1 in=1000 out=1`,
		`usage  "" turns=2 in=2100 out=2`,
		`tool Bash "sleep 20" turns=2 in=2100 out=2`,
	}
	var maxBudget []string
	for turn := 1; turn <= 4; turn++ {
		in := fmt.Sprintf("turns=%d in=%d out=%d", turn, turn*100000, turn)
		maxBudget = append(maxBudget, `usage  "" `+in, `tool Bash "echo hi" `+in)
		if turn < 4 {
			maxBudget = append(maxBudget, `tool_end Bash "" `+in)
		}
	}
	maxBudget = append(maxBudget, `usage  "" turns=4 in=400000 out=6000`)
	tests := []struct {
		file    string
		exit    int
		heard   []string
		answer  string // the answer's start; "" for none
		in, out int64
		wantErr string
	}{
		{file: "tools.jsonl", heard: tools, in: 6000, out: 175,
			answer: `Done. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": []}`},
		{file: "tools-2.1.332.jsonl", heard: tools, in: 6000, out: 175,
			answer: `Done. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": []}`},
		{file: "api_500.jsonl", exit: 1, heard: api500, in: 1000, out: 40, answer: "API Error: 500 mock 500",
			wantErr: "claude exited with status 1: API Error: 500 mock 500: scripted failure for dtree. This is a server-side issue"},
		{file: "api_500-2.1.332.jsonl", exit: 1, heard: api500, in: 1000, out: 40, answer: "API Error: 500 mock 500",
			wantErr: "claude exited with status 1: API Error: 500 mock 500: scripted failure for dtree. This is a server-side issue"},
		// SIGKILLed while its Bash tool ran: the stream stops after the
		// call, with no result; the usage reported until then is kept.
		{file: "killed.jsonl", exit: 137, heard: killed, in: 2100, out: 2,
			wantErr: "claude exited with status 137"},
		{file: "killed-2.1.332.jsonl", exit: 137, heard: killed, in: 2100, out: 2,
			wantErr: "claude exited with status 137"},
		// --max-budget-usd 1 against a runaway mock ($0.33 a reply): claude
		// stops itself after the reply that crossed it, and its result's
		// usage leaves that reply out (300,000 input tokens): the 400,000
		// its messages reported are kept.
		{file: "max_budget-2.1.332.jsonl", exit: 1, heard: maxBudget, in: 400000, out: 6000,
			wantErr: "claude exited with status 1: Reached maximum budget ($1)"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			abs, err := filepath.Abs(filepath.Join("testdata", "streams", "claude", tt.file))
			require.NoError(t, err)
			var heard []string
			res, err := agent.Run(t.Context(), agent.Call{Def: claude(t), Prompt: "Check the host", Dir: t.TempDir(),
				Env:     env("FAKE_MODE=print", "FAKE_STDOUT_FILE="+abs, fmt.Sprintf("FAKE_EXIT=%d", tt.exit)),
				Timeout: 20 * time.Second,
				Observe: func(a agent.Activity) error { heard = append(heard, heardLine(a)); return nil }})
			assert.Equal(t, tt.heard, heard)
			assert.True(t, strings.HasPrefix(res.Answer, tt.answer), "answer %q starts with %q", res.Answer, tt.answer)
			if tt.answer == "" {
				assert.Empty(t, res.Answer)
			}
			require.NotNil(t, res.Usage.InputTokens)
			assert.Equal(t, tt.in, *res.Usage.InputTokens)
			assert.Equal(t, tt.out, *res.Usage.OutputTokens)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.NotNil(t, res.Usage.CostUSD, "the result's total_cost_usd")
				assert.NotNil(t, res.Usage.DurationMS, "the result's duration_ms")
				return
			}
			var ae *agent.AgentError
			require.ErrorAs(t, err, &ae)
			assert.Contains(t, ae.Error(), tt.wantErr)
		})
	}
}
