//go:build unix

package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// fakeAgent is the test agent (internal/testagent/fakeagent) in its
// FAKE_MODE modes, built once by TestMain.
var fakeAgent string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dtree-fakeagent-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeAgent = filepath.Join(dir, "fakeagent")
	build := exec.Command("go", "build", "-o", fakeAgent, "github.com/dtree-dev/dtree/internal/testagent/fakeagent")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build fakeagent:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// report is what the fake agent prints in echo mode.
type report struct {
	Args  []string          `json:"args"`
	Stdin string            `json:"stdin"`
	Env   []string          `json:"env"`
	Dir   string            `json:"dir"`
	Files map[string]string `json:"files"`
}

func fakeDef(via agent.PromptVia, args ...string) agent.Definition {
	return agent.Definition{Name: "fake", Binary: fakeAgent, Args: args, PromptVia: via,
		Output: agent.OutputText, InstallHint: "build the fake agent"}
}

// env is a base environment with PATH and the given entries.
func env(kv ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH")}, kv...)
}

func decodeReport(t *testing.T, res agent.Result) report {
	t.Helper()
	var r report
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &r), "stdout: %.500s", res.Stdout)
	return r
}

// hostile is a prompt a shell would mangle or act on.
const hostile = "do it: $(touch X) `touch Y` $HOME ${PATH} 'single' \"double\" \\ ; | & > Z < *\n" +
	"second line\twith tab\r\nünïcödé 日本語 🚀 {model} {prompt}\n"

func TestRunPromptArrivesVerbatim(t *testing.T) {
	t.Parallel()
	long := strings.Repeat(hostile, 300<<10/len(hostile)+1) // > 300 KiB
	atLimit := strings.Repeat("p", agent.MaxArgPrompt)
	tests := []struct {
		name      string
		def       agent.Definition
		prompt    string
		wantArgs  func(prompt, file string) []string
		wantStdin bool
		wantFile  bool
		inWorkdir bool // the prompt file is in the working directory during the call
	}{
		{name: "argv element", def: fakeDef(agent.PromptArg, "-p", "{prompt}"), prompt: hostile,
			wantArgs: func(p, _ string) []string { return []string{"-p", p} }},
		{name: "inside an argv element", def: fakeDef(agent.PromptArg, "--prompt={prompt}"), prompt: hostile,
			wantArgs: func(p, _ string) []string { return []string{"--prompt=" + p} }},
		{name: "argv at the limit", def: fakeDef(agent.PromptArg, "{prompt}"), prompt: atLimit,
			wantArgs: func(p, _ string) []string { return []string{p} }},
		{name: "stdin", def: fakeDef(agent.PromptStdin, "-p"), prompt: hostile, wantStdin: true,
			wantArgs: func(string, string) []string { return []string{"-p"} }},
		{name: "file", def: fakeDef(agent.PromptFile, "--file", "{prompt_file}"), prompt: hostile, wantFile: true,
			wantArgs: func(_, f string) []string { return []string{"--file", f} }},
		{name: "long argv prompt goes on stdin with fallback args",
			def: func() agent.Definition {
				d := fakeDef(agent.PromptArg, "-p", "{prompt}", "--model={model}")
				d.StdinFallback, d.FallbackArgs = true, []string{"-p", "--model={model}"}
				return d
			}(),
			prompt: long, wantStdin: true, wantArgs: func(string, string) []string { return []string{"-p"} }},
		{name: "long argv prompt goes on stdin without fallback args",
			def: func() agent.Definition {
				d := fakeDef(agent.PromptArg, "-x", "{prompt}")
				d.StdinFallback = true
				return d
			}(),
			prompt: long, wantStdin: true, wantArgs: func(string, string) []string { return []string{"-x"} }},
		{name: "long argv prompt goes to a file",
			def: func() agent.Definition {
				d := fakeDef(agent.PromptArg, "{prompt}")
				d.FallbackArgs = []string{"--message-file", "{prompt_file}"}
				return d
			}(),
			prompt: long, wantFile: true, wantArgs: func(_, f string) []string { return []string{"--message-file", f} }},
		{name: "long argv prompt goes to a file in the working directory",
			def: func() agent.Definition {
				d := fakeDef(agent.PromptArg, "{prompt}")
				d.FallbackArgs, d.PromptFileInWorkdir = []string{"--read", "{prompt_file}"}, true
				return d
			}(),
			prompt: long, wantFile: true, inWorkdir: true, wantArgs: func(_, f string) []string { return []string{"--read", f} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			res, err := agent.Run(t.Context(), agent.Call{Def: tt.def, Prompt: tt.prompt, Dir: dir,
				Env: env("FAKE_MODE=echo"), Timeout: 20 * time.Second})
			require.NoError(t, err)
			r := decodeReport(t, res)

			file := ""
			if tt.wantFile {
				require.Len(t, r.Files, 1)
				for path, content := range r.Files {
					file = path
					assert.True(t, content == tt.prompt, "prompt file content differs")
				}
				_, err := os.Stat(file)
				assert.ErrorIs(t, err, os.ErrNotExist, "prompt file left behind")
				wantDir := filepath.Clean(os.TempDir())
				if tt.inWorkdir {
					wantDir = dir
					assert.True(t, strings.HasPrefix(filepath.Base(file), ".dtree-prompt-"), "a hidden name: %s", file)
				}
				assert.Equal(t, wantDir, filepath.Dir(file), "where the prompt file was")
			} else {
				assert.Empty(t, r.Files)
			}
			want := tt.wantArgs(tt.prompt, file)
			require.Len(t, r.Args, len(want))
			for i := range want {
				assert.True(t, r.Args[i] == want[i], "argv[%d] differs", i+1)
			}
			if tt.wantStdin {
				assert.True(t, r.Stdin == tt.prompt, "stdin differs: %d bytes, want %d", len(r.Stdin), len(tt.prompt))
			} else {
				assert.Empty(t, r.Stdin)
			}

			// Nothing is left in the working directory: a prompt file
			// written there for the call is removed after it.
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "the prompt left something in the working directory")
			assert.Equal(t, fakeAgent, res.Argv[0])
			for _, a := range res.Argv {
				assert.NotContains(t, a, "second line", "the prompt leaked into Argv")
			}
			if !tt.wantStdin && !tt.wantFile {
				assert.Contains(t, strings.Join(res.Argv, " "), fmt.Sprintf("<prompt: %d bytes>", len(tt.prompt)))
			}
		})
	}
}

