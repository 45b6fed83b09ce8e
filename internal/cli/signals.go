package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dtree-dev/dtree/internal/procs"
)

// interrupts turns the signals that stop dtree (SIGINT, SIGTERM, SIGHUP)
// into the end of the commands' context. The first says at once what it
// stops; a second kills every process of the run at once (SIGKILL), and
// the run still finalizes its logs.
type interrupts struct {
	err    io.Writer
	cancel context.CancelFunc
	procs  *procs.Reaper

	mu    sync.Mutex
	n     int
	doing func() string // what the run is doing ("node 2 \"Fix it\""); nil outside a run
	say   func(string)  // prints a line among the run's progress; nil: to err
	// lines are printed by a goroutine of their own: a stderr that blocks
	// (a paused terminal) must not hold up a stop, nor the next signal.
	lines chan func()
}

// stopSignals are the signals that interrupt dtree: Ctrl-C, kill, and a
// closed terminal or lost ssh session (SIGHUP), handled alike.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// watched leaves out of sigs those dtree was started with ignored: nohup
// ignores SIGHUP so that a run outlives its terminal, and a shell starts a
// background job with SIGINT ignored. signal.Notify would handle them
// again, so that the hangup nohup was meant to survive stopped the run.
func watched(sigs []os.Signal) []os.Signal {
	var out []os.Signal
	for _, s := range sigs {
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// watchSignals starts handling the stop signals and SIGPIPE; the returned
// function stops it. SIGPIPE is received, not ignored, so that a write to
// a closed stderr (dtree run … 2>&1 | head -1) fails with EPIPE instead of
// killing dtree, while the agents, whose handled signals are reset when
// they start, keep the default.
func (in *interrupts) watch() (stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, watched(stopSignals)...)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	done := make(chan struct{})
	in.lines = make(chan func(), 4)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for f := range in.lines {
			f()
		}
	}()
	var handling sync.WaitGroup
	handling.Go(func() {
		for {
			select {
			case sig := <-sigs:
				in.signal(sig)
			case <-done:
				return
			}
		}
	})
	return func() {
		signal.Stop(sigs)
		close(done)
		handling.Wait()
		// The lines said before dtree exits, unless stderr is stuck.
		close(in.lines)
		select {
		case <-printed:
		case <-time.After(time.Second):
		}
	}
}

// setDoing tells the handler what a run is doing, for the first message,
// and how to print among its progress (above a live line).
func (in *interrupts) setDoing(doing func() string, say func(string)) {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.doing, in.say = doing, say
	in.mu.Unlock()
}

// signal handles one stop signal.
func (in *interrupts) signal(sig os.Signal) {
	in.mu.Lock()
	in.n++
	n, doing, say := in.n, in.doing, in.say
	in.mu.Unlock()
	if say == nil {
		say = func(line string) { fmt.Fprintln(in.err, line) }
	}
	if lines := in.lines; lines != nil {
		direct := say
		say = func(line string) {
			select {
			case lines <- func() { direct(line) }:
			default: // stderr is stuck: the words go, the stop does not
			}
		}
	}
	name := signalName(sig)
	if n == 1 {
		msg := ""
		if doing != nil {
			again := "press Ctrl-C again to kill it at once"
			if sig != os.Interrupt {
				again = "signal again to kill it at once"
			}
			msg = fmt.Sprintf("dtree: interrupted (%s): stopping %s; %s", name, in.what(doing()), again)
		}
		in.cancel()
		if msg != "" {
			say(msg)
		}
		return
	}
	in.procs.Force()
	if doing != nil {
		say(fmt.Sprintf("dtree: interrupted again (%s): killing every process of the run now", name))
	}
}

// what names what a stop ends: the run's step and the processes it runs.
func (in *interrupts) what(step string) string {
	if step == "" {
		step = "the run"
	}
	var ps []string
	for _, p := range in.procs.Running() {
		ps = append(ps, fmt.Sprintf("%s, pid %d", p.Name, p.Pid))
	}
	if len(ps) > 0 {
		step += " (" + strings.Join(ps, "; ") + ")"
	}
	return step
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}
