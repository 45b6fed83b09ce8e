package agent

import (
	"context"
	"errors"
	"fmt"
	"github.com/dtree-dev/dtree/internal/response"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtree-dev/dtree/types"
)

// Bounds of what Run keeps of an agent's output; everything goes to
// Call.Output as it arrives (output is never held whole:
// readme/logs.md#longlog).
const (
	MaxStdoutTail = 1 << 20 // enough for any answer dtree parses
	MaxStderrTail = 8 << 10 // enough for an error message
)

// DefaultGrace is how long an agent has to exit after SIGTERM before its
// process group gets SIGKILL.
const DefaultGrace = 5 * time.Second

// DefaultSettle is how long an agent has to exit once its output holds its
// final event (or whole envelope) before dtree stops it as at a timeout. Some
// CLIs print their answer and never exit (opencode #44901, cursor #3588,
// copilot #286, readme/clis.md#how-every-built-in-is-run); waiting for the
// node's timeout would lose the answer. A CLI still tidying up has this long
// to finish.
const DefaultSettle = 3 * time.Second

// Call is one run of an agent CLI.
type Call struct {
	Def    Definition
	Prompt string
	Model  string // "" drops the {model} argument
	Dir    string
	// Request is what the call is for; the child gets it as DTREE_*
	// variables on top of Env.
	Request Request
	// Env is the child's whole base environment (nil is empty, not the
	// parent's): the caller passes os.Environ().
	Env     []string
	Timeout time.Duration // 0: none
	// Grace is the time between SIGTERM and SIGKILL; 0 means DefaultGrace.
	Grace time.Duration
	// Settle is how long the agent may run on after its final event;
	// 0 means DefaultSettle.
	Settle time.Duration
	// KeepRunning says what the call leaves running is to be kept until
	// the run ends (the node's keep_running); the caller's reaper reads it.
	KeepRunning bool
	// Output receives stdout and stderr as they arrive (the long log); nil
	// discards them. Writes come one at a time, never concurrently.
	Output io.Writer
	// Stream, when set, receives stdout alone as it arrives (the call's
	// raw event stream); its first write error is Result.OutputError's
	// too, and nothing more goes to it.
	Stream io.Writer
	// Observe, when set, hears what the CLI's event stream reports as it
	// arrives (Activity), in order, one at a time, from the goroutine that
	// reads stdout: it must not block. A non-nil error stops the call
	// as a timeout does (SIGTERM, then SIGKILL after Grace); Run then
	// returns an *AgentError whose Stop is that error (errors.As finds
	// it), with the usage reported until then.
	Observe func(Activity) error
	// MaxTurns, when over 0, goes to a CLI that takes it
	// (Definition.MaxTurnsArgs); 0 adds nothing.
	MaxTurns int
	// MaxCost, when over 0, is what is left of the run's cost budget, for
	// a CLI that takes it (Definition.MaxCostArgs).
	MaxCost float64
}

