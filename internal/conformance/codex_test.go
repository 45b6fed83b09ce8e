package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/mockllm"
)

// codexCase is the OpenAI Codex CLI (@openai/codex, native): CODEX_HOME
// holds a config.toml whose model provider is the mock, over the Responses
// API.
func codexCase() cliCase {
	return cliCase{
		name:   "codex",
		binary: "codex",
		api:    mockllm.Responses,
		setup: func(t *testing.T, home, url string) []string {
			dir := filepath.Join(home, ".codex")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			// analytics and plugins off stop its lookups; the retry caps
			// keep a 401 from taking 6 requests and a 500 30 (25 s).
			config := `model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "` + url + `/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = 1
stream_max_retries = 1

[analytics]
enabled = false

[features]
plugins = false
`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644))
			return []string{"CODEX_HOME=" + dir, "OPENAI_API_KEY=conformance-key"}
		},
		// codex quotes a 401's message, but not a 429's, and replaces a
		// 500's with its own.
		errors: map[int]string{
			401: "unexpected status 401 Unauthorized: mock 401: scripted failure for dtree",
			429: "exceeded retry limit, last status: 429 Too Many Requests",
			500: "We’re currently experiencing high demand, which may cause temporary errors.",
		},
		noise: []string{"Reading additional input from stdin..."},
		more:  codexChecks,
	}
}

// codexChecks: a run leaves no session file behind (--ephemeral).
func codexChecks(t *testing.T, c cliCase) {
	t.Run("no_session_files", func(t *testing.T) {
		e := newEnv(t, c)
		e.mock.SetRules(c.rules(mockllm.Rule{Match: "conformance", Reply: processReply("done")}))
		r := e.run(e.write("chart.yaml", oneNode("Leave no trace (conformance sessions).")))
		require.Equal(t, 0, r.exit)
		var files []string
		filepath.WalkDir(filepath.Join(e.home, ".codex", "sessions"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		expect(t, c, "no session files", func(a *assert.Assertions) {
			a.Empty(files, "session files of codex")
		})
	})
}
