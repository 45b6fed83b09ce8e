package procs

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func pidSelf() int { return os.Getpid() }

func setSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// hasChildren says whether dtree has a child process, alive or not yet
// reaped, without reaping it (WNOWAIT). When it has none, no step left
// anything: dtree is the subreaper of every orphan of its steps, so what
// a step left is a child of dtree or below one. This spares the sweep
// after a call that left nothing its read of all of /proc.
func hasChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return !errors.Is(err, unix.ECHILD)
}

// stat is what /proc/PID/stat says of a process.
type stat struct {
	Proc
	zombie bool
}

// readStat reads /proc/PID/stat: "pid (comm) state ppid … starttime …";
// comm may hold spaces and ')'.
func readStat(pid string) (stat, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return stat{}, false // exited meanwhile
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return stat{}, false
	}
	f := strings.Fields(s[close+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
	if len(f) < 20 {
		return stat{}, false
	}
	var st stat
	st.Pid, _ = strconv.Atoi(pid)
	st.PPid, _ = strconv.Atoi(f[1])
	st.Start, _ = strconv.ParseUint(f[19], 10, 64)
	st.Name = s[open+1 : close]
	st.zombie = f[0] == "Z" || f[0] == "X"
	return st, true
}

// all reads every process in /proc.
func all() []stat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []stat
	for _, e := range entries {
		if n := e.Name(); n[0] < '0' || n[0] > '9' {
			continue
		}
		if st, ok := readStat(e.Name()); ok {
			out = append(out, st)
		}
	}
	return out
}

// descendants lists root's live descendants, not descending into a kept
// process (pid and start time in kept): what it started is kept with it.
func descendants(root int, kept map[int]uint64) []Proc {
	return below(all(), root, kept)
}

// below is descendants of a snapshot of /proc.
func below(list []stat, root int, kept map[int]uint64) []Proc {
	children := map[int][]stat{}
	for _, st := range list {
		children[st.PPid] = append(children[st.PPid], st)
	}
	var out []Proc
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if start, ok := kept[c.Pid]; ok && start == c.Start {
				continue
			}
			if c.Pid == root {
				continue
			}
			queue = append(queue, c.Pid)
			if !c.zombie {
				out = append(out, c.Proc)
			}
		}
	}
	return out
}

// named gives each of ps the base name of the program it runs.
func named(ps []Proc) []Proc {
	for i := range ps {
		ps[i].Name = argv0(ps[i].Pid, ps[i].Name)
	}
	return ps
}

// argv0 is the base name of the program a process runs, from its command
// line; comm (cut at 15 bytes) when that cannot be read.
func argv0(pid int, comm string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return comm
	}
	a, _, _ := strings.Cut(string(b), "\x00")
	if i := strings.LastIndexByte(a, '/'); i >= 0 {
		a = a[i+1:]
	}
	if a == "" {
		return comm
	}
	return a
}

// reapZombies waits for each of root's children that has exited, and
// returns root's live descendants as descendants would (one read of /proc
// for both). Only zombies are waited for, each by its pid: a live child
// (the agent that os/exec is waiting for) is never touched.
func reapZombies(root int, kept map[int]uint64) []Proc {
	list := all()
	for _, st := range list {
		if st.PPid == root && st.zombie {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(st.Pid, &ws, unix.WNOHANG, nil)
		}
	}
	return below(list, root, kept)
}

func kill(pid int, hard bool) {
	sig := unix.SIGTERM
	if hard {
		sig = unix.SIGKILL
	}
	_ = unix.Kill(pid, sig)
}
