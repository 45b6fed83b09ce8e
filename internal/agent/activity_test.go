package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
)

// A stream-json agent that calls a tool, then hangs: what Observe hears,
// and a call Observe stops keeps the usage reported before the stop.
func TestObserveStopsCall(t *testing.T) {
	t.Parallel()
	stream := strings.Join([]string{
		`{"type":"system","subtype":"init"}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test ./...\nmore"}}],"usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":10}}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"FAIL"}]}}`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"gotenv.go","old_string":"a","new_string":"b"}}],"usage":{"input_tokens":300,"output_tokens":20}}}`,
	}, "\n") + "\n"
	def := agent.Definition{Name: "fake", Binary: fakeAgent, PromptVia: agent.PromptArg, Args: []string{"{prompt}"},
		Output: agent.OutputStreamJSON}
	var heard []agent.Activity
	stop := errors.New("over budget")
	c := agent.Call{Def: def, Prompt: "p", Env: env("FAKE_MODE=print", "FAKE_STDOUT="+stream, "FAKE_SLEEP_AFTER=30s"),
		Timeout: time.Minute, Grace: time.Second,
		Observe: func(a agent.Activity) error {
			heard = append(heard, a)
			if a.Kind == agent.ActivityTool && a.Tool == "Edit" {
				return stop
			}
			return nil
		}}
	start := time.Now()
	res, err := agent.Run(context.Background(), c)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 20*time.Second, "the call was stopped, not left to its sleep")
	assert.ErrorIs(t, err, stop)
	var ae *agent.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, ae.Error(), "fake was stopped: over budget")
	assert.Equal(t, int64(450), *res.Usage.InputTokens, "the usage reported before the stop is kept")
	assert.Equal(t, int64(30), *res.Usage.OutputTokens)

	var got []string
	for _, a := range heard {
		got = append(got, string(a.Kind)+" "+a.Tool+" "+a.Arg+" "+a.File)
	}
	assert.Equal(t, []string{
		"usage   ",
		"tool Bash go test ./... … ",
		"tool_end Bash  ",
		"usage   ",
		"tool Edit gotenv.go gotenv.go",
	}, got)
	assert.True(t, heard[2].Failed)
	assert.Equal(t, 2, heard[4].Turns)
	assert.Equal(t, int64(150), *heard[1].Usage.InputTokens)
}

func TestToolArg(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, input, arg, file string
	}{
		{"Bash", `{"command":"go test ./...","description":"run tests"}`, "go test ./...", ""},
		{"Read", `{"file_path":"/repo/go.mod"}`, "/repo/go.mod", ""},
		{"Write", `{"file_path":"a.go","content":"x"}`, "a.go", "a.go"},
		{"write_file", `{"file_path":"b.go","content":"x"}`, "b.go", "b.go"},
		{"shell", `{"command":["bash","-lc","ls"]}`, "bash -lc ls", ""},
		{"Grep", `{"pattern":"func main"}`, "func main", ""},
		{"edit_file", `{"path":"a.go","old_str":"x","new_str":"y"}`, "a.go", "a.go"}, // amp
		{"apply_patch", `{"path":"b.go"}`, "b.go", "b.go"},                           // codex's file_change
		{"Weird", `"just a string\nsecond"`, "just a string …", ""},
		{"Empty", `{}`, "", ""},
		{"Bad", `not json`, "", ""},
		{"Ctl", `{"command":"a\u001b[31mb"}`, "a [31mb", ""},
		{"Long", `{"command":"` + strings.Repeat("é", 500) + `"}`, strings.Repeat("é", agent.MaxToolArg-1) + "…", ""},
	}
	for _, tt := range tests {
		arg, file := agent.ToolArg(tt.tool, []byte(tt.input))
		assert.Equal(t, tt.arg, arg, tt.tool)
		assert.Equal(t, tt.file, file, tt.tool)
	}
}

// TestObserveHearsEachCLI: Run hands each built-in's stream, as its real
// CLI printed it (testdata/streams), to Observe as it arrives: the tool
// calls in order.
func TestObserveHearsEachCLI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cli   string
		tools []string
	}{
		{"gemini", []string{"run_shell_command", "write_file", "run_shell_command", "read_file"}},
		{"qwen", []string{"run_shell_command", "write_file", "read_file"}},
		{"codex", []string{"shell", "shell"}},
		{"opencode", []string{"bash", "write", "read"}},
		{"copilot", []string{"bash", "edit", "view"}},
		{"cursor", []string{"read", "shell", "write"}},
	}
	for _, tt := range tests {
		t.Run(tt.cli, func(t *testing.T) {
			t.Parallel()
			def, err := agent.NewRegistry(nil).Lookup(tt.cli)
			require.NoError(t, err)
			def.Binary = fakeAgent
			abs, err := filepath.Abs(filepath.Join("testdata", "streams", tt.cli, "tools.jsonl"))
			require.NoError(t, err)
			var tools []string
			var ends int
			_, err = agent.Run(t.Context(), agent.Call{Def: def, Prompt: "q", Dir: t.TempDir(), Timeout: 20 * time.Second,
				Env: env("FAKE_MODE=print", "FAKE_STDOUT_FILE="+abs),
				Observe: func(a agent.Activity) error {
					switch a.Kind {
					case agent.ActivityTool:
						tools = append(tools, a.Tool)
					case agent.ActivityToolEnd:
						ends++
					}
					return nil
				}})
			require.NoError(t, err)
			assert.Equal(t, tt.tools, tools)
			assert.Equal(t, len(tt.tools), ends, "each call ended")
		})
	}
}
