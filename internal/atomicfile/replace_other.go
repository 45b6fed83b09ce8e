//go:build !linux

package atomicfile

import "os"

// replace puts the new file tmp in path's place, in one rename: nothing is
// kept at tmp to reuse.
func replace(tmp, path string, _ bool) error { return os.Rename(tmp, path) }

// reuse cannot tell here whether a reader has the old file open.
func reuse(func(string, int, os.FileMode) (File, error), string, os.FileMode) File { return nil }
