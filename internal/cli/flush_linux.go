package cli

import "golang.org/x/sys/unix"

// tcflush discards what was typed at terminal fd and not read yet: a
// gate's answer is what is typed once it asks (gateprompt.go).
func tcflush(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
