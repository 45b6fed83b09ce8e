//go:build !unix

package cli

import "os"

// notifyResize does nothing where there is no SIGWINCH: the live line
// takes the new width at its next redraw, a second later.
func notifyResize(chan<- os.Signal) (stop func()) { return func() {} }
