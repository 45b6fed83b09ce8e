package conformance

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/mockllm"
	"github.com/dtree-dev/dtree/internal/runlog"
)

// TestConformanceGlassBox: issue 23's agent as a glass box, against each
// real CLI and mockllm's tool calls. Each point is one function over the
// CLIs; what a CLI cannot do is in glassLimits, asserted as it is, and
// said in readme/clis.md#conformance.
func TestConformanceGlassBox(t *testing.T) {
	if dtreeBin == "" {
		t.Skipf("%s is not set: `make conformance` installs the real CLIs and runs these tests", cliDirEnv)
	}
	only := os.Getenv("DTREE_CONFORMANCE_ONLY")
	for _, c := range cases() {
		if _, ok := shellTools[c.name]; !ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			if only != "" && !slices.Contains(strings.Split(only, ","), c.name) {
				t.Skipf("not in DTREE_CONFORMANCE_ONLY=%s", only)
			}
			t.Run("tool_call_seen", func(t *testing.T) { glassToolCallSeen(t, c) })
			t.Run("timeout_usage", func(t *testing.T) { glassTimeoutUsage(t, c) })
			t.Run("budget_mid_call", func(t *testing.T) { glassBudget(t, c) })
			t.Run("max_turns", func(t *testing.T) { glassMaxTurns(t, c) })
		})
	}
}

// glassLimit is what a real CLI cannot do of the glass box, each a known
// limit the tests assert as it is (readme/clis.md#conformance).
type glassLimit struct {
	// noTokens: the CLI reports no token counts, so a run with
	// --max-tokens is refused (exit 2) and a stopped call counts none.
	noTokens bool
	// usageAtEnd: the CLI's stream reports usage only in its last
	// event, so a call killed before it counts none, and a budget cannot
	// stop a call in the middle (it stops the run before the next call).
	usageAtEnd bool
	// toolAtEnd: the stream tells a tool call only once it has ended, so
	// the live line never shows it running (events.jsonl still has it).
	toolAtEnd bool
	// toolStatus is the tool_call's status where it is not ok: qwen
	// 0.24.4 reports its run_shell_command of `sleep 3; echo …` as an
	// error although the command ran (not yet looked into).
	toolStatus string
}

var glassLimits = map[string]glassLimit{
	"codex":    {usageAtEnd: true}, // turn.completed, once, at the end of codex exec
	"gemini":   {usageAtEnd: true}, // stream-json: usage only in the result event
	"opencode": {toolAtEnd: true},  // its tool_use event comes when the tool has completed
	"copilot":  {noTokens: true},
	"qwen":     {toolStatus: runlog.ToolError},
}

// shellCall is the CLI's shell tool running command.
func shellCall(cli, command string) mockllm.ToolCall {
	tc := shellTools[cli]
	in := maps.Clone(tc.Input)
	if _, ok := in["cmd"]; ok {
		in["cmd"] = command
	} else {
		in["command"] = command
	}
	return mockllm.ToolCall{Name: tc.Name, Input: in}
}

// runaway is a model that calls the shell on every reply, each reply
// reporting usage u: it never ends by itself. Its first 1,000 turns each
// run another command, so that a CLI's loop detection (gemini stops at
// the same tool call repeated, qwen at identical consecutive calls)
// does not end it first.
func runaway(c cliCase, u mockllm.Usage) []mockllm.Rule {
	var rules []mockllm.Rule
	for turn := 1; turn <= 1000; turn++ {
		rules = append(rules, mockllm.Rule{Turn: turn, Usage: u,
			Tools: []mockllm.ToolCall{shellCall(c.name, fmt.Sprintf("echo conformance-runaway-%d", turn))}})
	}
	rules = append(rules, mockllm.Rule{Usage: u, Tools: []mockllm.ToolCall{shellCall(c.name, "echo conformance-runaway")}})
	return c.rules(rules...)
}

