//go:build !linux

package atomicfile

import "os"

// replace puts the new file tmp in path's place, in one rename.
func replace(tmp, path string) error { return os.Rename(tmp, path) }
