//go:build unix

package agent_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
)

// TestRunStopsAfterFinalEvent: a CLI that prints its final event (or its
// whole envelope) and then never exits (opencode #44901, cursor #3588,
// copilot #286) is stopped Settle later, and the call ends as if it had
// exited: its answer read, no timeout, no failure for the signal.
func TestRunStopsAfterFinalEvent(t *testing.T) {
	t.Parallel()
	const settle = 300 * time.Millisecond
	tests := []struct {
		name       string
		cli, file  string
		timeout    time.Duration
		settle     time.Duration
		ignoreTerm bool
		termExit   string // FAKE_TERM_EXIT: the status it exits with on SIGTERM
		wantErr    string // in the AgentError's reason; "" for success
		wantStop   bool   // StoppedAfterAnswer
	}{
		{name: "opencode done", cli: "opencode", file: "ok.jsonl", wantStop: true},
		{name: "opencode step_finish stop, no done", cli: "opencode", file: "no_done.jsonl", wantStop: true},
		{name: "copilot result", cli: "copilot", file: "ok.jsonl", wantStop: true},
		{name: "codex turn.completed", cli: "codex", file: "ok.jsonl", wantStop: true},
		{name: "amp result", cli: "amp", file: "ok.jsonl", wantStop: true},
		{name: "claude envelope", cli: "claude", file: "ok.json", wantStop: true},
		{name: "cursor envelope", cli: "cursor", file: "ok.json", wantStop: true},
		{name: "gemini envelope", cli: "gemini", file: "ok.json", wantStop: true},
		{name: "qwen result", cli: "qwen", file: "ok.json", wantStop: true},
		{name: "an error envelope is still the CLI's failure", cli: "claude", file: "is_error.json",
			wantStop: true, wantErr: "reported an error: API Error: 529"},
		// Most CLIs catch SIGTERM and exit 0: the stop is still dtree's,
		// and the answer counts (not "context canceled").
		{name: "exits 0 on SIGTERM after its envelope", cli: "claude", file: "ok.json", termExit: "0", wantStop: true},
		{name: "exits 0 on SIGTERM after its final event", cli: "opencode", file: "ok.jsonl", termExit: "0", wantStop: true},
		{name: "exits 1 on SIGTERM after its final event", cli: "codex", file: "ok.jsonl", termExit: "1", wantStop: true},
		{name: "exits 0 on SIGTERM at a timeout before its final event", cli: "opencode", file: "truncated.jsonl",
			termExit: "0", timeout: 700 * time.Millisecond, wantErr: "timed out after 700ms"},
		{name: "SIGTERM ignored: SIGKILL after the grace", cli: "opencode", file: "ok.jsonl", ignoreTerm: true, wantStop: true},
		{name: "timeout while settling: the answer counts", cli: "copilot", file: "ok.jsonl",
			timeout: 700 * time.Millisecond, settle: time.Minute, wantStop: true},
		{name: "no final event: the timeout ends it", cli: "opencode", file: "truncated.jsonl",
			timeout: 700 * time.Millisecond, wantErr: "timed out after 700ms"},
		{name: "text has no final event", cli: "qodo", file: "ok.txt",
			timeout: 700 * time.Millisecond, wantErr: "timed out after 700ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def, err := agent.NewRegistry(nil).Lookup(tt.cli)
			require.NoError(t, err)
			def.Binary = fakeAgent
			file, err := filepath.Abs(filepath.Join("testdata", "envelopes", tt.cli, tt.file))
			require.NoError(t, err)
			e := env("FAKE_MODE=print", "FAKE_STDOUT_FILE="+file, "FAKE_SLEEP_AFTER=1m")
			if tt.ignoreTerm {
				e = append(e, "FAKE_IGNORE_TERM=1")
			}
			if tt.termExit != "" {
				e = append(e, "FAKE_TERM_EXIT="+tt.termExit)
			}
			timeout, s := tt.timeout, tt.settle
			if timeout == 0 {
				timeout = 30 * time.Second
			}
			if s == 0 {
				s = settle
			}
			var out bytes.Buffer
			start := time.Now()
			res, err := agent.Run(t.Context(), agent.Call{Def: def, Prompt: "q", Dir: t.TempDir(), Env: e,
				Output: &out, Timeout: timeout, Settle: s, Grace: 300 * time.Millisecond})
			elapsed := time.Since(start)
			assert.Less(t, elapsed, 10*time.Second, "the agent was left to sleep")
			assert.Equal(t, tt.wantStop, res.StoppedAfterAnswer)
			assert.Equal(t, -1, res.ExitCode, "dtree stopped it: its status on SIGTERM is not recorded")
			if tt.wantStop {
				assert.Contains(t, out.String(), "----- dtree: stopping "+tt.cli+", which has not exited since its final event -----\n")
				assert.False(t, res.TimedOut)
				if tt.timeout == 0 {
					assert.GreaterOrEqual(t, elapsed, settle, "stopped before the settle period was up")
				}
			} else {
				assert.NotContains(t, out.String(), "----- dtree: stopping")
			}
			if tt.wantErr != "" {
				var ae *agent.AgentError
				require.ErrorAs(t, err, &ae)
				assert.Contains(t, ae.Reason, tt.wantErr)
				assert.NotContains(t, err.Error(), "context")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, answer, res.Answer)
		})
	}
}
