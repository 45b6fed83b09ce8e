//go:build unix

package agent

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// setProcessGroup puts the agent in a process group of its own, so that a
// timeout reaches everything it started, and on Linux ties it to dtree's
// life (parentDeath).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
}

// terminate asks the agent's whole group to stop (cmd.Cancel).
func terminate(p *os.Process) error {
	err := syscall.Kill(-p.Pid, syscall.SIGTERM)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// reapGroup waits until the group led by pid is gone or the deadline has
// passed, then kills what is left.
func reapGroup(pid int, deadline time.Time) {
	for groupAlive(pid) {
		left := time.Until(deadline)
		if left <= 0 {
			killGroup(pid)
			return
		}
		time.Sleep(min(25*time.Millisecond, left))
	}
}

// groupAlive reports whether the group led by pgid has a member that is not
// a zombie. A killed orphan can linger as a zombie where PID 1 does not
// reap, and it keeps the group in existence; where /proc cannot tell,
// such a group counts as alive and gets SIGKILL at the deadline.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid pgrp …"; comm may hold spaces and ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) >= 3 && f[2] == want && f[0] != "Z" {
			return true
		}
	}
	return false
}

// killGroup sends SIGKILL to the group led by pid; an empty group is fine.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// processAlive reports whether a process with this pid exists (a zombie,
// or one of another user, counts).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
