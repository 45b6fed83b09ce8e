//go:build unix

package agent_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// TestCustomJSONEvents: a custom CLI with output json whose stdout is not
// one object but events — Qwen Code's -o json prints a JSON array of them,
// -o stream-json one a line — is read from the last event that has the
// answer path, as readme/clis.md's qwen definition relies on.
func TestCustomJSONEvents(t *testing.T) {
	t.Parallel()
	qwen := agent.Definition{Name: "qwen", Binary: fakeAgent, Args: []string{"{prompt}"}, PromptVia: agent.PromptArg,
		Output: agent.OutputJSON, AnswerPath: "result", ErrorPath: "is_error",
		// input_tokens already counts the cached ones: not summed again.
		InputTokensPath: "usage.input_tokens", OutputTokensPath: "usage.output_tokens", DurationPath: "duration_ms"}
	tests := []struct {
		name, file string
		def        func(d agent.Definition) agent.Definition
		wantErr    string
		permanent  string
	}{
		{name: "-o json: an array of events", file: "ok.json"},
		{name: "-o stream-json: an event a line", file: "ok.jsonl"},
		{name: "a 401 reported with exit 0", file: "error.json",
			wantErr: "reported an error: [API Error: 401 Incorrect API key provided.", permanent: agent.PermanentAuth},
		{name: "an answer path none of the events has", file: "ok.json",
			def:     func(d agent.Definition) agent.Definition { d.AnswerPath = "response"; return d },
			wantErr: `answer_path "response" not found in the output`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := qwen
			if tt.def != nil {
				def = tt.def(def)
			}
			file, err := filepath.Abs(filepath.Join("testdata", "envelopes", "qwen-custom", tt.file))
			require.NoError(t, err)
			res, err := agent.Run(t.Context(), agent.Call{Def: def, Prompt: "q", Dir: t.TempDir(),
				Env: env("FAKE_MODE=print", "FAKE_STDOUT_FILE="+file), Timeout: 20 * time.Second})
			if tt.wantErr != "" {
				var ae *agent.AgentError
				require.ErrorAs(t, err, &ae)
				assert.Contains(t, ae.Reason, tt.wantErr)
				assert.NotContains(t, ae.Reason, "empty answer")
				assert.Equal(t, tt.permanent, ae.Permanent)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, answer, res.Answer)
			assert.Equal(t, types.Usage{InputTokens: ptr[int64](120), OutputTokens: ptr[int64](30), DurationMS: ptr[int64](1234)}, res.Usage)
		})
	}
}