// Result is what Run learned of a call. It is filled as far as the call
// got, also when Run returns an error.
type Result struct {
	ExitCode int // -1 when killed by a signal, stopped by dtree, or never started
	TimedOut bool
	// StoppedAfterAnswer says dtree stopped the agent because it had not
	// exited Settle after its final event (or was still running when its
	// timeout came after that event). The call ended normally: its exit
	// status, -1 as for every call dtree stopped, does not count.
	StoppedAfterAnswer bool
	Duration           time.Duration
	Stdout             string // the last MaxStdoutTail bytes of stdout
	StdoutBytes        int64
	StderrBytes        int64
	StderrTail         string // the last MaxStderrTail bytes of stderr
	Truncated          bool   // stdout was longer than Stdout
	Answer             string
	Usage              types.Usage
	// UsageWarnings says which figures the CLI reported were not ones
	// (CheckUsage): those are unknown in Usage.
	UsageWarnings []string
	// Argv is the command line run, binary first, with the prompt
	// replaced by "<prompt: N bytes>" so it can be logged.
	Argv []string
	// OutputError is the first write to Call.Output that failed (a full
	// disk under long.log); nothing more went there. The output was still
	// read to its end, and the call is judged on it, not on this: the
	// agent did its work, and it is for the caller to say what a log it
	// could not write means.
	OutputError error
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

// Unwrap is the error that stopped the call (Stop), if any.
func (e *AgentError) Unwrap() error { return e.Stop }

// observeStop is the cause of a call stopped by Call.Observe.
type observeStop struct{ err error }

func (o *observeStop) Error() string   { return o.err.Error() }
func (e *NotFoundError) Unwrap() error { return e.Err }

// AgentError is a call that ran but failed: a non-zero exit, a timeout, an
// error the CLI reported in its output, or no usable answer.
type AgentError struct {
	Name       string
	ExitCode   int
	TimedOut   bool
	Reason     string // "exited with status 3", "timed out after 10m", …
	StderrTail string
	// Permanent is set when no retry can mend the failure: one of the
	// Permanent* kinds (PermanentAuth, …). Hint says what can.
	Permanent string
	Hint      string
	// Stop is the error of Call.Observe that stopped the call, nil when
	// nothing did; Unwrap returns it.
	Stop error
	// quoted says Reason already has what stderr said (gemini's JSON error).
	quoted bool
}

func (e *AgentError) Error() string {
	msg := e.Name + " " + e.Reason
	if line := stderrLine(e.StderrTail); line != "" && !e.quoted {
		msg += "; stderr: " + line
	}
	if e.Permanent != "" {
		msg += " (" + e.Permanent + ", not retried"
		if e.Hint != "" {
			msg += ": " + e.Hint
		}
		msg += ")"
	}
	return msg
}

// Run starts the CLI, feeds it the prompt, streams its output to
// c.Output, and reads the answer and usage from what it printed.
//
// It returns a *NotFoundError when the binary is missing, an *AgentError
// when the agent failed, and a *StoppedError (matching ctx.Err()) when ctx
// ended first. On a timeout or cancellation the agent's whole process group gets
// SIGTERM, then SIGKILL after the grace period; Run returns once the group
// is gone or killed. The same stop ends an agent that has printed its
// final event and not exited Settle later, and the call then counts as
// ended normally. After an exit of its own, what the agent left running
// is killed only if it held stdout or stderr open past the grace period
// (which is not a failure).
func Run(ctx context.Context, c Call) (Result, error) {
	def := c.Def
	res := Result{ExitCode: -1}
	if def.InProcess {
		// Its runner answers it, in process; this one has nothing to start.
		return res, fmt.Errorf("CLI %s is answered inside dtree, not by a program: %s", def.Name, def.InstallHint)
	}
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
	inv.addMaxTurns(def, c.MaxTurns)
	inv.addMaxCost(def, c.MaxCost)
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
	settleFor := c.Settle
	if settleFor <= 0 {
		settleFor = DefaultSettle
	}
	// cmdCtx also ends, with errAnswered, when the agent outstays its
	// final event, and with errWaiting when it waits for a human.
	cmdCtx, stopCmd := context.WithCancelCause(runCtx)
	defer stopCmd(nil)

	out := &sink{out: c.Output}
	stdout := &stream{sink: out, tail: tail{max: MaxStdoutTail}, name: "stdout"}
	stderr := &stream{sink: out, tail: tail{max: MaxStderrTail}, name: "stderr"}
	if model != c.Model && model == "" {
		out.note(fmt.Sprintf("dtree: model %q left out: %s takes only %s", c.Model, def.Name, strings.Join(def.ModelValues, ", ")))
	}
	var answeredAt atomic.Int64 // when the final event came, in Unix ns
	// settle stops the agent Settle after its final event, unless Wait has
	// returned by then (exited): a timer, not a goroutine waiting for
	// either, for every call.
	var (
		settleMu sync.Mutex
		settle   *time.Timer
		exited   bool
	)
	if form.split != nil {
		stdout.split = form.split(dec.line)
		stdout.seen = func() {
			if dec.final() && answeredAt.CompareAndSwap(0, time.Now().UnixNano()) {
				settleMu.Lock()
				defer settleMu.Unlock()
				if !exited {
					settle = time.AfterFunc(settleFor, func() {
						settleMu.Lock()
						defer settleMu.Unlock()
						if !exited {
							stopCmd(errAnswered)
						}
					})
				}
			}
		}
	}
	if rep, ok := dec.(reporting); ok && c.Observe != nil {
		var stopped bool
		rep.setReport(func(a Activity) {
			if stopped {
				return
			}
			if err := c.Observe(a); err != nil {
				stopped = true
				stopCmd(&observeStop{err})
			}
		})
	}
	if c.Stream != nil {
		stdout.raw = c.Stream
	}
	var waiting *waitWatch
	if rules := waitingRules[def.Name]; len(rules) > 0 {
		waiting = &waitWatch{rules: rules, stop: func() { stopCmd(errWaiting) }}
		stdout.watch = waiting
	}
	cmd := exec.CommandContext(cmdCtx, path, inv.args...)
	cmd.Dir = c.Dir
	cmd.Env = childEnv(append(c.Env[:len(c.Env):len(c.Env)], c.Request.Env()...), def)
	if inv.stdin != "" {
		cmd.Stdin = strings.NewReader(inv.stdin)
	} else if f, err := devNull(); err == nil {
		cmd.Stdin = f // empty, never the terminal, and no pipe to feed
	} // else os/exec opens /dev/null itself
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	var stoppedAt atomic.Int64 // when Cancel sent SIGTERM, in Unix ns
	cmd.Cancel = func() error {
		stoppedAt.CompareAndSwap(0, time.Now().UnixNano())
		switch {
		case context.Cause(cmdCtx) == errWaiting:
			out.note("dtree: stopping " + def.Name + ", which is waiting for a human")
		case answeredAt.Load() != 0:
			out.note("dtree: stopping " + def.Name + ", which has not exited since its final event")
		}
		return terminate(cmd.Process)
	}
	cmd.WaitDelay = grace

	start := time.Now()
	unlock := lockThread()
	if err := cmd.Start(); err != nil {
		unlock()
		// A directory that is gone fails the child's chdir, which os/exec
		// reports as the program not found.
		if _, serr := os.Stat(cmd.Dir); cmd.Dir != "" && serr != nil {
			return res, fmt.Errorf("start %s: its working directory %s is not there any more: something removed it", def.Name, cmd.Dir)
		}
		return res, fmt.Errorf("start %s: %w", def.Name, err)
	}
	waitErr := cmd.Wait()
	unlock()
	settleMu.Lock()
	exited = true
	if settle != nil {
		settle.Stop()
	}
	settleMu.Unlock()
	res.Duration = time.Since(start)
	pid := cmd.Process.Pid
	stopped := stoppedAt.Load() != 0
	// The agent had answered when dtree stopped it, for outstaying its
	// final event or for a timeout that came after it.
	cause := context.Cause(cmdCtx)
	res.StoppedAfterAnswer = stopped && answeredAt.Load() != 0 && answeredAt.Load() <= stoppedAt.Load() &&
		(cause == errAnswered || cause == timeout) && ctx.Err() == nil
	if stopped && (errors.Is(waitErr, context.Canceled) || errors.Is(waitErr, context.DeadlineExceeded)) {
		// The agent exited 0 on dtree's SIGTERM, and Wait says why dtree
		// sent it: the cases below say that in dtree's words.
		waitErr = nil
	}
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
	if stopped {
		// dtree ended it: the status it exited with on SIGTERM (143 for
		// many, 0 for some) is its reply to the signal, not an outcome,
		// so a stopped call reads as a killed one (readme/logs.md).
		res.ExitCode = -1
	}
	res.StdoutBytes, res.StderrBytes = stdout.tail.n, stderr.tail.n
	res.Truncated = stdout.tail.truncated()
	res.Stdout, res.StderrTail = stdout.tail.String(), stderr.tail.String()
	if stdout.split != nil {
		stdout.split.close()
	}
	res.OutputError = out.err
	reply, parseErr := dec.end(output{stdout: res.Stdout, total: res.StdoutBytes, truncated: res.Truncated, stderr: res.StderrTail})
	res.Answer = reply.answer
	res.Usage, res.UsageWarnings = CheckUsage(reply.usage)

	fail := func(reason string) error {
		e := &AgentError{Name: def.Name, ExitCode: res.ExitCode, TimedOut: res.TimedOut,
			Reason: reason, StderrTail: res.StderrTail,
			quoted: reply.message != "" && strings.Contains(res.StderrTail, reply.message)}
		if !res.TimedOut {
			e.Permanent, e.Hint = classify(def.Name, res.ExitCode, reply.message, response.StripANSI(res.StderrTail), response.StripANSI(res.Stdout))
		}
		return e
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, &StoppedError{Name: def.Name, Err: ctx.Err()}
	case stopped && cause == errWaiting:
		e := fail("was stopped at once: it is waiting for a human: " + waiting.line).(*AgentError)
		e.Permanent, e.Hint = waiting.match.kind, waiting.match.hint
		return res, e
	case stopped && errors.As(cause, new(*observeStop)):
		e := fail("was stopped: " + cause.Error()).(*AgentError)
		e.Stop, e.Permanent, e.Hint = cause.(*observeStop).err, "", ""
		return res, e
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
		if res.StdoutBytes == 0 && res.StderrBytes == 0 {
			reason += " and printed nothing"
			if why := silentExits[def.Name]; why != "" {
				reason += "; " + why
			}
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
	case strings.TrimSpace(res.Answer) == "" && !def.Silent:
		return res, fail("gave an empty answer")
	case quotaAnswer(res.Answer) != "":
		// A usage-limit notice in place of an answer, exit 0
		// (readme/clis.md#quota): not work to validate.
		notice := quotaAnswer(res.Answer)
		e := fail("answered with a usage-limit notice: " + notice).(*AgentError)
		e.Permanent, e.Hint = quota(notice)
		return res, e
	}
	return res, nil
}

// devNull is /dev/null opened once for reading, the stdin of every agent
// that takes its prompt another way: os/exec would open it for each call.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// StoppedError is a call that dtree ended because its caller's context
// ended: the run was interrupted. It matches the context's error
// (errors.Is(err, context.Canceled)), but says so in words a user knows.
type StoppedError struct {
	Name string
	Err  error // the context's error
}

func (e *StoppedError) Error() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return e.Name + " stopped: dtree's time ran out"
	}
	return e.Name + " stopped: dtree was interrupted"
}

func (e *StoppedError) Unwrap() error { return e.Err }

// errAnswered ends an agent that has not exited Settle after its final
// event.
var errAnswered = errors.New("stopped after its final event")

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
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
