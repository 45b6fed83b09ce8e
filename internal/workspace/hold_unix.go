//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// holdFile is the file in a worktree's git directory a dtree running in
// it holds locked.
const holdFile = "dtree.lock"

// holdWorktree locks the worktree whose git directory is gitDir, held
// for a run (shared: a run and what it resumes may overlap for a moment)
// or taken to remove it (exclusive). The kernel drops the lock when the
// process ends, however it ends. ErrWorktreeInUse when it is held.
func holdWorktree(gitDir string, shared bool) (release func(), err error) {
	f, err := os.OpenFile(filepath.Join(gitDir, holdFile), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f, shared); err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// lock locks f, shared or exclusive, without waiting; f is closed when it
// cannot be, and the error is ErrWorktreeInUse when another holds it.
func lock(f *os.File, shared bool) error {
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return ErrWorktreeInUse
		}
		return err
	}
	return nil
}

// holdDir locks directory dir itself, as holdWorktree locks a worktree's
// lock file: shared for a run, exclusive to remove what is in it.
// ErrWorktreeInUse when it is held; an error when dir is a link.
func holdDir(dir string, shared bool) (release func(), err error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if err := lock(f, shared); err != nil {
		return nil, err
	}
	// Removed (or replaced) between the open and the lock: the lock holds
	// nothing anyone else looks at.
	opened, err := f.Stat()
	now, lerr := os.Lstat(dir)
	if err != nil || lerr != nil || !os.SameFile(opened, now) {
		f.Close()
		return nil, errDirGone
	}
	return func() { f.Close() }, nil
}
