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
}

// stopSignals are the signals that interrupt dtree: Ctrl-C, kill, and a
// closed terminal or lost ssh session (SIGHUP), handled alike.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// watchSignals starts handling the stop signals and SIGPIPE; the returned
// function stops it. SIGPIPE is received, not ignored, so that a write to
// a closed stderr (dtree run … 2>&1 | head -1) fails with EPIPE instead of
// killing dtree, while the agents, whose handled signals are reset when
// they start, keep the default.
func (in *interrupts) watch() (stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, stopSignals...)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				in.signal(sig)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// setDoing tells the handler what a run is doing, for the first message.
func (in *interrupts) setDoing(f func() string) {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.doing = f
	in.mu.Unlock()
}

// signal handles one stop signal.
func (in *interrupts) signal(sig os.Signal) {
	in.mu.Lock()
	in.n++
	n, doing := in.n, in.doing
	in.mu.Unlock()
	name := signalName(sig)
	if n == 1 {
		if doing != nil {
			again := "press Ctrl-C again to kill it at once"
			if sig != os.Interrupt {
				again = "signal again to kill it at once"
			}
			fmt.Fprintf(in.err, "dtree: interrupted (%s): stopping %s; %s\n", name, in.what(doing()), again)
		}
		in.cancel()
		return
	}
	if doing != nil {
		fmt.Fprintf(in.err, "dtree: interrupted again (%s): killing every process of the run now\n", name)
	}
	in.procs.Force()
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