// glassToolCallSeen: the model calls the shell once (a command that takes
// a few seconds, so the live line, redrawn every second, shows it), then
// answers. events.jsonl has the tool_call with its tool and command, and
// the live line on a terminal shows the command while it runs.
func glassToolCallSeen(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	const command = "sleep 3; echo conformance-tool-ran"
	e.mock.SetRules(c.rules(
		mockllm.Rule{Result: "conformance-tool-ran", Reply: processReply("ran the shell tool")},
		mockllm.Rule{Turn: 1, Match: "conformance seen", Tools: []mockllm.ToolCall{shellCall(c.name, command)}, Times: 1},
	))
	r, term := e.runOnTerminal("--retries", "0", e.write("chart.yaml", oneNode("Use the conformance seen tool.")))
	var tools []runlog.ToolCall
	for _, ev := range r.events {
		if tc, ok := ev.(runlog.ToolCall); ok {
			tools = append(tools, tc)
		}
	}
	t.Logf("tool_call events: %+v", tools)
	expect(t, c, "tool call seen", func(a *assert.Assertions) {
		a.Equal(0, r.exit, "exit status")
		if a.Len(tools, 1, "one tool_call event") {
			a.NotEmpty(tools[0].Tool, "the tool's name")
			a.Contains(tools[0].Arg, "sleep 3", "the tool's command, short")
			status := cmp.Or(glassLimits[c.name].toolStatus, runlog.ToolOK)
			a.Equal(status, tools[0].Status)
			a.Equal(c.name, tools[0].CLI)
			a.Contains(term, "\x1b[2K→", "a live line was drawn")
			if glassLimits[c.name].toolStatus == runlog.ToolError {
				return // it failed at once: the 1 s redraw may not have caught it
			}
			if glassLimits[c.name].toolAtEnd {
				// It tells the tool only once it has ended, so the live
				// line shows it for at most the moment before the call
				// ends, which its 1 s redraw may or may not catch: only
				// events.jsonl is checked.
				return
			}
			a.Contains(term, " "+tools[0].Tool+" ", "the live line shows the tool")
			a.Contains(term, "sleep 3", "the live line shows its command")
		}
	})
}

// glassTimeoutUsage: a runaway model whose every reply reports usage,
// ended by dtree's --timeout. The usage streamed before the kill is the
// run's, in --json and short.json.
func glassTimeoutUsage(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	u := mockllm.Usage{Input: 1000, Output: 10}
	e.mock.SetRules(runaway(c, u))
	timeout := c.hangTimeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	r := e.run("--retries", "0", "--timeout", timeout.String(), e.write("chart.yaml", oneNode("Loop forever (conformance runaway).")))
	replies := len(answered(e.mock.Requests()))
	short := readShort(t, e)
	t.Logf("%d replies; usage %s; short.json %s", replies, figures(r.summary.Usage.InputTokens, r.summary.Usage.OutputTokens), figures(short.Usage.InputTokens, short.Usage.OutputTokens))
	expect(t, c, "timeout usage", func(a *assert.Assertions) {
		a.Equal(1, r.exit, "exit status")
		a.Contains(r.stderr, "timed out")
		a.GreaterOrEqual(replies, 2, "the model was called again and again")
		if l := glassLimits[c.name]; l.noTokens || l.usageAtEnd {
			a.Nil(r.summary.Usage.InputTokens, "%s reported no tokens before it was killed", c.name)
			a.Nil(short.Usage.InputTokens, "short.json")
			return
		}
		if a.NotNil(r.summary.Usage.InputTokens, "the killed call's streamed usage counts") {
			// The reply being read when the kill came may be lost, and
			// so the first one or two replies' at most.
			a.GreaterOrEqual(*r.summary.Usage.InputTokens, (replies-2)*u.Input)
			a.Positive(*r.summary.Usage.InputTokens)
			a.LessOrEqual(*r.summary.Usage.InputTokens, replies*u.Input)
		}
		a.Equal(figures(r.summary.Usage.InputTokens, r.summary.Usage.OutputTokens), figures(short.Usage.InputTokens, short.Usage.OutputTokens), "short.json has the run's usage")
	})
}

