package cli

import (
	"os"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// canMountTmpfs says whether the tests may mount a file system (root, or a
// user namespace that allows it): the [tmpfs] condition. Its pages must be
// 4 KiB: run_disk_full counts on an event of 8 KiB not fitting in the room
// left in a file's last page.
func canMountTmpfs() bool {
	if os.Getpagesize() > 4096 {
		return false
	}
	dir, err := os.MkdirTemp("", "dtree-tmpfs-")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16k"); err != nil {
		return false
	}
	return syscall.Unmount(dir, 0) == nil
}

// cmdTmpfs: tmpfs DIR SIZE — a file system of SIZE bytes (tmpfs's size=,
// such as 512k) on DIR, a disk that fills up, unmounted when the script
// ends. Guard it with [tmpfs].
func cmdTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: tmpfs DIR SIZE")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+args[1]))
	ts.Defer(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
}
