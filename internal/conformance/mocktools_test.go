package conformance

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/mockllm"
)

// shellTools are each CLI's shell tool as a mockllm rule must call it:
// its name in the request's tools and an input that runs a command
// (readme/dev.md, the mock model server).
var shellTools = map[string]mockllm.ToolCall{
	"claude":   {Name: "Bash", Input: map[string]any{"command": "echo conformance-tool-ran", "description": "Echo"}},
	"codex":    {Name: "exec_command", Input: map[string]any{"cmd": "echo conformance-tool-ran"}},
	"gemini":   {Name: "run_shell_command", Input: map[string]any{"command": "echo conformance-tool-ran", "description": "Echo"}},
	"opencode": {Name: "bash", Input: map[string]any{"command": "echo conformance-tool-ran", "description": "Echo"}},
	"copilot":  {Name: "bash", Input: map[string]any{"command": "echo conformance-tool-ran", "description": "Echo"}},
	"qwen":     {Name: "run_shell_command", Input: map[string]any{"command": "echo conformance-tool-ran", "description": "Echo"}},
}

// TestConformanceMockToolCalls: mockllm's tool calls are in the shape each
// real CLI reads — Anthropic tool_use, Responses function_call, Chat
// tool_calls, Gemini functionCall, as they stream them — so the CLI runs
// its shell tool and calls the model again, turn 2, with the command's
// output as the tool result; then the answer ends the call.
func TestConformanceMockToolCalls(t *testing.T) {
	if dtreeBin == "" {
		t.Skipf("%s is not set: `make conformance` installs the real CLIs and runs these tests", cliDirEnv)
	}
	only := os.Getenv("DTREE_CONFORMANCE_ONLY")
	for _, c := range cases() {
		tool, ok := shellTools[c.name]
		if !ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			if only != "" && !slices.Contains(strings.Split(only, ","), c.name) {
				t.Skipf("not in DTREE_CONFORMANCE_ONLY=%s", only)
			}
			e := newEnv(t, c)
			e.mock.SetRules(c.rules(
				mockllm.Rule{Result: "conformance-tool-ran", Reply: processReply("ran the shell tool")},
				mockllm.Rule{Turn: 1, Match: "conformance shell", Tools: []mockllm.ToolCall{tool}, Times: 1},
			))
			r := e.run("--retries", "0", e.write("chart.yaml", oneNode("Use the conformance shell.")))
			var calls, results []mockllm.Request
			for _, q := range answered(e.mock.Requests()) {
				t.Logf("mock: %s stream=%v turn=%d rule=%d asked=%v results=%q", q.API, q.Stream, q.Turn, q.Rule, q.Tools, q.Results)
				if len(q.Tools) > 0 {
					calls = append(calls, q)
				}
				if len(q.Results) > 0 {
					results = append(results, q)
				}
			}
			expect(t, c, "mock tool calls", func(a *assert.Assertions) {
				a.Equal(0, r.exit, "exit status")
				if a.Len(calls, 1, "one reply asked for the tool") {
					a.Equal(1, calls[0].Turn)
				}
				if a.Len(results, 1, "one request carried its result") {
					a.Equal(2, results[0].Turn)
					a.Contains(strings.Join(results[0].Results, "\n"), "conformance-tool-ran", "the CLI ran the command")
				}
			})
		})
	}
}
