// Package runlogtest gives tests of the run log a disk that fills up: a
// runlog.Options.OpenFile whose files share a number of bytes, past which
// a write puts in what still fits and fails with ENOSPC, as a full file
// system does.
package runlogtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/dtree-dev/dtree/internal/runlog"
)

// Disk is a file system with Room bytes free. When Names is set, only the
// files of those names (such as "long.log", or ".short.json.tmp", the
// temporary file short.json is written through) take from Room; the
// others are written as usual.
type Disk struct {
	Room  int64
	Names []string

	mu sync.Mutex
}

// Open is a runlog.Options.OpenFile.
func (d *Disk) Open(name string, flag int, perm os.FileMode) (runlog.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil || !d.counts(filepath.Base(name)) {
		return f, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &file{d: d, f: f, size: st.Size()}, nil
}

func (d *Disk) counts(name string) bool {
	if len(d.Names) == 0 {
		return true
	}
	for _, n := range d.Names {
		if n == name {
			return true
		}
	}
	return false
}

// SetRoom sets the room free, while files may be written.
func (d *Disk) SetRoom(n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Room = n
}

// Left is the room still free.
func (d *Disk) Left() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Room
}

// file is one file on d, opened for appending or fresh (the log writes no
// other way).
type file struct {
	d    *Disk
	f    *os.File
	size int64
}

func (f *file) Write(p []byte) (int, error) {
	f.d.mu.Lock()
	k := int64(len(p))
	if k > f.d.Room {
		k = f.d.Room
	}
	f.d.Room -= k
	f.d.mu.Unlock()
	n, err := f.f.Write(p[:k])
	f.size += int64(n)
	if err == nil && n < len(p) {
		err = &fs.PathError{Op: "write", Path: f.f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

func (f *file) Truncate(size int64) error {
	if err := f.f.Truncate(size); err != nil {
		return err
	}
	if size < f.size {
		f.d.mu.Lock()
		f.d.Room += f.size - size
		f.d.mu.Unlock()
	}
	f.size = size
	return nil
}

func (f *file) Close() error { return f.f.Close() }
