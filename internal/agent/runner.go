package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtree-dev/dtree/types"
)

// Bounds of what Run keeps of an agent's output; everything goes to
// Call.Output as it arrives (SPEC §6: output is never held whole).
const (
	MaxStdoutTail = 1 << 20 // enough for any answer dtree parses
	MaxStderrTail = 8 << 10 // enough for an error message
)

// DefaultGrace is how long an agent has to exit after SIGTERM before its
// process group gets SIGKILL.
const DefaultGrace = 5 * time.Second

// DefaultSettle is how long an agent has to exit once its output holds its
// final event (or whole envelope) before dtree stops it as at a timeout.
// Some CLIs print their answer and never exit (opencode #44901, cursor
// #3588, copilot #286, agent-clis.md); waiting for the node's timeout
// would lose the answer. A CLI still tidying up has this long to finish.
const DefaultSettle = 3 * time.Second

// Call is one run of an agent CLI.
type Call struct {
	Def    Definition
	Prompt string
	Model  string // "" drops the {model} argument
	Dir    string
	// Env is the child's whole base environment (nil is empty, not the
	// parent's): the caller passes os.Environ() plus DTREE_RUN_ID,
	// DTREE_NODE_ID and DTREE_ATTEMPT.
	Env     []string
	Timeout time.Duration // 0: none
	// Grace is the time between SIGTERM and SIGKILL; 0 means DefaultGrace.
	Grace time.Duration
	// Settle is how long the agent may run on after its final event;
	// 0 means DefaultSettle.
	Settle time.Duration
	// Output receives stdout and stderr as they arrive (the long log); nil
	// discards them. Writes come one at a time, never concurrently.
	Output io.Writer
}

// Result is what Run learned of a call. It is filled as far as the call
// got, also when Run returns an error.
type Result struct {
	ExitCode int // -1 when killed by a signal or never started
	TimedOut bool
	// StoppedAfterAnswer says dtree stopped the agent because it had not
	// exited Settle after its final event (or was still running when its
	// timeout came after that event). The call ended normally: its exit
	// status, -1 or what the agent made of SIGTERM, does not count.
	StoppedAfterAnswer bool
	Duration           time.Duration
	Stdout             string // the last MaxStdoutTail bytes of stdout
	StdoutBytes        int64
	StderrBytes        int64
	StderrTail         string // the last MaxStderrTail bytes of stderr
	Truncated          bool   // stdout was longer than Stdout
	Answer             string
	Usage              types.Usage
	// Argv is the command line run, binary first, with the prompt
	// replaced by "<prompt: N bytes>" so it can be logged.
	Argv []string
}

// ErrNotFound is matched (errors.Is) by every *NotFoundError.
var ErrNotFound = errors.New("agent CLI not found")

// NotFoundError says a CLI's binary is not on PATH. Retrying cannot help;
// the install hint says what can.
type NotFoundError struct {
	Name        string
	Binary      string
	Alt         []string // the other names looked for
	InstallHint string
	Err         error // from exec.LookPath, for Binary
}

func (e *NotFoundError) Error() string {
	if strings.ContainsRune(e.Binary, os.PathSeparator) && len(e.Alt) == 0 {
		return fmt.Sprintf("CLI %s: %s is not an executable file", e.Name, e.Binary)
	}
	return fmt.Sprintf("CLI %s: %s not found on PATH", e.Name, binaryNames(e.Binary, e.Alt))
}

// binaryNames says the names a CLI is looked for under: "cursor-agent"
// (or "agent").
func binaryNames(binary string, alt []string) string {
	s := strconv.Quote(binary)
	for _, a := range alt {
		s += fmt.Sprintf(" (or %q)", a)
	}
	return s
}

