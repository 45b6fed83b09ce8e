//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package cli

import "golang.org/x/sys/unix"

// fread is <sys/fcntl.h>'s FREAD: TIOCFLUSH with it flushes the input
// queue, as tcflush(fd, TCIFLUSH) does.
const fread = 1

// tcflush discards what was typed at terminal fd and not read yet: a
// gate's answer is what is typed once it asks (gateprompt.go).
func tcflush(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, fread) }
