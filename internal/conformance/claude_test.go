package conformance

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/mockllm"
)

// claudeCase is Claude Code (@anthropic-ai/claude-code, a native binary):
// ANTHROPIC_BASE_URL and a key point it at the mock, which it calls with
// HEAD / and then streamed POST /v1/messages?beta=true.
func claudeCase() cliCase {
	return cliCase{
		name:   "claude",
		binary: "claude",
		api:    mockllm.Anthropic,
		setup: func(t *testing.T, home, url string) []string {
			vars := []string{
				"ANTHROPIC_BASE_URL=" + url,
				"ANTHROPIC_API_KEY=conformance-key",
				// Alone stops its calls home: telemetry, updates, titles.
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
				// It retries API errors 10 times (~3 min) by itself.
				"CLAUDE_CODE_MAX_RETRIES=1",
			}
			if os.Geteuid() == 0 {
				// As root it refuses --dangerously-skip-permissions
				// without this.
				vars = append(vars, "IS_SANDBOX=1")
			}
			return vars
		},
		// API errors exit 1 with an is_error envelope whose result quotes
		// the server's message.
		errors: map[int]string{
			401: "Failed to authenticate. API Error: 401 mock 401: scripted failure for dtree",
			429: "API Error: Request rejected (429) · mock 429: scripted failure for dtree",
			500: "API Error: 500 mock 500: scripted failure for dtree",
			529: "API Error: 529 mock 529: scripted failure for dtree",
		},
		costReported: true,
		more:         claudeChecks,
	}
}

// claudeChecks are what only Claude Code needs: dtree must cap its own
// retries, and say what to do when root makes it refuse to run.
func claudeChecks(t *testing.T, c cliCase) {
	t.Run("retries_uncapped", func(t *testing.T) {
		e := newEnv(t, c)
		e.without("CLAUDE_CODE_MAX_RETRIES")
		e.mock.SetRules(c.rules(mockllm.Rule{Status: 529, Message: "mock 529: overloaded"}))
		r := e.run("--retries", "0", "--timeout", "30s", e.write("chart.yaml", oneNode("Overloaded (conformance retries).")))
		expect(t, c, "retries uncapped", func(a *assert.Assertions) {
			a.Equal(1, r.exit)
			a.Contains(r.stderr, "API Error: 529 mock 529: overloaded", "claude gave up and said why before dtree's 30s timeout")
			a.LessOrEqual(len(answeredErrors(e.mock.Requests(), 529)), 3, "claude's own retries are capped")
		})
	})
	if os.Geteuid() != 0 {
		return
	}
	t.Run("root_without_IS_SANDBOX", func(t *testing.T) {
		e := newEnv(t, c)
		e.without("IS_SANDBOX")
		e.mock.SetRules(c.rules(mockllm.Rule{Match: "conformance", Reply: processReply("ran as root")}))
		r := e.run("--retries", "0", e.write("chart.yaml", oneNode("Run as root (conformance root).")))
		expect(t, c, "root without IS_SANDBOX", func(a *assert.Assertions) {
			// claude would refuse every call: dtree stops before the first.
			a.Equal(2, r.exit)
			a.Contains(r.stderr, "dtree: hint:", "a failure as root says what to do")
			a.Contains(r.stderr, "IS_SANDBOX", "a failure as root names the variable")
			a.Empty(e.mock.Requests(), "no call reached the model")
		})
	})
}
