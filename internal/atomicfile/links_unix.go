//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// Links is how many names fi's file has (its link count), 1 when that
// cannot be told. A file dtree writes into by name must have one: a
// second name put there is another file's, and writing would change it.
func Links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
