package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/mockllm"
)

// geminiCase is Gemini CLI (@google/gemini-cli, node):
// GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY point it at the mock, and
// ~/.gemini/settings.json picks the API-key auth (else headless exits 41),
// turns telemetry and updates off, and caps its retries (else a 429 or 500
// takes ~10 attempts, ~4 min).
func geminiCase() cliCase {
	return cliCase{
		name:   "gemini",
		binary: "gemini",
		api:    mockllm.Gemini,
		setup: func(t *testing.T, home, url string) []string {
			dir := filepath.Join(home, ".gemini")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			settings := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "telemetry": {"enabled": false},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "maxAttempts": 1}
}
`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644))
			return []string{
				"GOOGLE_GEMINI_BASE_URL=" + url,
				"GEMINI_API_KEY=conformance-key",
				// As a user who trusted the folder would; the "untrusted
				// folder" check removes it to see dtree set it.
				"GEMINI_CLI_TRUST_WORKSPACE=true",
			}
		},
		// Without --model, a model-router call precedes each answer: the
		// prompt again, with a response schema asking for a complexity
		// score. gemini counts its usage in the call's stats.
		extraRules: []mockllm.Rule{{API: mockllm.Gemini, Body: "complexity_score", Usage: mockllm.Usage{Input: 11, Output: 1},
			Reply: `{"complexity_reasoning": "a short task", "complexity_score": 10}`}},
		// It exits with the HTTP status mod 256 (401→145, 429→173,
		// 500→244) and its JSON error on stderr.
		errors: map[int]string{
			401: "mock 401: scripted failure for dtree",
			429: "mock 429: scripted failure for dtree",
			500: "mock 500: scripted failure for dtree",
		},
		more: geminiChecks,
	}
}

// geminiChecks: dtree's own environment must make the folder trusted.
func geminiChecks(t *testing.T, c cliCase) {
	t.Run("untrusted_folder", func(t *testing.T) {
		e := newEnv(t, c)
		e.without("GEMINI_CLI_TRUST_WORKSPACE")
		e.mock.SetRules(c.rules(mockllm.Rule{Match: "conformance", Reply: processReply("trusted")}))
		r := e.run("--retries", "0", e.write("chart.yaml", oneNode("Run in a new folder (conformance trust).")))
		expect(t, c, "untrusted folder", func(a *assert.Assertions) {
			a.Equal(0, r.exit, "gemini ran in a folder it had not seen")
		})
	})
}
