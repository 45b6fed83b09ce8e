package procs

import (
	"errors"
	"os"
	"sync"
	"time"
)

// DefaultGrace is how long a leftover process has between SIGTERM and
// SIGKILL.
const DefaultGrace = 5 * time.Second

// Proc is one of dtree's descendants.
type Proc struct {
	Pid   int
	PPid  int
	Start uint64 // start time in clock ticks since boot: a pid with another start is another process
	Name  string // argv[0]'s base name, else the kernel's comm
}

// Reaper ends the processes a run's steps leave behind. The zero value is
// not usable; New makes one. A nil *Reaper does nothing.
type Reaper struct {
	self  int
	grace time.Duration
	argv0 string // how to start the watcher (WithWatcher); "" starts none

	mu   sync.Mutex
	kept map[int]uint64 // pid -> start time of what keep_running steps left
	// running counts the calls between StepStarted and StepEnded: while
	// one runs, what another left is not told from its processes, and
	// the sweep waits (pending) for the last of them to end.
	running int
	pending bool
	forced  bool // a second interrupt: SIGKILL, no grace
	on      bool // the subreaper flag is set

	// The run's watcher (watch.go): its pid and start time, spared by
	// every sweep, the write end of its pipe, and its process.
	watcher     map[int]uint64
	watcherPid  int
	watcherPipe *os.File
	watcherProc *os.Process
	children    childLists // dtree's children, read by anyChild
}

// New returns a Reaper for this process with the given grace (0 means
// DefaultGrace).
func New(grace time.Duration) *Reaper {
	if grace <= 0 {
		grace = DefaultGrace
	}
	return &Reaper{self: pidSelf(), grace: grace, kept: map[int]uint64{}}
}

// WithWatcher makes Watch start a watcher: this program again, run as
// argv0 (the name it was started under). dtree's main sets it; a Reaper
// of a test that runs dtree in process has none, since its program is
// the test binary.
func (r *Reaper) WithWatcher(argv0 string) *Reaper {
	r.argv0 = argv0
	return r
}

// Watch starts the run's watcher (Linux): a process that ends every
// process of the run, found by DTREE_RUN_ID=runID in its environment, if
// dtree dies before EndAll (killed with SIGKILL, by the OOM killer, a
// crash). Without WithWatcher it does nothing.
func (r *Reaper) Watch(runID string) error {
	if r == nil || r.argv0 == "" {
		return nil
	}
	proc, start, done, err := startWatcher(r.argv0, runID)
	if errors.Is(err, errors.ErrUnsupported) {
		return nil // not Linux: readme/run.md says what runs on
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.watcherPid, r.watcher, r.watcherPipe, r.watcherProc = proc.Pid, map[int]uint64{proc.Pid: start}, done, proc
	r.mu.Unlock()
	return nil
}

// Subreap makes dtree the reaper of every orphan among its descendants
// (Linux: PR_SET_CHILD_SUBREAPER), so that StepEnded and EndAll can find
// them. Without it they find only what still has its parent.
func (r *Reaper) Subreap() error {
	if r == nil {
		return nil
	}
	if err := setSubreaper(); err != nil {
		return err
	}
	r.mu.Lock()
	r.on = true
	r.mu.Unlock()
	return nil
}

// StepStarted is called before an agent call or a command starts.
func (r *Reaper) StepStarted() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.running++
	r.mu.Unlock()
}

// StepEnded is called when an agent call has ended and been waited for.
// With keep, what the step left running is kept until EndAll; otherwise
// every descendant of dtree that no keep_running step left is ended.
// While other calls run (a fork's branches, readme/parallel.md), their
// processes cannot be told from what this one left: the sweep is made
// when the last of them ends.
func (r *Reaper) StepEnded(keep bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.running = max(r.running-1, 0)
	busy := r.running > 0
	sweep := !busy && (r.pending || !keep)
	r.pending = busy && (r.pending || !keep)
	r.mu.Unlock()
	if keep {
		left := reapZombies(r.self, r.spared(nil))
		r.mu.Lock()
		for _, p := range left {
			r.kept[p.Pid] = p.Start
		}
		r.mu.Unlock()
	}
	if sweep {
		r.end(false)
	}
}

// EndAll ends every descendant of dtree, kept ones included: the run is
// over.
func (r *Reaper) EndAll() {
	if r == nil {
		return
	}
	r.end(true)
	r.mu.Lock()
	pipe, proc := r.watcherPipe, r.watcherProc
	r.watcherPipe, r.watcherProc = nil, nil
	r.children.close()
	r.mu.Unlock()
	if proc == nil {
		return
	}
	// The run is over and nothing is left: the watcher has nothing to
	// do. It is killed while the pipe is open (it cannot mistake that
	// for dtree's death) and reaped, so that it is not left a zombie
	// where init reaps none (a container whose PID 1 is not an init).
	// Killing it, rather than telling it to exit, does not wait for it
	// to have started: a run may end before it has.
	_ = proc.Kill()
	exited := make(chan struct{})
	go func() {
		_, _ = proc.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
	}
	pipe.Close()
}

// spared is kept with the watcher added: what no sweep ends.
func (r *Reaper) spared(kept map[int]uint64) map[int]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.watcher) == 0 {
		return kept
	}
	out := make(map[int]uint64, len(kept)+1)
	for pid, start := range kept {
		out[pid] = start
	}
	for pid, start := range r.watcher {
		out[pid] = start
	}
	return out
}

// anyChild says whether dtree has a child, the watcher aside.
func (r *Reaper) anyChild() bool {
	if !hasChildren() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watcherPid == 0 || r.children.otherThan(r.watcherPid)
}

// Force sends SIGKILL to every descendant of dtree at once, the running
// agent included, and makes later sweeps skip the grace period: a second
// interrupt. It only signals; the agent's own Wait, and the next sweep,
// reap.
func (r *Reaper) Force() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.forced = true
	r.mu.Unlock()
	for _, p := range descendants(r.self, r.spared(nil)) {
		kill(p.Pid, true)
	}
}

// Running lists dtree's own children that are alive: the agent being
// waited for, and what keep_running steps left.
func (r *Reaper) Running() []Proc {
	if r == nil {
		return nil
	}
	var ps []Proc
	for _, p := range descendants(r.self, r.spared(nil)) {
		if p.PPid == r.self {
			ps = append(ps, p)
		}
	}
	// Only the interrupt message shows names: the sweeps after each call
	// read no command lines.
	return named(ps)
}

// end sends SIGTERM to the descendants to end (all, or those no
// keep_running step left), SIGKILL to any still alive after the grace
// period, and reaps them. A process that forks while being ended is found
// on the next pass.
func (r *Reaper) end(all bool) {
	r.mu.Lock()
	var kept map[int]uint64
	if !all {
		kept = r.kept
	} else {
		r.kept = map[int]uint64{}
	}
	forced := r.forced
	r.mu.Unlock()
	kept = r.spared(kept)
	deadline := time.Now().Add(r.grace)
	termed := map[int]bool{}
	for giveUp := deadline.Add(2 * time.Second); time.Now().Before(giveUp); {
		if !r.anyChild() {
			return
		}
		left := reapZombies(r.self, kept)
		if len(left) == 0 {
			return
		}
		late := forced || !time.Now().Before(deadline)
		for _, p := range left {
			if late || !termed[p.Pid] {
				kill(p.Pid, late)
				termed[p.Pid] = true
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
}
