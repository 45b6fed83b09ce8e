package runlog

import (
	"fmt"
	"os"
)

// OpenLog opens a run's log file to read, refusing what is not a plain
// file: a run directory is a file anyone may have edited, and a FIFO put
// in place of events.jsonl held dtree resume in its open for good (the
// open does not wait for a writer, and the check refuses it).
func OpenLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a plain file", path)
	}
	return f, nil
}