func TestRunModelArgument(t *testing.T) {
	t.Parallel()
	args := []string{"--model={model}", "-m", "{model}", "run", "{model}", "{prompt}"}
	tests := []struct {
		name   string
		model  string
		values []string // Definition.ModelValues
		want   []string
		note   string // in the output, besides the agent's
	}{
		{name: "set", model: "opus", want: []string{"--model=opus", "-m", "opus", "run", "opus", "say {model}"}},
		{name: "unset drops the elements and a flag before a bare one", model: "", want: []string{"run", "say {model}"}},
		{name: "one of the values the CLI takes, as listed", model: "RUSH", values: []string{"smart", "rush", "deep"},
			want: []string{"--model=rush", "-m", "rush", "run", "rush", "say {model}"}},
		{name: "a value the CLI does not take is left out", model: "gpt-5", values: []string{"smart", "rush", "deep"},
			want: []string{"run", "say {model}"}, note: `----- dtree: model "gpt-5" left out: fake takes only smart, rush, deep -----`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := fakeDef(agent.PromptArg, args...)
			def.ModelValues = tt.values
			var out bytes.Buffer
			res, err := agent.Run(t.Context(), agent.Call{Def: def, Prompt: "say {model}", Output: &out,
				Model: tt.model, Dir: t.TempDir(), Env: env("FAKE_MODE=echo"), Timeout: 20 * time.Second})
			require.NoError(t, err)
			assert.Equal(t, tt.want, decodeReport(t, res).Args)
			if tt.note != "" {
				assert.Contains(t, out.String(), tt.note)
			} else {
				assert.NotContains(t, out.String(), "----- dtree:")
			}
		})
	}
}

func TestRunRefusesBeforeStarting(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("p", agent.MaxArgPrompt+1)
	tests := []struct {
		name    string
		def     agent.Definition
		wantErr string
	}{
		{name: "long prompt, no stdin, no file", def: fakeDef(agent.PromptArg, "{prompt}"), wantErr: "too long for argv"},
		{name: "file CLI without {prompt_file}", def: fakeDef(agent.PromptFile, "--file"), wantErr: "no {prompt_file}"},
		{name: "unknown prompt_via", def: fakeDef("pigeon", "{prompt}"), wantErr: "unknown prompt_via"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidfile := filepath.Join(t.TempDir(), "pids")
			_, err := agent.Run(t.Context(), agent.Call{Def: tt.def, Prompt: long, Dir: t.TempDir(),
				Env: env("FAKE_MODE=spawn", "FAKE_PIDFILE="+pidfile, "FAKE_LEADER_EXIT=1")})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.NotErrorIs(t, err, agent.ErrNotFound)
			assert.NoFileExists(t, pidfile, "the agent started")
		})
	}
}

