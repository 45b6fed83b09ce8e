//go:build !linux

package procs

import "errors"

// Without a subreaper dtree cannot see what its agents leave behind: the
// group kill of package agent is all there is.

func pidSelf() int { return 0 }

func setSubreaper() error { return errors.ErrUnsupported }

func descendants(int, map[int]uint64) []Proc { return nil }

func reapZombies(int, map[int]uint64) []Proc { return nil }

func kill(int, bool) {}

func hasChildren() bool { return true }

func named(ps []Proc) []Proc { return ps }