// glassBudget: a runaway model whose replies report 1,000 input tokens
// each, under --max-tokens 2500: the call is stopped as the stream
// crosses it, long before its 45s timeout; the run is budget_reached.
func glassBudget(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	e.mock.SetRules(runaway(c, mockllm.Usage{Input: 1000, Output: 10}))
	timeout := "45s"
	if glassLimits[c.name].usageAtEnd {
		timeout = "15s" // it runs until then: the budget cannot stop it
	}
	r := e.run("--retries", "0", "--timeout", timeout, "--max-tokens", "2500", e.write("chart.yaml", oneNode("Loop forever (conformance runaway).")))
	replies := len(answered(e.mock.Requests()))
	t.Logf("%d replies in %s; usage %s", replies, r.elapsed, figures(r.summary.Usage.InputTokens, r.summary.Usage.OutputTokens))
	expect(t, c, "budget mid-call", func(a *assert.Assertions) {
		if glassLimits[c.name].noTokens {
			// It could not be counted: the run is refused before it starts.
			a.Equal(2, r.exit, "exit status")
			a.Contains(r.stderr, "the budget could not count the calls")
			a.Empty(answered(e.mock.Requests()))
			return
		}
		if glassLimits[c.name].usageAtEnd {
			a.Equal(1, r.exit, "exit status")
			a.Contains(r.stderr, "timed out", "the budget saw no usage until the timeout")
			a.Nil(r.summary.Usage.InputTokens)
			return
		}
		a.Equal(4, r.exit, "exit status")
		a.Equal("budget_reached", r.summary.Status)
		a.Contains(r.stderr, "which was stopped", "the call was stopped in the middle")
		a.Less(r.elapsed, 30*time.Second, "well before the timeout")
		if a.NotNil(r.summary.Usage.InputTokens) {
			a.GreaterOrEqual(*r.summary.Usage.InputTokens, 2500)
			// 3,000 at the message that crossed it, and a side call of
			// the CLI's own (gemini's) at most.
			a.LessOrEqual(*r.summary.Usage.InputTokens, 5000, "stopped at the message that crossed it")
		}
	})
}

// glassMaxTurns: a runaway model under --max-turns 2: the call ends after
// two turns, claude by itself (--max-turns), the others stopped by dtree
// as their stream begins turn 3, long before the timeout.
func glassMaxTurns(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	e.mock.SetRules(runaway(c, mockllm.Usage{Input: 100, Output: 10}))
	r := e.run("--retries", "0", "--timeout", "120s", "--max-turns", "2", e.write("chart.yaml", oneNode("Loop forever (conformance runaway).")))
	var turns []int
	for _, q := range answered(e.mock.Requests()) {
		turns = append(turns, q.Turn)
	}
	t.Logf("turns the mock answered: %v in %s", turns, r.elapsed)
	expect(t, c, "max turns", func(a *assert.Assertions) {
		a.Equal(1, r.exit, "exit status")
		a.Less(r.elapsed, 60*time.Second, "well before the timeout")
		if c.name == "claude" {
			a.Equal([]int{1, 2}, turns, "claude stopped itself after two turns")
			return
		}
		a.Contains(r.stderr, "past max_turns 2")
		a.LessOrEqual(slices.Max(append(turns, 0)), 3, "stopped as turn 3 began")
	})
}

// readShort reads the run's short.json.
func readShort(t *testing.T, e *env) summary {
	t.Helper()
	var s summary
	b, err := os.ReadFile(filepath.Join(e.logs, "latest", "short.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	return s
}

// runOnTerminal is run with stderr on a pseudo-terminal of 200 columns,
// where dtree draws its live line; it returns what the terminal got too.
func (e *env) runOnTerminal(args ...string) (result, string) {
	e.t.Helper()
	ptmx, tty, err := pty.Open()
	require.NoError(e.t, err)
	defer ptmx.Close()
	require.NoError(e.t, pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 200}))
	var (
		mu   sync.Mutex
		term bytes.Buffer
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			mu.Lock()
			term.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	full := append([]string{"run", "--json", "--cli", e.c.name, "--log-dir", e.logs}, args...)
	cmd := exec.Command(dtreeBin, full...)
	cmd.Dir, cmd.Env = e.work, append(slices.Clone(e.vars), "TERM=xterm")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, tty
	began := time.Now()
	err = cmd.Run()
	tty.Close()
	r := result{stdout: out.String(), elapsed: time.Since(began)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else {
		require.NoError(e.t, err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	mu.Lock()
	r.stderr = term.String()
	mu.Unlock()
	e.t.Logf("dtree %s on a terminal: exit %d in %s; terminal:\n%q", strings.Join(args, " "), r.exit, r.elapsed.Round(time.Millisecond), r.stderr)
	require.NoError(e.t, json.Unmarshal(out.Bytes(), &r.summary), "dtree run --json printed: %s", r.stdout)
	r.events = readEvents(e.t, filepath.Join(e.logs, "latest", "events.jsonl"))
	return r, r.stderr
}