func TestRunEnvironment(t *testing.T) {
	t.Parallel()
	def := fakeDef(agent.PromptStdin)
	def.Env = map[string]string{"FAKE_EXTRA": "from the definition"}
	def.UnsetEnv = []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"}
	dir := t.TempDir()
	res, err := agent.Run(t.Context(), agent.Call{Def: def, Prompt: "hi", Dir: dir, Timeout: 20 * time.Second,
		Request: agent.Request{RunID: "run-1", Node: "n7", Purpose: agent.PurposeValidate, Attempt: 2},
		// A DTREE_NODE_ID in dtree's own environment (a dtree run from a
		// step of another) is the request's in the child.
		Env: env("FAKE_MODE=echo", "DTREE_NODE_ID=outer", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "NO_COLOR=", "TERM=xterm-256color", "KEEP=me")})
	require.NoError(t, err)
	r := decodeReport(t, res)

	got := map[string][]string{}
	for _, kv := range r.Env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = append(got[k], v)
	}
	tests := []struct {
		name string
		want []string // nil: absent
	}{
		{name: "DTREE_RUN_ID", want: []string{"run-1"}},
		{name: "DTREE_NODE_ID", want: []string{"n7"}},
		{name: "DTREE_ATTEMPT", want: []string{"2"}},
		{name: "DTREE_PURPOSE", want: []string{"validate"}},
		{name: "KEEP", want: []string{"me"}},
		{name: "FAKE_EXTRA", want: []string{"from the definition"}},
		{name: "NO_COLOR", want: []string{"1"}},
		{name: "TERM", want: []string{"dumb"}},
		{name: "CLAUDECODE"},
		{name: "CLAUDE_CODE_ENTRYPOINT"},
		{name: "HOME"}, // not in the base: the parent's environment is not inherited
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, got[tt.name])
		})
	}
	wantDir, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	assert.Equal(t, wantDir, r.Dir)
}