// LookPath finds a CLI's program: Binary, else each of AltBinaries in
// turn. It returns the absolute path and the name it was found under; a
// relative path ("./agent") is found from dtree's directory.
func LookPath(def Definition) (path, name string, err error) {
	for _, name := range append([]string{def.Binary}, def.AltBinaries...) {
		path, lerr := exec.LookPath(name)
		if lerr != nil {
			if err == nil {
				err = lerr
			}
			continue
		}
		if abs, aerr := filepath.Abs(path); aerr == nil {
			path = abs
		}
		return path, name, nil
	}
	return "", "", &NotFoundError{Name: def.Name, Binary: def.Binary, Alt: def.AltBinaries, InstallHint: def.InstallHint, Err: err}
}

func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
func (e *NotFoundError) Unwrap() error        { return e.Err }

// AgentError is a call that ran but failed: a non-zero exit, a timeout, an
// error the CLI reported in its output, or no usable answer.
type AgentError struct {
	Name       string
	ExitCode   int
	TimedOut   bool
	Reason     string // "exited with status 3", "timed out after 10m", …
	StderrTail string
	// quoted says Reason already has what stderr said (gemini's JSON error).
	quoted bool
}

func (e *AgentError) Error() string {
	msg := e.Name + " " + e.Reason
	if line := lastLine(e.StderrTail); line != "" && !e.quoted {
		msg += "; stderr: " + line
	}
	return msg
}

