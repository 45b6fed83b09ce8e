package procs

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"runtime/metrics"
	"strconv"
	"syscall"
	"time"
)

// startWatcher starts the watcher for runID: this program again
// (/proc/self/exe, which still runs if the file was replaced), in a
// session of its own so that no terminal or group signal meant for dtree
// reaches it, on /dev/null, in /, holding nothing of dtree's but the pipe.
func startWatcher(argv0, runID string) (proc *os.Process, start uint64, done *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, 0, nil, err
	}
	defer r.Close()
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{argv0, watchArg, runID},
		Env:         []string{watchEnv + "=3"},
		Dir:         "/",
		ExtraFiles:  []*os.File{r},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, 0, nil, err
	}
	if st, ok := readStat(strconv.Itoa(cmd.Process.Pid)); ok {
		start = st.Start
	}
	return cmd.Process, start, w, nil
}

// endRun ends every process whose environment holds entry (NAME=VALUE),
// this one aside: SIGTERM, then SIGKILL to what runs grace later. What
// starts meanwhile is found on the next pass.
func endRun(entry string, grace time.Duration) {
	self := os.Getpid()
	deadline := time.Now().Add(grace)
	termed := map[int]bool{}
	for giveUp := deadline.Add(2 * time.Second); time.Now().Before(giveUp); time.Sleep(25 * time.Millisecond) {
		left := withEnv(entry, self)
		if len(left) == 0 {
			return
		}
		late := !time.Now().Before(deadline)
		for _, pid := range left {
			if late || !termed[pid] {
				kill(pid, late)
				termed[pid] = true
			}
		}
	}
}

// withEnv lists the live processes, skip aside, whose environment (as
// they were started: /proc/PID/environ) holds entry. A process whose
// environment cannot be read (another user's) is not listed.
func withEnv(entry string, skip int) []int {
	want := []byte(entry)
	var out []int
	for _, st := range all() {
		if st.zombie || st.Pid == skip {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(st.Pid) + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, st.Pid)
				break
			}
		}
	}
	return out
}

// childLists reads the children lists of this process's threads
// (/proc/self/task/TID/children). It keeps each list open and reads it
// again from its start (pread regenerates it): a third of the cost of
// opening each anew. The threads are listed again only when the Go
// runtime's count of them changed, or a list could not be read: listing
// /proc/self/task was most of a sweep's cost (readme/performance.md). A
// thread that ended reads as an empty list, so only the count tells of
// one made since; an end and a start between two sweeps leave the count
// as it was, but Go ends a thread only when a goroutine returns locked
// to it, which dtree's runner never does (its lock is let go), and what
// a step leaves behind is given to the main thread, which lives as long
// as dtree. Not safe for concurrent use.
type childLists struct {
	open    map[string]*os.File
	tids    []string // the threads when last listed, nil to list them again
	threads uint64   // the runtime's count of threads when they were listed
	sample  []metrics.Sample
	buf     []byte
	kids    []int
}

// otherThan says whether this process has a child, alive or not yet
// reaped, other than pid (the watcher). When a list cannot be read, it
// says yes.
func (c *childLists) otherThan(pid int) bool {
	kids, ok := c.children()
	if !ok {
		return true
	}
	for _, k := range kids {
		if k != pid {
			return true
		}
	}
	return false
}

// children are this process's children, alive or not yet reaped; false
// when a list cannot be read. The slice is the next call's to reuse.
func (c *childLists) children() ([]int, bool) {
	if c.open == nil {
		c.open, c.buf = map[string]*os.File{}, make([]byte, 4096)
		c.sample = []metrics.Sample{{Name: "/sched/threads/total:threads"}}
	}
	metrics.Read(c.sample)
	threads := uint64(0)
	if c.sample[0].Value.Kind() == metrics.KindUint64 {
		threads = c.sample[0].Value.Uint64()
	}
	if c.tids == nil || threads == 0 || threads != c.threads {
		if !c.list() {
			return nil, false
		}
		c.threads = threads
	}
	c.kids = c.kids[:0]
	for _, tid := range c.tids {
		n, err := c.open[tid].ReadAt(c.buf, 0)
		if err != nil && err != io.EOF || n == len(c.buf) {
			// Unreadable (list them again next time), or too many
			// children to matter.
			if err != nil && err != io.EOF {
				c.tids = nil
			}
			return nil, false
		}
		for _, field := range bytes.Fields(c.buf[:n]) {
			if k, err := strconv.Atoi(string(field)); err == nil {
				c.kids = append(c.kids, k)
			}
		}
	}
	return c.kids, true
}

// list lists the threads and opens the children list of each, closing
// those of threads gone; false when that cannot be done.
func (c *childLists) list() bool {
	c.tids = nil
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	seen := make(map[string]bool, len(tasks))
	tids := make([]string, 0, len(tasks))
	for _, t := range tasks {
		tid := t.Name()
		seen[tid] = true
		if c.open[tid] == nil {
			f, err := os.Open("/proc/self/task/" + tid + "/children")
			if err != nil {
				continue // the thread ended since it was listed
			}
			c.open[tid] = f
		}
		tids = append(tids, tid)
	}
	for tid, f := range c.open {
		if !seen[tid] {
			f.Close()
			delete(c.open, tid)
		}
	}
	c.tids = tids
	return true
}

// close closes the lists kept open.
func (c *childLists) close() {
	for tid, f := range c.open {
		f.Close()
		delete(c.open, tid)
	}
}
