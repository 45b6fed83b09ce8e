//go:build !unix

package runlog

import (
	"fmt"
	"os"
)

// holdRun does nothing where there is no flock: leftovers are then told
// by their age alone.
func holdRun(File) {}

// runEnded cannot tell here.
func runEnded(string) (ended, known bool) { return false, false }

// LockResume cannot lock here: two resumes of one run are not told apart.
func LockResume(string) (release func(), err error) { return func() {}, nil }

// OpenLog opens a run's log file to read, refusing what is not a plain file.
func OpenLog(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a plain file", path)
	}
	return f, nil
}
