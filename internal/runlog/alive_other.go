//go:build !unix

package runlog

// holdRun does nothing where there is no flock: leftovers are then told
// by their age alone.
func holdRun(File) {}

// runEnded cannot tell here.
func runEnded(string) (ended, known bool) { return false, false }

// LockResume cannot lock here: two resumes of one run are not told apart.
func LockResume(string) (release func(), err error) { return func() {}, nil }

// openNonblock is nothing here: a system without O_NONBLOCK on open.
const openNonblock = 0
