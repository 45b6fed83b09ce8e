//go:build !linux

package procs

import (
	"errors"
	"os"
	"time"
)

// Without a subreaper dtree cannot see what its agents leave behind: the
// group kill of package agent is all there is.

func pidSelf() int { return 0 }

func setSubreaper() error { return errors.ErrUnsupported }

func descendants(int, map[int]uint64) []Proc { return nil }

func reapZombies(int, map[int]uint64) []Proc { return nil }

func kill(int, bool) {}

func hasChildren() bool { return true }

func named(ps []Proc) []Proc { return ps }

// No watcher either: without /proc it could not find the run's processes.

func startWatcher(string, string) (*os.Process, uint64, *os.File, error) {
	return nil, 0, nil, errors.ErrUnsupported
}

func endRun(string, time.Duration) {}

type childLists struct{}

func (*childLists) otherThan(int) bool { return true }

func (*childLists) close() {}
