//go:build unix

package runlog

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openOS is os.OpenFile for the log's own files, in two system calls
// where os.OpenFile takes six: it tries each file it opens with the
// poller (F_SETFL O_NONBLOCK, an epoll_ctl that a regular file refuses,
// F_SETFL back), and a run opens two files a step, its stream file and
// short.json's next version (readme/performance.md).
func openOS(name string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := unix.Open(name, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}