// Run starts the CLI, feeds it the prompt, streams its output to
// c.Output, and reads the answer and usage from what it printed.
//
// It returns a *NotFoundError when the binary is missing, an *AgentError
// when the agent failed, and an error wrapping ctx.Err() when ctx ended
// first. On a timeout or cancellation the agent's whole process group gets
// SIGTERM, then SIGKILL after the grace period; Run returns once the group
// is gone or killed. The same stop ends an agent that has printed its
// final event and not exited Settle later, and the call then counts as
// ended normally. After an exit of its own, what the agent left running
// is killed only if it held stdout or stderr open past the grace period
// (which is not a failure).
func Run(ctx context.Context, c Call) (Result, error) {
	def := c.Def
	res := Result{ExitCode: -1}
	// A relative binary ("./agent") is found from dtree's directory; the
	// agent runs in c.Dir, so it is started by its absolute path.
	path, _, err := LookPath(def)
	if err != nil {
		return res, err
	}
	form, err := formatOf(def)
	if err != nil {
		return res, fmt.Errorf("run %s: %w", def.Name, err)
	}
	model := modelFor(def, c.Model)
	inv, err := prepare(def, c.Prompt, model, c.Dir)
	if err != nil {
		return res, fmt.Errorf("run %s: %w", def.Name, err)
	}
	defer inv.cleanup()
	dec := form.new(def)
	res.Argv = append([]string{path}, inv.shown...)

	runCtx := ctx
	timeout := fmt.Errorf("timed out after %s", types.ShortDuration(c.Timeout))
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, c.Timeout, timeout)
		defer cancel()
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	settle := c.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	// cmdCtx also ends, with errAnswered, when the agent outstays its
	// final event.
	cmdCtx, stopAnswered := context.WithCancelCause(runCtx)
	defer stopAnswered(nil)

	out := &sink{out: c.Output}
	stdout := &stream{sink: out, tail: tail{max: MaxStdoutTail}, name: "stdout"}
	stderr := &stream{sink: out, tail: tail{max: MaxStderrTail}, name: "stderr"}
	if model != c.Model && model == "" {
		out.note(fmt.Sprintf("dtree: model %q left out: %s takes only %s", c.Model, def.Name, strings.Join(def.ModelValues, ", ")))
	}
	var answeredAt atomic.Int64 // when the final event came, in Unix ns
	answered := make(chan struct{})
	if form.split != nil {
		stdout.split = form.split(dec.line)
		stdout.seen = func() {
			if dec.final() && answeredAt.CompareAndSwap(0, time.Now().UnixNano()) {
				close(answered)
			}
		}
	}
	cmd := exec.CommandContext(cmdCtx, path, inv.args...)
	cmd.Dir = c.Dir
	cmd.Env = childEnv(c.Env, def)
	if inv.stdin != "" {
		cmd.Stdin = strings.NewReader(inv.stdin)
	} // else /dev/null: empty, never the terminal, and no pipe to feed
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	var stoppedAt atomic.Int64 // when Cancel sent SIGTERM, in Unix ns
	cmd.Cancel = func() error {
		stoppedAt.CompareAndSwap(0, time.Now().UnixNano())
		if answeredAt.Load() != 0 {
			out.note("dtree: stopping " + def.Name + ", which has not exited since its final event")
		}
		return terminate(cmd.Process)
	}
	cmd.WaitDelay = grace

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("start %s: %w", def.Name, err)
	}
	exited := make(chan struct{})
	var settling sync.WaitGroup
	settling.Go(func() {
		select {
		case <-answered:
		case <-exited:
			return
		}
		t := time.NewTimer(settle)
		defer t.Stop()
		select {
		case <-t.C:
			stopAnswered(errAnswered)
		case <-exited:
		}
	})
	waitErr := cmd.Wait()
	close(exited)
	settling.Wait()
	res.Duration = time.Since(start)
	pid := cmd.Process.Pid
	stopped := stoppedAt.Load() != 0
	// The agent had answered when dtree stopped it, for outstaying its
	// final event or for a timeout that came after it.
	cause := context.Cause(cmdCtx)
	res.StoppedAfterAnswer = stopped && answeredAt.Load() != 0 && answeredAt.Load() <= stoppedAt.Load() &&
		(cause == errAnswered || cause == timeout) && ctx.Err() == nil
	switch {
	case stopped:
		// The leader may be gone while children it started live on.
		reapGroup(pid, time.Unix(0, stoppedAt.Load()).Add(grace))
	case errors.Is(waitErr, exec.ErrWaitDelay):
		// The leader exited but something it started held stdout open
		// for the whole grace period: the step is over, so is that.
		killGroup(pid)
	}

	res.ExitCode = cmd.ProcessState.ExitCode()
	res.StdoutBytes, res.StderrBytes = stdout.tail.n, stderr.tail.n
	res.Truncated = stdout.tail.truncated()
	res.Stdout, res.StderrTail = stdout.tail.String(), stderr.tail.String()
	if stdout.split != nil {
		stdout.split.close()
	}
	reply, parseErr := dec.end(output{stdout: res.Stdout, total: res.StdoutBytes, truncated: res.Truncated, stderr: res.StderrTail})
	res.Answer, res.Usage = reply.answer, reply.usage

	fail := func(reason string) error {
		return &AgentError{Name: def.Name, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
			Reason: reason, StderrTail: res.StderrTail,
			quoted: reply.message != "" && strings.Contains(res.StderrTail, reply.message)}
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s stopped: %w", def.Name, ctx.Err())
	case stopped && cause == timeout && !res.StoppedAfterAnswer:
		res.TimedOut = true
		return res, fail(timeout.Error())
	case waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay):
		return res, fmt.Errorf("run %s: %w", def.Name, waitErr)
	case res.ExitCode != 0 && !res.StoppedAfterAnswer:
		reason := "exited with status " + strconv.Itoa(res.ExitCode)
		if res.ExitCode < 0 {
			reason = "was killed: " + cmd.ProcessState.String()
		} else if meaning := form.exits[res.ExitCode]; meaning != "" {
			reason += " (" + meaning + ")"
		}
		if reply.message != "" {
			reason += ": " + reply.message
		}
		return res, fail(reason)
	case parseErr != nil:
		return res, fail(parseErr.Error())
	case reply.failed:
		reason := "reported an error"
		if reply.status != "" {
			reason = "reported " + reply.status
		}
		if reply.message != "" {
			reason += ": " + reply.message
		}
		return res, fail(reason)
	case strings.TrimSpace(res.Answer) == "" && res.StdoutBytes == 0 && form.silent != "":
		return res, fail("printed nothing and exited 0; " + form.silent)
	case strings.TrimSpace(res.Answer) == "":
		return res, fail("gave an empty answer")
	case out.err != nil:
		return res, fmt.Errorf("write %s output: %w", def.Name, out.err)
	}
	return res, nil
}

// errAnswered ends an agent that has not exited Settle after its final
// event.
var errAnswered = errors.New("stopped after its final event")

