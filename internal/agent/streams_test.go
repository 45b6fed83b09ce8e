package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/types"
)

// decodeStream reads stdout as Run does, in small pieces, and returns what
// the decoder reported as it went (one line an Activity) and what it read
// at the end.
func decodeStream(t *testing.T, def Definition, stdout string) ([]string, envelope, error) {
	t.Helper()
	f, err := formatOf(def)
	require.NoError(t, err)
	d := f.new(def)
	var heard []string
	rep, ok := d.(reporting)
	require.True(t, ok, "%s reports no Activity", def.Output)
	rep.setReport(func(a Activity) { heard = append(heard, activityLine(a)) })
	sp := f.split(d.line)
	for b := []byte(stdout); len(b) > 0; {
		n := min(len(b), 7) // pieces that split lines and objects anywhere
		sp.write(b[:n])
		b = b[n:]
	}
	sp.close()
	env, err := d.end(output{stdout: stdout, total: int64(len(stdout))})
	return heard, env, err
}

func activityLine(a Activity) string {
	switch a.Kind {
	case ActivityTool:
		s := fmt.Sprintf("tool %s %q", a.Tool, a.Arg)
		if a.File != "" {
			s += " writes " + a.File
		}
		return s
	case ActivityToolEnd:
		if a.Failed {
			return "end " + a.Tool + " failed"
		}
		return "end " + a.Tool + " ok"
	}
	return fmt.Sprintf("usage in=%s out=%s turns=%d", figure(a.Usage.InputTokens), figure(a.Usage.OutputTokens), a.Turns)
}

