package runlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Latest names the newest run of a log directory: the run its latest
// link points at.
const Latest = "latest"

// FindRun is the directory of the run id (or Latest) in logDir. The
// error says what is there instead.
func FindRun(logDir, id string) (string, error) {
	if id == "" || id == Latest {
		target, err := os.Readlink(filepath.Join(logDir, Latest))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("%s has no runs", logDir)
			}
			return "", fmt.Errorf("find the latest run in %s: %w", logDir, err)
		}
		id = target
	}
	if id == "." || id == ".." || strings.ContainsAny(id, `/\`) {
		return "", fmt.Errorf("%q is not a run id: run ids look like 20261125T043702Z-1a2b3c", id)
	}
	dir := filepath.Join(logDir, id)
	if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s has no run %s", logDir, id)
		}
		return "", err
	}
	return dir, nil
}

// Going says whether the run whose directory is dir is still going: a
// dtree holds its events.jsonl. False when that cannot be told.
func Going(dir string) bool {
	ended, known := runEnded(filepath.Join(dir, "events.jsonl"))
	return known && !ended
}

// ResumeLockFile is the file in a run's directory that a dtree resume of
// that run holds locked while it goes (LockResume).
const ResumeLockFile = "resume.lock"

// ResumingError is a run that another dtree resume is resuming.
type ResumingError struct {
	Pid int // the resuming dtree's process id, 0 when unknown
}

func (e *ResumingError) Error() string {
	if e.Pid > 0 {
		return fmt.Sprintf("another dtree (pid %d) is resuming it", e.Pid)
	}
	return "another dtree is resuming it"
}