// invocation is a Definition's argv filled in for one prompt.
type invocation struct {
	args    []string
	shown   []string // args with the prompt elided, for logs
	stdin   string
	file    string // the prompt file, if any
	cleanup func()
}

// prepare builds the argv, choosing where the prompt goes: argv, stdin or
// a file. A prompt over MaxArgPrompt for an argv CLI goes on stdin with
// FallbackArgs when the CLI reads stdin (or, without FallbackArgs, Args
// minus the elements holding {prompt}), else to a file when FallbackArgs
// has {prompt_file}. The file is in the temporary directory, or in
// workdir (the agent's) for a CLI with PromptFileInWorkdir.
func prepare(def Definition, prompt, model, workdir string) (invocation, error) {
	inv := invocation{cleanup: func() {}}
	tmpl := def.Args
	switch def.PromptVia {
	case PromptArg, "":
		// A prompt over the limit cannot be an argument; one that starts
		// with '-' and is an argument of its own could be taken for an
		// option, so it goes the same other way when there is one.
		long := len(prompt) > MaxArgPrompt
		dash := strings.HasPrefix(prompt, "-") && slices.Contains(def.Args, "{prompt}")
		if !long && !dash {
			break
		}
		switch {
		case def.StdinFallback && def.FallbackArgs != nil:
			tmpl, inv.stdin = def.FallbackArgs, prompt
		case def.StdinFallback:
			tmpl = slices.DeleteFunc(slices.Clone(def.Args), func(a string) bool {
				return strings.Contains(a, "{prompt}")
			})
			inv.stdin = prompt
		case hasPlaceholder(def.FallbackArgs, "{prompt_file}"):
			tmpl = def.FallbackArgs
		case long:
			return inv, fmt.Errorf("prompt of %d bytes is too long for argv (max %d) and CLI %s has neither stdin_fallback nor {prompt_file} in fallback_args",
				len(prompt), MaxArgPrompt, def.Name)
		}
	case PromptStdin:
		inv.stdin = prompt
	case PromptFile:
		if !hasPlaceholder(tmpl, "{prompt_file}") {
			return inv, fmt.Errorf("CLI %s takes its prompt from a file but its args have no {prompt_file}", def.Name)
		}
	default:
		return inv, fmt.Errorf("CLI %s: unknown prompt_via %q", def.Name, def.PromptVia)
	}

	file := ""
	if hasPlaceholder(tmpl, "{prompt_file}") {
		dir, pattern := "", "dtree-prompt-*.txt"
		if def.PromptFileInWorkdir {
			// Hidden, and named by its absolute path, which a CLI
			// confined to its workspace can check is inside.
			dir, pattern = workdir, ".dtree-prompt-*.txt"
			if dir == "" {
				dir = "."
			}
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs
			}
		}
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return inv, fmt.Errorf("write prompt file: %w", err)
		}
		file = f.Name()
		inv.file = file
		inv.cleanup = func() { _ = os.Remove(file) }
		_, err = f.WriteString(prompt)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			inv.cleanup()
			return inv, fmt.Errorf("write prompt file: %w", err)
		}
	}
	tmpl = dropModel(tmpl, model)
	// One pass each, so a prompt holding "{model}" stays as written.
	fill := strings.NewReplacer("{prompt}", prompt, "{prompt_file}", file, "{model}", model)
	shown := strings.NewReplacer("{prompt}", fmt.Sprintf("<prompt: %d bytes>", len(prompt)), "{prompt_file}", file, "{model}", model)
	for _, a := range tmpl {
		inv.args = append(inv.args, fill.Replace(a))
		inv.shown = append(inv.shown, shown.Replace(a))
	}
	return inv, nil
}

// modelFor is the model to pass the CLI: any, or for a CLI that takes only
// some (Definition.ModelValues) one of those as listed, else "" (none).
func modelFor(def Definition, model string) string {
	if model == "" || len(def.ModelValues) == 0 {
		return model
	}
	for _, v := range def.ModelValues {
		if strings.EqualFold(v, strings.TrimSpace(model)) {
			return v
		}
	}
	return ""
}

