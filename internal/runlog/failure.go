package runlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// File is what the log writes its files through: an *os.File, or in tests
// one on a disk that fills up (runlogtest.Disk).
type File interface {
	io.Writer
	Truncate(size int64) error
	Close() error
}

// openFile opens a file as an Options.OpenFile: openOS, an *os.File.
func openFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := openOS(name, flag, perm)
	if err != nil {
		return nil, err // not a nil *os.File in the interface
	}
	return f, nil
}

// WriteError is a file of the run's logs that could not be written: the
// disk is full, or the file system went read-only. The run stops at it,
// since a run whose record is lost is not one to go on with; it is not a
// failed attempt, and no retry can mend it.
type WriteError struct {
	Path string // the file: events.jsonl, short.json or long.log in the run's directory
	Err  error  // what the system said: no space left on device
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("cannot write the run log %s: %v", e.Path, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// writeError names path and keeps the system's own error: an
// *fs.PathError or *os.LinkError says the path again, often a temporary
// file's, where the log's file is the one to name.
func writeError(path string, err error) *WriteError {
	var (
		pe *fs.PathError
		le *os.LinkError
	)
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &WriteError{Path: path, Err: err}
}

// fail remembers the first write of the log's files that failed and
// returns err as a *WriteError.
func (l *Log) fail(path string, err error) error {
	var we *WriteError
	if !errors.As(err, &we) {
		we = writeError(path, err)
	}
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.failed == nil {
		l.failed = we
	}
	return we
}

// Err returns the first write of the log's files that failed, a
// *WriteError, or nil: events.jsonl at a Flush, long.log as an agent's
// output streams in, short.json in the background. The run checks it
// before and after every agent call, and stops at it.
func (l *Log) Err() error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.failed == nil {
		return nil
	}
	return l.failed
}

// Wait waits for the short.json writes QueueShort started and returns Err.
func (l *Log) Wait() error {
	l.smu.Lock()
	for l.writing {
		l.idle.Wait()
	}
	l.smu.Unlock()
	return l.Err()
}

// Unwritten is how many events Flush has not got into events.jsonl: those
// added since, and those a failed write left out.
func (l *Log) Unwritten() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Count(l.unwritten, []byte{'\n'})
}
