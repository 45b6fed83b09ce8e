package agent

import (
	"fmt"
	"os"
	"path/filepath"
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
		{cli: "gemini", file: "api_429.jsonl", heard: []string{"usage in=0 out=0 turns=0"},
			usage: types.Usage{InputTokens: pi(0), OutputTokens: pi(0)}, failed: "mock 429: scripted failure for dtree"},
		{cli: "gemini", file: "api_401.jsonl", heard: []string{"usage in=0 out=0 turns=0"},
			usage: types.Usage{InputTokens: pi(0), OutputTokens: pi(0)}, failed: "mock 401: scripted failure for dtree"},
		{cli: "qwen", file: "ok.jsonl", heard: []string{"usage in=1000 out=50 turns=1"},
			answer: `Hi. {"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": []}`,
			usage:  types.Usage{InputTokens: pi(1000), OutputTokens: pi(50), DurationMS: pi(143)}},
		{cli: "qwen", file: "api_401.jsonl", heard: []string{"usage in=0 out=0 turns=1"},
			answer: "[API Error: 401 mock 401: scripted failure for dtree]",
			usage:  types.Usage{InputTokens: pi(0), OutputTokens: pi(0), DurationMS: pi(130)},
			failed: "API Error: 401 mock 401: scripted failure for dtree"},
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
		t.Run(tt.cli+"/"+tt.file, func(t *testing.T) {
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
