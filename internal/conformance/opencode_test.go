package conformance

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/mockllm"
)

// opencodeCase is opencode (opencode-ai, native): OPENCODE_CONFIG names a
// config whose default model is the mock, through the
// @ai-sdk/openai-compatible provider (Chat Completions). At start-up it
// installs @opencode-ai/plugin from npm into its config directory (no
// switch found), so it needs the npm registry.
func opencodeCase() cliCase {
	return cliCase{
		name:   "opencode",
		binary: "opencode",
		api:    mockllm.Chat,
		setup: func(t *testing.T, home, url string) []string {
			dir := filepath.Join(home, "opencode-config")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			config := `{
  "$schema": "https://opencode.ai/config.json",
  "provider": {
    "mock": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Mock",
      "options": {"baseURL": "` + url + `/v1", "apiKey": "conformance-key"},
      "models": {"mock-model": {"name": "Mock model"}}
    }
  },
  "model": "mock/mock-model",
  "small_model": "mock/mock-model",
  "autoupdate": false,
  "share": "disabled"
}
`
			path := filepath.Join(dir, "opencode.json")
			require.NoError(t, os.WriteFile(path, []byte(config), 0o644))
			return []string{
				"OPENCODE_CONFIG=" + path,
				"OPENCODE_DISABLE_MODELS_FETCH=1",
				"OPENCODE_DISABLE_AUTOUPDATE=1",
			}
		},
		// Each call asks for a title first, with the prompt as its last
		// user message; the title's usage is not in the run's events.
		extraRules: []mockllm.Rule{{API: mockllm.Chat, Body: "You are a title generator", Reply: "Conformance run"}},
		// It retries 429 and 500 for ~70 s before it gives up; the timeout
		// leaves room for that.
		errors: map[int]string{
			401: "mock 401: scripted failure for dtree",
			429: "mock 429: scripted failure for dtree",
			500: "mock 500: scripted failure for dtree",
		},
		errorTimeout: "150s",
		// It installs a plugin from npm into its fresh config directory
		// before its first model request: 15 s and more.
		hangTimeout: time.Minute,
		more:        opencodeChecks,
	}
}

// opencodeChecks: a model without a price has an unknown cost, not 0.
func opencodeChecks(t *testing.T, c cliCase) {
	t.Run("unpriced_cost", func(t *testing.T) {
		e := newEnv(t, c)
		e.mock.SetRules(c.rules(mockllm.Rule{Match: "conformance", Reply: processReply("done"), Usage: mockllm.Usage{Input: 100, Output: 10}}))
		r := e.run(e.write("chart.yaml", oneNode("Cost nothing known (conformance cost).")))
		require.Equal(t, 0, r.exit)
		expect(t, c, "unpriced cost", func(a *assert.Assertions) {
			a.Nil(r.summary.Usage.CostUSD, "the cost of an unpriced model is unknown")
		})
	})
}