func figure(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// TestStreamActivity: each built-in's stream fixture
// (testdata/streams/CLI/, printed by the real CLI against mockllm unless
// its README says otherwise) yields the tool calls, their ends and the
// usage as they arrive, and the same envelope as at the end.
func TestStreamActivity(t *testing.T) {
	t.Parallel()
	custom := Definition{Name: "mine", Output: OutputJSONL, AnswerPath: "answer", DurationPath: "ms",
		InputTokensPath: "tokens.in", OutputTokensPath: "tokens.out",
		ToolNamePath: "call.name", ToolInputPath: "call.input", ToolIDPath: "call.id",
		ToolEndIDPath: "id", ToolErrorPath: "error"}
	// qwen's stream-json as a custom CLI would declare it
	// (internal/conformance's qwenstream case).
	qwenCustom := Definition{Name: "qwenstream", Output: OutputJSONL, AnswerPath: "result", ErrorPath: "is_error",
		InputTokensPath: "message.usage.input_tokens", OutputTokensPath: "message.usage.output_tokens", DurationPath: "duration_ms",
		ToolNamePath: "message.content.0.name", ToolInputPath: "message.content.0.input", ToolIDPath: "message.content.0.id",
		ToolEndIDPath: "message.content.0.tool_use_id", ToolErrorPath: "message.content.0.is_error"}
	tests := []struct {
		cli, file string
		def       *Definition // a custom definition instead of the built-in cli
		heard     []string
		answer    string
		usage     types.Usage
		failed    string // the envelope's failure message
	}{
		{cli: "gemini", file: "ok.jsonl", heard: []string{"usage in=- out=- turns=1", "usage in=1011 out=51 turns=1"},
			answer: `Hi. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": []}`,
			usage:  types.Usage{InputTokens: pi(1011), OutputTokens: pi(51), DurationMS: pi(73)}},
		{cli: "gemini", file: "tools.jsonl", heard: []string{
			"usage in=- out=- turns=1", `tool run_shell_command "cat notes.txt"`, "end run_shell_command ok",
			"usage in=- out=- turns=2", `tool write_file "notes.txt" writes notes.txt`, "end write_file ok",
			"usage in=- out=- turns=3", `tool run_shell_command "exit 3"`, "end run_shell_command ok",
			"usage in=- out=- turns=4", `tool read_file "missing.txt"`, "end read_file failed",
			"usage in=- out=- turns=5", "usage in=5861 out=111 turns=5"},
			answer: `Done. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": ["fixed the notes"]}`,
			usage:  types.Usage{InputTokens: pi(5861), OutputTokens: pi(111), DurationMS: pi(473)}},
		{cli: "gemini", file: "api_429.jsonl", heard: []string{"usage in=0 out=0 turns=0"},
			usage: types.Usage{InputTokens: pi(0), OutputTokens: pi(0)}, failed: "mock 429: scripted failure for dtree"},
		{cli: "gemini", file: "api_401.jsonl", heard: []string{"usage in=0 out=0 turns=0"},
			usage: types.Usage{InputTokens: pi(0), OutputTokens: pi(0)}, failed: "mock 401: scripted failure for dtree"},
		{cli: "qwen", file: "ok.jsonl", heard: []string{"usage in=1000 out=50 turns=1"},
			answer: `Hi. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": []}`,
			usage:  types.Usage{InputTokens: pi(1000), OutputTokens: pi(50), DurationMS: pi(143)}},
		{cli: "qwen", file: "tools.jsonl", heard: []string{
			"usage in=1000 out=20 turns=1", `tool run_shell_command "cat notes.txt"`, "end run_shell_command ok",
			"usage in=2100 out=50 turns=2", `tool write_file "/tmp/dtree-fixture/work/notes.txt" writes /tmp/dtree-fixture/work/notes.txt`, "end write_file failed",
			"usage in=3350 out=60 turns=3", `tool read_file "/tmp/dtree-fixture/work/missing.txt"`, "end read_file failed",
			"usage in=4650 out=100 turns=4"},
			answer: `Done. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": ["fixed the notes"]}`,
			usage:  types.Usage{InputTokens: pi(4650), OutputTokens: pi(100), DurationMS: pi(3536)}},
		{cli: "qwen", file: "tools.jsonl", def: &qwenCustom, heard: []string{
			`tool run_shell_command "cat notes.txt"`, "usage in=1000 out=20 turns=0", "end run_shell_command ok",
			`tool write_file "/tmp/dtree-fixture/work/notes.txt" writes /tmp/dtree-fixture/work/notes.txt`, "usage in=2100 out=50 turns=0", "end write_file failed",
			`tool read_file "/tmp/dtree-fixture/work/missing.txt"`, "usage in=3350 out=60 turns=0", "end read_file failed",
			"usage in=4650 out=100 turns=0", "usage in=4650 out=100 turns=0"},
			answer: `Done. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": ["fixed the notes"]}`,
			usage:  types.Usage{InputTokens: pi(4650), OutputTokens: pi(100), DurationMS: pi(3536)}},
		{cli: "qwen", file: "api_401.jsonl", heard: []string{"usage in=0 out=0 turns=1"},
			answer: "[API Error: 401 mock 401: scripted failure for dtree]",
			usage:  types.Usage{InputTokens: pi(0), OutputTokens: pi(0), DurationMS: pi(130)},
			failed: "API Error: 401 mock 401: scripted failure for dtree"},
		{cli: "codex", file: "tools.jsonl", heard: []string{
			"usage in=- out=- turns=1", `tool shell "/bin/bash -lc 'cat notes.txt'"`, "end shell ok",
			"usage in=- out=- turns=2", `tool shell "/bin/bash -lc 'echo fixed > notes.txt && exit 3'"`, "end shell failed",
			"usage in=- out=- turns=3", "usage in=3400 out=90 turns=3"},
			answer: `Done. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": ["fixed the notes"]}`,
			usage:  types.Usage{InputTokens: pi(3400), OutputTokens: pi(90)}},
		{cli: "codex", file: "file_change.jsonl", heard: []string{
			"usage in=- out=- turns=1", `tool apply_patch "pkg/sum.go" writes pkg/sum.go`, "end apply_patch ok",
			`tool apply_patch "pkg/new.go" writes pkg/new.go`, "end apply_patch ok",
			"usage in=- out=- turns=2", `tool web_search "go testing table"`, "end web_search ok",
			"usage in=- out=- turns=3", `tool docs.lookup "testing.T"`, "end docs.lookup failed",
			"usage in=- out=- turns=4", "usage in=500 out=20 turns=4"},
			answer: "done",
			usage:  types.Usage{InputTokens: pi(500), OutputTokens: pi(20)}},
		{cli: "opencode", file: "tools.jsonl", heard: []string{
			"usage in=- out=- turns=1", `tool bash "cat notes.txt"`, "end bash ok", "usage in=1000 out=20 turns=1",
			"usage in=1000 out=20 turns=2", `tool write "/tmp/dtree-fixture/work/notes.txt" writes /tmp/dtree-fixture/work/notes.txt`, "end write ok",
			"usage in=2100 out=50 turns=2",
			"usage in=2100 out=50 turns=3", `tool read "/tmp/dtree-fixture/work/missing.txt"`, "end read failed", "usage in=3350 out=60 turns=3",
			"usage in=3350 out=60 turns=4", "usage in=4650 out=100 turns=4"},
			answer: `Done. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": ["fixed the notes"]}`,
			usage:  types.Usage{InputTokens: pi(4650), OutputTokens: pi(100)}},
		{cli: "copilot", file: "tools.jsonl", heard: []string{
			"usage in=- out=- turns=1", `tool bash "cat notes.txt"`, "end bash ok",
			"usage in=- out=- turns=2", `tool edit "/tmp/dtree-fixture/work/notes.txt" writes /tmp/dtree-fixture/work/notes.txt`, "end edit ok",
			"usage in=- out=- turns=3", `tool view "/tmp/dtree-fixture/work/missing.txt"`, "end view failed",
			"usage in=- out=- turns=4"},
			answer: `Done. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": ["fixed the notes"]}`,
			usage:  types.Usage{DurationMS: pi(249)}},
		// Amp shares claude's stream-json reader; its fixture is written
		// from its documentation (amp cannot be pointed at a mock).
		{cli: "amp", file: "../../envelopes/amp/ok.jsonl", heard: []string{
			"usage in=2010 out=30 turns=1", `tool Bash "go test ./..."`, "end Bash ok",
			"usage in=4115 out=120 turns=2"},
			answer: `{"completed": true, "secs_taken": 12, "tokens_used": 0, "comments": ["fixed the failing test"]}`,
			usage:  types.Usage{InputTokens: pi(4115), OutputTokens: pi(120), DurationMS: pi(8123)}},
		{cli: "cursor", file: "tools.jsonl", heard: []string{
			"usage in=- out=- turns=1",
			`tool read "pkg/sum_test.go"`, "end read ok",
			`tool shell "go test ./pkg/"`, "end shell failed",
			"usage in=- out=- turns=2",
			`tool write "pkg/sum.go" writes pkg/sum.go`, "end write ok",
			"usage in=- out=- turns=3",
		},
			answer: `I'll read the test first.The sum is off by one; fixing it.{"completed": true, "secs_taken": 12, "tokens_used": 0, "comments": ["fixed the failing test"]}`,
			usage:  types.Usage{DurationMS: pi(5234)}},
		{cli: "custom", file: "tools.jsonl", def: &custom, heard: []string{
			`tool run "make test"`, "end run failed",
			"usage in=1200 out=40 turns=0",
			`tool write_file "fix.go" writes fix.go`, "end write_file ok",
			"usage in=2700 out=100 turns=0",
			"usage in=2700 out=100 turns=0",
		},
			answer: `{"completed": true, "secs_taken": 12, "tokens_used": 0, "comments": ["fixed the failing test"]}`,
			usage:  types.Usage{InputTokens: pi(2700), OutputTokens: pi(100), DurationMS: pi(3400)}},
	}
	for _, tt := range tests {
		name := tt.cli + "/" + tt.file
		if tt.def != nil {
			name += "/as " + tt.def.Name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			def := builtins[tt.cli]
			if tt.def != nil {
				def = *tt.def
			}
			b, err := os.ReadFile(filepath.Join("testdata", "streams", tt.cli, tt.file))
			require.NoError(t, err)
			heard, env, err := decodeStream(t, def, string(b))
			require.NoError(t, err)
			assert.Equal(t, tt.heard, heard, "what was heard as the stream arrived")
			assert.Equal(t, tt.answer, env.answer)
			assert.Equal(t, tt.usage, env.usage)
			assert.Equal(t, tt.failed != "", env.failed, "failed")
			assert.Equal(t, tt.failed, env.message)
		})
	}
}

