//go:build unix

package runlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dtree-dev/dtree/internal/atomicfile"
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
	f, err := OpenLog(events)
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

// LockResume marks the run whose directory is dir as being resumed, until
// release is called or the process ends, however it ends: a lock on its
// resume.lock, which holds the resuming dtree's pid. A second resume of
// the run gets a *ResumingError, however close together the two start
// (readme/resume.md#what-is-refused).
func LockResume(dir string) (release func(), err error) {
	// Not through a link, and only a file of its own: the pid is written
	// into it, and a resume.lock linked to another file (a run directory
	// is a file anyone may have edited) wrote it over that file.
	path := filepath.Join(dir, ResumeLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (remove it if no dtree is resuming the run)", path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || atomicfile.Links(fi) != 1 {
		f.Close()
		return nil, fmt.Errorf("%s is not a file of dtree's (a link, or not a plain file): remove it if no dtree is resuming the run", path)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b, _ := io.ReadAll(io.LimitReader(f, 32))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &ResumingError{Pid: pid}
		}
		return nil, err
	}
	// The pid is for the message of a resume refused; without it, that
	// message says "another dtree".
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

// openNonblock keeps the open of a FIFO from waiting for a writer, so
// that OpenLog can refuse it.
const openNonblock = unix.O_NONBLOCK
