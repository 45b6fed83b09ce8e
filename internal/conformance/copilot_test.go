package conformance

import (
	"strings"
	"testing"

	"github.com/dtree-dev/dtree/internal/mockllm"
)

// copilotCase is GitHub Copilot CLI (@github/copilot, native) with its
// own provider: COPILOT_PROVIDER_BASE_URL at the mock (Chat Completions),
// COPILOT_OFFLINE=true so that it needs no GitHub login.
func copilotCase() cliCase {
	return cliCase{
		name:   "copilot",
		binary: "copilot",
		api:    mockllm.Chat,
		setup: func(t *testing.T, home, url string) []string {
			return []string{
				"COPILOT_PROVIDER_BASE_URL=" + url + "/v1",
				"COPILOT_PROVIDER_API_KEY=conformance-key",
				"COPILOT_MODEL=mock-model",
				"COPILOT_OFFLINE=true",
			}
		},
		// With its own provider (BYOK) its JSON has no token counts at all.
		figures: func(mockllm.Usage) (in, out *int) { return nil, nil },
		// It puts a <current_datetime> line before the prompt.
		promptIn: func(part, prompt string) bool {
			return strings.HasPrefix(part, "<current_datetime>") && strings.HasSuffix(part, "</current_datetime>\n\n"+prompt)
		},
		// A 401 gets a message of its own; it retries a 429 and a 500
		// five times (~60 s and ~15 s) and then quotes the server.
		errors: map[int]string{
			401: "Authentication failed with provider at ",
			429: "Last error: 429 mock 429: scripted failure for dtree",
			500: "Last error: 500 mock 500: scripted failure for dtree",
		},
	}
}