// dropModel removes the elements holding {model} when there is no model,
// and a flag just before a bare "{model}" ("-m", "{model}") with it.
func dropModel(args []string, model string) []string {
	if model != "" {
		return args
	}
	var out []string
	for i, a := range args {
		if strings.Contains(a, "{model}") {
			continue
		}
		if i+1 < len(args) && args[i+1] == "{model}" && strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

func hasPlaceholder(args []string, p string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, p) })
}

// childEnv is base minus the definition's UnsetEnv, plus its Env, plus
// what keeps CLIs from printing colour and terminal control codes.
func childEnv(base []string, def Definition) []string {
	set := map[string]string{"NO_COLOR": "1", "TERM": "dumb"}
	for k, v := range def.Env {
		set[k] = v
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok || slices.Contains(def.UnsetEnv, name) {
			continue
		}
		env = append(env, kv)
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		env = append(env, k+"="+set[k])
	}
	return env
}

// sink is Call.Output shared by stdout and stderr: one write at a time,
// and the first error remembered rather than returned, so the child's
// output is still drained.
type sink struct {
	mu  sync.Mutex
	out io.Writer
	err error
	// last is the stream written last and eol whether its output ended a
	// line: when the other stream starts writing, a marker line says so.
	last *stream
	eol  bool
}

// note writes a line of dtree's own into the output, marked as the
// stream switches are.
func (k *sink) note(text string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.out == nil || k.err != nil {
		return
	}
	line := "----- " + text + " -----\n"
	if k.last != nil && !k.eol {
		line = "\n" + line
	}
	if _, err := io.WriteString(k.out, line); err != nil {
		k.err = err
	}
	k.eol = true
}

// stream is one of the child's output streams.
type stream struct {
	sink *sink
	tail tail
	name string // "stdout" or "stderr", for the marker lines
	// split gets stdout in pieces for formats read as they arrive, and
	// seen is called after each write to it.
	split splitter
	seen  func()
}

func (s *stream) Write(p []byte) (int, error) {
	k := s.sink
	k.mu.Lock()
	defer k.mu.Unlock()
	s.tail.add(p)
	if s.split != nil {
		s.split.write(p)
		s.seen()
	}
	if k.out == nil || k.err != nil || len(p) == 0 {
		return len(p), nil
	}
	// Output starts as stdout; a switch of stream is marked on a line of
	// its own, so long.log says which lines were stderr.
	if k.last != s && (k.last != nil || s.name != "stdout") {
		marker := "----- " + s.name + " -----\n"
		if k.last != nil && !k.eol {
			marker = "\n" + marker
		}
		if _, err := io.WriteString(k.out, marker); err != nil {
			k.err = err
			return len(p), nil
		}
	}
	k.last, k.eol = s, p[len(p)-1] == '\n'
	if _, err := k.out.Write(p); err != nil {
		k.err = err
	}
	return len(p), nil
}

// tail keeps the last max bytes written to it, in a ring, and counts all.
type tail struct {
	max int
	buf []byte // grows to max, then wraps at pos
	pos int
	n   int64
}

func (t *tail) add(p []byte) {
	t.n += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.pos = 0
		return
	}
	if room := t.max - len(t.buf); room > 0 {
		k := min(room, len(p))
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(t.buf[t.pos:], p)
		p = p[k:]
		t.pos = (t.pos + k) % t.max
	}
}

func (t *tail) truncated() bool { return t.n > int64(len(t.buf)) }

// String returns the kept bytes in order, without a partial UTF-8
// character at the start when the beginning was cut off.
func (t *tail) String() string {
	s := string(t.buf[t.pos:]) + string(t.buf[:t.pos])
	if t.truncated() {
		for i := 0; i < 3 && len(s) > 0 && s[0]&0xC0 == 0x80; i++ {
			s = s[1:]
		}
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(strings.TrimSpace(s))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return clip(strings.TrimSpace(s))
}

// clip keeps error messages to one readable line.
func clip(s string) string {
	const max = 300
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
