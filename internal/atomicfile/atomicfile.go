// Package atomicfile is how dtree replaces a file: every file it writes
// whole (run logs, pictures, converted charts, the settings file) goes
// through a temporary file beside it that then takes its place in one
// step, so a reader, or a dtree killed mid-write, sees the old file or the
// new one, never half of one, and a failed write leaves the old file as
// it was (readme/dev.md#one-owner-each).
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is what a write needs of an open file; tests give a disk that
// fills up (runlog's).
type File interface {
	io.Writer
	Close() error
}

// Options tune a write. The zero value writes with os.OpenFile, no
// fsync, through a temporary file with a name of its own.
type Options struct {
	// Open opens the temporary file (os.OpenFile when nil).
	Open func(name string, flag int, perm os.FileMode) (File, error)
	// Sync flushes the new file to disk before it takes path's place: for
	// a file that is written rarely and must survive a crash (settings).
	Sync bool
	// Rewrite names the temporary file ".NAME.tmp", one per file, for a
	// file one writer rewrites often (short.json after every node): one
	// left over from a crash is found and replaced. Otherwise each write
	// has a temporary file of its own (".NAME.*.tmp"), so that two
	// writers of one path do not meet.
	Rewrite bool
	// Reuse, with Rewrite, keeps the file a write replaces at ".NAME.tmp"
	// and writes the next version into it when no one has it open (a
	// write lease says so: Linux's F_SETLEASE), rather than making a file
	// for each write; otherwise a fresh one as before. Making a file is
	// what a rewrite after every node costs most on a file system that
	// steps over recently deleted inodes (readme/performance.md#running-a-chart).
	// The caller removes ".NAME.tmp" when it is done (Remove).
	Reuse bool
	// Follow is for a file the user named (-o, --junit, their settings
	// file): a symbolic link at path is followed, the file it points at
	// replaced and the link kept; and a path that is there and is not a
	// regular file (a device, /dev/null or what /dev/stdout points at; a
	// FIFO) is written in place, as a shell's > writes it: replacing it
	// would put a regular file in the device's place, for every program
	// when dtree runs as root. Not for the files dtree names itself in
	// a run's directory, where a link an agent planted must not lead a
	// write elsewhere.
	Follow bool
}

// TempOf is the temporary file of path's writes with Rewrite, which one
// with Reuse leaves for the next to write into.
func TempOf(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+".tmp")
}

// Write replaces path with what write writes, with mode perm. An error of
// write's own is returned as it is; the file's are "write PATH: …".
func Write(path string, perm os.FileMode, o Options, write func(io.Writer) error) error {
	return replaceWith(path, perm, o, write, true)
}

// WriteBytes replaces path with data, in one write (no buffer between:
// short.json is rewritten after every node, and a 64 KiB buffer each time
// was most of what a run allocated).
func WriteBytes(path string, data []byte, perm os.FileMode, o Options) error {
	return replaceWith(path, perm, o, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, false)
}

// WriteParts is WriteBytes of parts written one after the other, without
// joining them first.
func WriteParts(path string, parts [][]byte, perm os.FileMode, o Options) error {
	return replaceWith(path, perm, o, func(w io.Writer) error {
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return nil
	}, false)
}

// replaceWith is Write; with callers set, write is the caller's, through
// a buffer, and an error of its is the caller's own, not the file's;
// without, it is WriteBytes' one write, straight to the file.
func replaceWith(path string, perm os.FileMode, o Options, write func(io.Writer) error, callers bool) error {
	open := o.Open
	if open == nil {
		open = func(name string, flag int, perm os.FileMode) (File, error) { return os.OpenFile(name, flag, perm) }
	}
	if o.Follow {
		if p, err := filepath.EvalSymlinks(path); err == nil {
			path = p // a link that leads nowhere is replaced, as before
		}
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return writeInPlace(path, perm, open, write, callers)
		}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var (
		f      File
		tmp    string
		err    error
		reused bool
	)
	if o.Rewrite {
		// A fresh file, or with Reuse the old one once no reader has it:
		// after replace exchanges them, tmp is the old file, and a reader
		// may still have it open.
		tmp = filepath.Join(dir, "."+base+".tmp")
		if o.Reuse {
			f = reuse(open, tmp, perm)
			reused = f != nil
		}
		if f == nil {
			f, err = open(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
			if errors.Is(err, fs.ErrExist) {
				_ = os.Remove(tmp)
				f, err = open(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
			}
		}
	} else {
		var t *os.File
		if t, err = os.CreateTemp(dir, "."+base+".*.tmp"); err == nil {
			tmp = t.Name()
			_ = t.Close()
			f, err = open(tmp, os.O_WRONLY|os.O_TRUNC, perm)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	var c *counted
	if reused {
		// Written over from its start, not emptied first: the old
		// version's blocks are written into rather than freed and
		// allocated again, and only a tail past the new end is cut.
		c = &counted{File: f}
		f = c
	}
	own, err := fill(f, write, callers)
	if own {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if c != nil && err == nil {
		err = c.cut()
	}
	if s, ok := f.(interface{ Sync() error }); ok && o.Sync && err == nil {
		err = s.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm) // CreateTemp's 0600, the umask, or what a reused file was given
	}
	if err == nil {
		err = replace(tmp, path, o.Rewrite && o.Reuse)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeInPlace writes to path as it is, a device or a FIFO, which has no
// old content to keep and cannot be replaced without harm.
func writeInPlace(path string, perm os.FileMode, open func(string, int, os.FileMode) (File, error), write func(io.Writer) error, callers bool) error {
	f, err := open(path, os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	own, err := fill(f, write, callers)
	if own {
		_ = f.Close()
		return err
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// counted is a reused file being written over: how much was written,
// and the old version's tail past it cut at the end.
type counted struct {
	File
	n int64
}

func (c *counted) Write(p []byte) (int, error) {
	n, err := c.File.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *counted) Sync() error {
	if s, ok := c.File.(interface{ Sync() error }); ok {
		return s.Sync()
	}
	return nil
}

// cut ends the file where this version ends.
func (c *counted) cut() error {
	t, ok := c.File.(interface{ Truncate(int64) error })
	if !ok {
		return errors.New("the file cannot be cut to its new length")
	}
	return t.Truncate(c.n)
}

// fill writes f's content. With callers, write is the caller's, through
// a buffer, and an error of its own is returned as it is, own true;
// without, it is WriteBytes' one write, straight to the file.
func fill(f File, write func(io.Writer) error, callers bool) (own bool, err error) {
	if !callers {
		return false, write(f)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return true, err
	}
	return false, bw.Flush()
}
