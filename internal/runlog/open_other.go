//go:build !unix

package runlog

import "os"

// openOS is os.OpenFile here.
func openOS(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
