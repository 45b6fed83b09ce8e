package conformance

import (
	"os"
	"path/filepath"
	"strings"
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

// claudeChecks are what only Claude Code needs: its tool calls in the
// stream dtree reads, dtree must cap its own retries, and say what to do
// when root makes it refuse to run.
func claudeChecks(t *testing.T, c cliCase) {
	t.Run("tool_calls", func(t *testing.T) { claudeToolCalls(t, c) })
	t.Run("timeout_in_tool", func(t *testing.T) { claudeTimeoutInTool(t, c) })
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

// claudeToolCalls: a model that calls Bash, Read, then Edit, then
// answers. Claude Code runs the tools (the model gets Bash's output and
// the file's text, the file changes), dtree reads the stream-json it
// prints as it works, so long.log holds the tool_use events, and the
// call's usage is the four replies' summed.
func claudeToolCalls(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	notes := e.write("notes.txt", "apple banana\n")
	e.mock.SetRules(c.rules(
		mockllm.Rule{Turn: 1, Match: "conformance tools", Usage: mockllm.Usage{Input: 1000, Output: 40, Cached: 200},
			Tools: []mockllm.ToolCall{{Name: "Bash", Input: map[string]any{"command": "echo conformance-tool-ran", "description": "Echo"}}}},
		mockllm.Rule{Turn: 2, Result: "conformance-tool-ran", Usage: mockllm.Usage{Input: 1100, Output: 30, Cached: 300},
			Tools: []mockllm.ToolCall{{Name: "Read", Input: map[string]any{"file_path": notes}}}},
		// Claude Code edits only a file it has read.
		mockllm.Rule{Turn: 3, Result: "apple banana", Usage: mockllm.Usage{Input: 1200, Output: 35, Cached: 400},
			Tools: []mockllm.ToolCall{{Name: "Edit", Input: map[string]any{"file_path": notes, "old_string": "apple", "new_string": "pear"}}}},
		mockllm.Rule{Turn: 4, ToolResult: ptr(true), Usage: mockllm.Usage{Input: 1300, Output: 50, Cached: 500},
			Reply: processReply("used three tools")},
	))
	r := e.run("--retries", "0", e.write("chart.yaml", oneNode("Use the conformance tools.")))
	long, _ := os.ReadFile(filepath.Join(e.logs, "latest", "long.log"))
	edited, _ := os.ReadFile(notes)
	var turns []int
	for _, q := range answered(e.mock.Requests()) {
		turns = append(turns, q.Turn)
	}
	expect(t, c, "tool calls", func(a *assert.Assertions) {
		a.Equal(0, r.exit, "exit status")
		a.Equal([]int{1, 2, 3, 4}, turns, "four model turns: Bash, Read, Edit, the answer")
		a.Equal("pear banana\n", string(edited), "claude ran the Edit")
		a.Contains(string(long), `"type":"tool_use"`, "long.log holds the stream's tool calls")
		a.Contains(string(long), `"name":"Bash"`)
		a.Contains(string(long), `"name":"Read"`)
		a.Contains(string(long), `"name":"Edit"`)
		a.Equal(1, strings.Count(string(long), `"type":"result"`), "one result event")
		if a.NotNil(r.summary.Usage.InputTokens) && a.NotNil(r.summary.Usage.OutputTokens) {
			a.Equal(4600, *r.summary.Usage.InputTokens, "the four replies' input, cache reads included")
			a.Equal(155, *r.summary.Usage.OutputTokens)
		}
	})
}

// claudeTimeoutInTool: a runaway model that keeps Claude Code in a Bash
// tool that sleeps; dtree's timeout ends the call. The tool's shell runs
// in a session of its own, yet nothing with the test's HOME may be left
// (the harness checks), and long.log keeps the tool calls printed before.
func claudeTimeoutInTool(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	e.mock.SetRules(c.rules(mockllm.Rule{Usage: mockllm.Usage{Input: 900, Output: 20},
		Tools: []mockllm.ToolCall{{Name: "Bash", Input: map[string]any{"command": "sleep 120", "description": "Wait"}}}}))
	r := e.run("--retries", "0", "--timeout", "15s", e.write("chart.yaml", oneNode("Wait in a tool (conformance timeout).")))
	long, _ := os.ReadFile(filepath.Join(e.logs, "latest", "long.log"))
	expect(t, c, "timeout in tool", func(a *assert.Assertions) {
		a.Equal(1, r.exit, "exit status")
		a.Contains(r.stderr, "timed out")
		a.Contains(string(long), `"command":"sleep 120"`, "long.log holds the tool call printed before the timeout")
		a.NotEmpty(answered(e.mock.Requests()))
	})
}

func ptr[T any](v T) *T { return &v }
