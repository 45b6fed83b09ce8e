//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyResize sends on c when the terminal's window changes size
// (SIGWINCH); stop ends that.
func notifyResize(c chan<- os.Signal) (stop func()) {
	signal.Notify(c, syscall.SIGWINCH)
	return func() { signal.Stop(c) }
}
