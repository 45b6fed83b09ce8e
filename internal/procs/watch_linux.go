package procs

import (
	"bytes"
	"os"
	"os/exec"
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

// childOtherThan says whether dtree has a child, alive or not yet reaped,
// other than pid (the watcher), from the children lists of its threads.
// When they cannot be read, it says yes.
func childOtherThan(pid int) bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return true
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			return true
		}
		for _, f := range bytes.Fields(b) {
			if c, _ := strconv.Atoi(string(f)); c != pid {
				return true
			}
		}
	}
	return false
}