func pi(v int64) *int64 { return &v }

// TestStreamBounded: a gemini stream of 64 MiB of assistant text keeps
// no more of it than the answer's bound, and still reads its result.
func TestStreamBounded(t *testing.T) {
	t.Parallel()
	d := &geminiDecoder{}
	sp := splitObjects(d.line)
	line := []byte(`{"type":"message","role":"assistant","content":"` + strings.Repeat("x", 1<<10) + `","delta":true}` + "\n")
	for range 64 << 10 {
		sp.write(line)
	}
	sp.write([]byte(`{"type":"result","status":"success","stats":{"input_tokens":5,"output_tokens":1,"duration_ms":9}}` + "\n"))
	sp.close()
	env, err := d.end(output{})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(env.answer), MaxStdoutTail)
	assert.Positive(t, len(env.answer))
	assert.Equal(t, pi(5), env.usage.InputTokens)
}

// TestGeminiFailedResult: gemini ends a stream the model broke off (its
// INVALID_STREAM errors) with an error event, then a result of status
// error without an error object: a failure, with the error event's words.
func TestGeminiFailedResult(t *testing.T) {
	t.Parallel()
	stream := `{"type":"init","session_id":"s","model":"m"}
{"type":"message","role":"assistant","content":"Half an","delta":true}
{"type":"error","severity":"error","message":"Model stream ended with an invalid chunk or missing finish reason."}
{"type":"result","status":"error","stats":{"total_tokens":12,"input_tokens":10,"output_tokens":2,"duration_ms":40}}
`
	_, env, err := decodeStream(t, builtins["gemini"], stream)
	require.NoError(t, err)
	assert.True(t, env.failed)
	assert.Equal(t, "Model stream ended with an invalid chunk or missing finish reason.", env.message)
}
