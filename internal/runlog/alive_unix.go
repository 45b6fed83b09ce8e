//go:build unix

package runlog

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// holdRun marks the run as going for as long as its dtree lives: a lock
// on its events.jsonl, which the kernel drops when the process ends,
// however it ends (exit, crash, SIGKILL).
func holdRun(f File) {
	if of, ok := f.(interface{ Fd() uintptr }); ok {
		_ = unix.Flock(int(of.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
}

// runEnded says whether the run whose events.jsonl is events has ended:
// no dtree holds its lock. known is false when that cannot be told.
func runEnded(events string) (ended, known bool) {
	f, err := os.Open(events)
	if err != nil {
		return false, false
	}
	defer f.Close()
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); {
	case err == nil:
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return true, true
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, true
	}
	return false, false
}
