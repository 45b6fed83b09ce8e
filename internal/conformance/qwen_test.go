package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/mockllm"
)

// qwenCase is Qwen Code (@qwen-code/qwen-code, node) as dtree's built-in
// qwen. OPENAI_BASE_URL and friends point it at the mock (Chat
// Completions); ~/.qwen/settings.json turns its usage statistics and
// managed memory off.
func qwenCase() cliCase {
	return cliCase{
		name:   "qwen",
		binary: "qwen",
		api:    mockllm.Chat,
		setup:  qwenSetup,
		// A prompt read from stdin gets a blank line after it.
		promptIn: func(part, prompt string) bool { return part == prompt+"\n\n" },
		// It never gives up on a 429 (only a timeout ends it), so 429 is
		// not tried; it retries a 500 for ~90 s (model.generationConfig.
		// maxRetries: 0 in its settings did not shorten that). In -o json
		// a 401 or 500 is a result with is_error.
		errors: map[int]string{
			401: "mock 401: scripted failure for dtree",
			500: "mock 500: scripted failure for dtree",
		},
		// Its ~90 s of 500 retries took over 120 s on a loaded 2-core
		// machine (load 10): room for that, spent only when it is slow.
		errorTimeout: "300s",
	}
}

// qwenCustomCase is the same binary as a user would add a CLI dtree does
// not build in: a clis: entry in dtree.yaml with output: json
// (readme/settings.md#custom-clis). qwen -o json prints a JSON array of
// events, the last the result, which a custom json CLI must read.
func qwenCustomCase() cliCase {
	return cliCase{
		name:   "qwenjson",
		binary: "qwen",
		api:    mockllm.Chat,
		settings: `clis:
  qwenjson:
    binary: qwen
    args: ["-p", "{prompt}", "-o", "json", "--yolo", "--model={model}"]
    stdin_fallback: true
    fallback_args: ["-o", "json", "--yolo", "--model={model}"]
    output: json
    answer_path: result
    error_path: is_error
    input_tokens_path: usage.input_tokens
    output_tokens_path: usage.output_tokens
    key_vars: [OPENAI_API_KEY]
`,
		setup:    qwenSetup,
		promptIn: func(part, prompt string) bool { return part == prompt+"\n\n" },
		// No error checks: qwen -o json reports a 401 as a successful
		// result whose text is "[API Error: 401 …]" (is_error false), which
		// a generic json definition cannot tell from an answer; dtree then
		// fails the node on the reply, quoting it. The built-in qwen reads
		// that text as the error it is (the qwen case checks it).
	}
}

// qwenStreamCase is the same binary as a custom CLI of output: jsonl
// (readme/settings.md#json-lines): qwen -o stream-json prints one event a
// line, its assistant messages with their usage and tool_use blocks, its
// user messages with the tool results, and last the result, which holds
// the answer. The usage is the assistant messages' summed as they come
// (the result's is at another path), which must be what the server sent.
func qwenStreamCase() cliCase {
	return cliCase{
		name:   "qwenstream",
		binary: "qwen",
		api:    mockllm.Chat,
		settings: `clis:
  qwenstream:
    binary: qwen
    args: ["-o", "stream-json", "--yolo", "--chat-recording=false", "--model={model}", "{prompt}"]
    stdin_fallback: true
    fallback_args: ["-o", "stream-json", "--yolo", "--chat-recording=false", "--model={model}"]
    output: jsonl
    answer_path: result
    error_path: is_error
    input_tokens_path: message.usage.input_tokens
    output_tokens_path: message.usage.output_tokens
    duration_path: duration_ms
    tool_name_path: message.content.0.name
    tool_input_path: message.content.0.input
    tool_id_path: message.content.0.id
    tool_end_id_path: message.content.0.tool_use_id
    tool_error_path: message.content.0.is_error
    key_vars: [OPENAI_API_KEY]
`,
		setup:    qwenSetup,
		promptIn: func(part, prompt string) bool { return part == prompt+"\n\n" },
		// No error checks, as for qwenjson: an API error is a result
		// that is not is_error.
	}
}

func qwenSetup(t *testing.T, home, url string) []string {
	dir := filepath.Join(home, ".qwen")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	settings := `{"privacy": {"usageStatisticsEnabled": false}, "memory": {"enableManagedAutoMemory": false}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644))
	return []string{
		"OPENAI_BASE_URL=" + url + "/v1",
		"OPENAI_API_KEY=conformance-key",
		"OPENAI_MODEL=mock-model",
	}
}
