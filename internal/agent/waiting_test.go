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

// TestRunStopsAWaitingCLI: amp without a login prints a login URL on
// stdout and waits for a code; dtree stops it at once, not at the node's
// timeout, and fails the call as one no retry can mend, with a hint.
func TestRunStopsAWaitingCLI(t *testing.T) {
	t.Parallel()
	okFile, err := filepath.Abs(filepath.Join("testdata", "envelopes", "amp", "ok.jsonl"))
	require.NoError(t, err)
	tests := []struct {
		name     string
		stdout   string
		file     string
		wantLine string // in the reason; "" for a call that is not stopped
	}{
		{name: "login URL", stdout: "Welcome to Amp!\nTo log in, visit https://ampcode.com/auth/cli-login?authToken=T0k3n\n",
			wantLine: "To log in, visit https://ampcode.com/auth/cli-login?authToken=T0k3n"},
		{name: "a code prompt without a newline", stdout: "\x1b[1mPaste the code from your browser:\x1b[0m ",
			wantLine: "Paste the code from your browser:"},
		{name: "advice to run amp login", stdout: "Not signed in. Run `amp login` first.\n", wantLine: "Not signed in. Run `amp login` first."},
		{name: "after its first JSON event it is at work", file: okFile,
			stdout: `{"type":"system","subtype":"init","session_id":"T-1"}` + "\nplease log in to see the trace\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def, err := agent.NewRegistry(nil).Lookup("amp")
			require.NoError(t, err)
			def.Binary = fakeAgent
			e := env("FAKE_MODE=print", "FAKE_STDOUT="+tt.stdout)
			if tt.file != "" {
				e = append(e, "FAKE_STDOUT_FILE="+tt.file)
			} else {
				e = append(e, "FAKE_SLEEP_AFTER=1m")
			}
			var out bytes.Buffer
			start := time.Now()
			_, err = agent.Run(t.Context(), agent.Call{Def: def, Prompt: "q", Dir: t.TempDir(), Env: e, Output: &out,
				Timeout: 30 * time.Second, Grace: 300 * time.Millisecond})
			assert.Less(t, time.Since(start), 10*time.Second, "left to wait for its timeout")
			if tt.wantLine == "" {
				require.NoError(t, err)
				assert.NotContains(t, out.String(), "waiting for a human")
				return
			}
			var ae *agent.AgentError
			require.ErrorAs(t, err, &ae)
			assert.False(t, ae.TimedOut)
			assert.Equal(t, "was stopped at once: it is waiting for a human: "+tt.wantLine, ae.Reason)
			assert.Equal(t, agent.PermanentLogin, ae.Permanent)
			assert.Contains(t, ae.Hint, "amp login")
			assert.Contains(t, ae.Hint, "AMP_API_KEY")
			assert.Contains(t, out.String(), "----- dtree: stopping amp, which is waiting for a human -----\n")
		})
	}
}