func TestRunNotFound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		binary string
		alt    []string
		want   string // in the message
	}{
		{name: "not on PATH", binary: "dtree-no-such-agent-cli", want: `"dtree-no-such-agent-cli" not found on PATH`},
		{name: "missing path", binary: filepath.Join(t.TempDir(), "agent"), want: "is not an executable file"},
		{name: "no other name either", binary: "dtree-no-such-agent-cli", alt: []string{"dtree-no-such-agent"},
			want: `"dtree-no-such-agent-cli" (or "dtree-no-such-agent") not found on PATH`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := agent.Definition{Name: "ghost", Binary: tt.binary, AltBinaries: tt.alt, Args: []string{"{prompt}"},
				InstallHint: "install ghost: npm install -g ghost"}
			_, err := agent.Run(t.Context(), agent.Call{Def: def, Prompt: "hi", Env: env()})
			var nf *agent.NotFoundError
			require.ErrorAs(t, err, &nf)
			assert.ErrorIs(t, err, agent.ErrNotFound)
			assert.Equal(t, "ghost", nf.Name)
			assert.Equal(t, tt.binary, nf.Binary)
			assert.Equal(t, "install ghost: npm install -g ghost", nf.InstallHint)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A CLI installed under another of its names is found and run by it.
func TestRunAltBinary(t *testing.T) {
	t.Parallel()
	def := fakeDef(agent.PromptStdin)
	def.Binary, def.AltBinaries = "dtree-no-such-agent-cli", []string{"dtree-no-such-agent", fakeAgent}
	res, err := agent.Run(t.Context(), agent.Call{Def: def, Prompt: "q", Dir: t.TempDir(), Timeout: 20 * time.Second,
		Env: env("FAKE_MODE=print", "FAKE_STDOUT=done")})
	require.NoError(t, err)
	assert.Equal(t, "done", res.Answer)
	assert.Equal(t, fakeAgent, res.Argv[0])
	path, name, err := agent.LookPath(def)
	require.NoError(t, err)
	assert.Equal(t, fakeAgent, path)
	assert.Equal(t, fakeAgent, name)
}

// claude is the built-in claude definition run as the fake agent.
func claude(t *testing.T) agent.Definition {
	t.Helper()
	d, err := agent.NewRegistry(nil).Lookup("claude")
	require.NoError(t, err)
	d.Binary = fakeAgent
	return d
}

func TestRunEnvelope(t *testing.T) {
	t.Parallel()
	const ok = `{"type":"result","subtype":"success","is_error":false,"result":"the answer\nline two",` +
		`"duration_ms":1234,"total_cost_usd":0.0123,"usage":{"input_tokens":100,"output_tokens":20}}`
	cut := `{"type":"result","result":"` + strings.Repeat("a", 1<<16)
	cut = cut[:1<<16]
	text := claude(t)
	text.Output, text.AnswerPath, text.ErrorPath, text.CostPath = agent.OutputText, "", "", ""
	tests := []struct {
		name       string
		def        agent.Definition
		stdout     string
		stderr     string
		exit       int
		wantAnswer string
		wantUsage  types.Usage
		wantErr    string // "" for none; else in the AgentError's Reason
		wantExit   int
	}{
		{name: "claude success after a stray escape", stdout: "\x1b[?1004l" + ok + "\n",
			wantAnswer: "the answer\nline two", wantUsage: usage(100, 20, 0.0123, 1234)},
		{name: "counts written as floats",
			stdout:     `{"result":"x","is_error":false,"usage":{"input_tokens":1.0e2,"output_tokens":7.0},"total_cost_usd":1,"duration_ms":5.4}`,
			wantAnswer: "x", wantUsage: usage(100, 7, 1, 5)},
		{name: "no usage is unknown, not zero", stdout: `{"result":"x"}`, wantAnswer: "x"},
		{name: "prose around the object", stdout: "warming up\n" + ok + "\nbye\n", wantAnswer: "the answer\nline two",
			wantUsage: usage(100, 20, 0.0123, 1234)},
		{name: "is_error with exit 0",
			stdout:     `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","duration_ms":3}`,
			wantAnswer: "API Error: 529 overloaded", wantUsage: types.Usage{DurationMS: ptr[int64](3)}, wantErr: "reported an error: API Error: 529 overloaded"},
		{name: "error subtype with exit 0 and no is_error",
			stdout:     `{"type":"result","subtype":"error_max_turns","is_error":false,"result":"stopped","num_turns":30}`,
			wantAnswer: "stopped", wantErr: "reported error_max_turns: stopped"},
		{name: "non-zero exit", stdout: "partial", stderr: "warming up\nboom: bad flag\n", exit: 3,
			wantErr: "exited with status 3", wantExit: 3},
		{name: "non-zero exit with is_error", stdout: `{"is_error":true,"result":"You've hit your limit"}`, exit: 1,
			wantAnswer: "You've hit your limit", wantErr: "exited with status 1: You've hit your limit", wantExit: 1},
		{name: "empty result", stdout: `{"is_error":false,"result":""}`, wantErr: "empty answer"},
		{name: "no JSON", stdout: "Error: not logged in\n", wantErr: "printed no stream-json events; stdout: Error: not logged in"},
		{name: "cut at 64 KiB", stdout: cut, wantErr: "truncated"},
		{name: "text output strips escapes", def: text, stdout: "\x1b[1;32mgreen\x1b[0m answer\n", wantAnswer: "green answer"},
		{name: "empty text output", def: text, stdout: "\x1b[0m \n", wantErr: "empty answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := tt.def
			if def.Name == "" {
				def = claude(t)
			}
			var out bytes.Buffer
			res, err := agent.Run(t.Context(), agent.Call{Def: def, Prompt: "q", Dir: t.TempDir(), Output: &out,
				Timeout: 20 * time.Second,
				Env: env("FAKE_MODE=print", "FAKE_STDOUT="+tt.stdout, "FAKE_STDERR="+tt.stderr,
					"FAKE_EXIT="+strconv.Itoa(tt.exit))})
			assert.Equal(t, tt.wantAnswer, res.Answer)
			assert.Equal(t, tt.wantExit, res.ExitCode)
			assert.Equal(t, tt.stdout, res.Stdout)
			assert.Equal(t, int64(len(tt.stdout)), res.StdoutBytes)
			assert.Equal(t, tt.stderr, res.StderrTail)
			assert.Equal(t, int64(len(tt.stderr)), res.StderrBytes)
			assert.Contains(t, out.String(), tt.stdout, "Output gets stdout")
			assert.Contains(t, out.String(), tt.stderr, "Output gets stderr")
			assert.Equal(t, tt.wantUsage, res.Usage)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			var ae *agent.AgentError
			require.ErrorAs(t, err, &ae)
			assert.Contains(t, ae.Reason, tt.wantErr)
			assert.Equal(t, def.Name, ae.Name)
			assert.Equal(t, tt.wantExit, ae.ExitCode)
			assert.False(t, ae.TimedOut)
			assert.Equal(t, tt.stderr, ae.StderrTail)
			if tt.stderr != "" {
				assert.Contains(t, err.Error(), "boom: bad flag", "the error shows stderr's last line")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func usage(in, out int64, cost float64, ms int64) types.Usage {
	return types.Usage{InputTokens: ptr(in), OutputTokens: ptr(out), CostUSD: ptr(cost), DurationMS: ptr(ms)}
}

// gone reports whether pid has exited: no /proc entry, or a zombie.
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state …; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// waitPids waits for the fake agent's pid file: "leader child".
func waitPids(t *testing.T, path string, within time.Duration) []int {
	t.Helper()
	var pids []int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pids = nil
		for f := range strings.FieldsSeq(string(b)) {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			pids = append(pids, n)
		}
		return true
	}, within, 10*time.Millisecond)
	require.Len(t, pids, 2)
	t.Cleanup(func() { // should the runner have failed to
		for _, pid := range pids {
			if !gone(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return pids
}

func TestRunStopsTheProcessGroup(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	tests := []struct {
		name         string
		timeout      time.Duration
		grace        time.Duration
		ignoreTerm   bool
		termExit     string // FAKE_TERM_EXIT: the status it exits with on SIGTERM
		cancelCaller bool
	}{
		{name: "timeout, agent stops on SIGTERM", timeout: 500 * time.Millisecond, grace: 3 * time.Second},
		{name: "timeout, agent ignores SIGTERM", timeout: 500 * time.Millisecond, grace: 500 * time.Millisecond, ignoreTerm: true},
		{name: "caller cancels", grace: 3 * time.Second, cancelCaller: true},
		{name: "caller cancels, agent ignores SIGTERM", grace: 500 * time.Millisecond, ignoreTerm: true, cancelCaller: true},
		// A CLI that catches SIGTERM and exits 128+15 was still stopped.
		{name: "timeout, agent exits 143 on SIGTERM", timeout: 500 * time.Millisecond, grace: 3 * time.Second, termExit: "143"},
		{name: "caller cancels, agent exits 143 on SIGTERM", grace: 3 * time.Second, termExit: "143", cancelCaller: true},
		{name: "caller cancels, agent exits 0 on SIGTERM", grace: 3 * time.Second, termExit: "0", cancelCaller: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidfile := filepath.Join(t.TempDir(), "pids")
			e := env("FAKE_MODE=spawn", "FAKE_PIDFILE="+pidfile)
			if tt.ignoreTerm {
				e = append(e, "FAKE_IGNORE_TERM=1")
			}
			if tt.termExit != "" {
				e = append(e, "FAKE_TERM_EXIT="+tt.termExit)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancelCaller {
				go func() { // cancel once the agent and its child are up
					for i := 0; i < 1000; i++ {
						if _, err := os.Stat(pidfile); err == nil {
							break
						}
						time.Sleep(10 * time.Millisecond)
					}
					time.Sleep(100 * time.Millisecond)
					cancel()
				}()
			}
			start := time.Now()
			res, err := agent.Run(ctx, agent.Call{Def: fakeDef(agent.PromptStdin), Prompt: "hang",
				Dir: t.TempDir(), Env: e, Timeout: tt.timeout, Grace: tt.grace})
			elapsed := time.Since(start)
			pids := waitPids(t, pidfile, time.Second)

			var ae *agent.AgentError
			if tt.cancelCaller {
				assert.ErrorIs(t, err, context.Canceled)
				assert.False(t, errors.As(err, &ae), "a caller's cancel is not the agent's failure")
				assert.Equal(t, "fake stopped: dtree was interrupted", err.Error(), "no Go wording for users")
				assert.False(t, res.TimedOut)
			} else {
				require.ErrorAs(t, err, &ae)
				assert.True(t, ae.TimedOut)
				assert.True(t, res.TimedOut)
				assert.Contains(t, err.Error(), "timed out after "+tt.timeout.String())
			}
			assert.Equal(t, -1, res.ExitCode, "stopped by dtree, whatever it exited with")

			limit := tt.timeout + tt.grace + time.Second
			if tt.cancelCaller {
				limit = 10 * time.Second // cancel comes once the pids are known
			}
			for _, pid := range pids {
				deadline := start.Add(limit)
				for !gone(pid) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				assert.True(t, gone(pid), "pid %d still running %s after the start", pid, time.Since(start))
			}
			if !tt.ignoreTerm && !tt.cancelCaller {
				assert.Less(t, elapsed, tt.timeout+tt.grace/2, "SIGTERM should have been enough")
			}
			if tt.ignoreTerm && !tt.cancelCaller {
				assert.GreaterOrEqual(t, elapsed, tt.timeout+tt.grace, "SIGKILL only after the grace period")
			}
		})
	}
}

// A leader that exits 0 while a child it started still holds stdout is a
// success once the grace period ends; the child is killed.
func TestRunLeaderExitsChildHoldsStdout(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pids")
	res, err := agent.Run(t.Context(), agent.Call{Def: fakeDef(agent.PromptStdin), Prompt: "q", Dir: t.TempDir(),
		Timeout: 20 * time.Second, Grace: 300 * time.Millisecond,
		Env: env("FAKE_MODE=spawn", "FAKE_PIDFILE="+pidfile, "FAKE_LEADER_EXIT=1", "FAKE_STDOUT=done")})
	require.NoError(t, err)
	assert.Equal(t, "done", res.Answer)
	assert.Equal(t, 0, res.ExitCode)
	pids := waitPids(t, pidfile, time.Second)
	require.Eventually(t, func() bool { return gone(pids[1]) }, time.Second, 10*time.Millisecond)
}

// countWriter counts what it is given and keeps nothing.
type countWriter struct{ n atomic.Int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

func TestRunKeepsMemoryBounded(t *testing.T) {
	t.Parallel()
	const total = 200_000_000
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	var out countWriter
	res, err := agent.Run(t.Context(), agent.Call{Def: fakeDef(agent.PromptStdin), Prompt: "flood", Dir: t.TempDir(),
		Output: &out, Timeout: 20 * time.Second, Env: env("FAKE_MODE=print-bytes", "FAKE_BYTES="+strconv.Itoa(total))})
	close(stop)
	wg.Wait()
	require.NoError(t, err)
	assert.Equal(t, int64(total), out.n.Load(), "every byte reaches Output")
	assert.Equal(t, int64(total), res.StdoutBytes)
	assert.True(t, res.Truncated)
	assert.Len(t, res.Stdout, agent.MaxStdoutTail)
	assert.True(t, strings.HasSuffix(res.Stdout, "x\n"))
	assert.Less(t, peak.Load(), uint64(64<<20), "heap in use peaked at %d MiB", peak.Load()>>20)
}

// failWriter fails every write, as a full disk would.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A log that cannot be written is reported in the result, but it does
// not fail the call, which did its work: the agent's output is still
// drained and read, and its answer comes back.
func TestRunOutputFails(t *testing.T) {
	t.Parallel()
	res, err := agent.Run(t.Context(), agent.Call{Def: fakeDef(agent.PromptStdin), Prompt: "q", Dir: t.TempDir(),
		Output: failWriter{}, Timeout: 20 * time.Second,
		Env: env("FAKE_MODE=print-bytes", "FAKE_BYTES=1000000")})
	require.NoError(t, err)
	require.Error(t, res.OutputError)
	assert.Contains(t, res.OutputError.Error(), "disk full")
	assert.Equal(t, int64(1000000), res.StdoutBytes)
	assert.Equal(t, 0, res.ExitCode)
	assert.NotEmpty(t, res.Answer)
}

// A working directory removed under a run (a step ran git worktree
// remove on its own worktree): said so, not as the program missing,
// which is how the child's failed chdir comes back.
func TestRunWorkdirGone(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "gone")
	_, err := agent.Run(t.Context(), agent.Call{Def: agent.Shell, Prompt: "true", Env: env(), Dir: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its working directory "+dir+" is not there any more: something removed it")
}
