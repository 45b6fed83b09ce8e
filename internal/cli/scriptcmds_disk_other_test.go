//go:build !linux

package cli

import "github.com/rogpeppe/go-internal/testscript"

// canMountTmpfs: only Linux has tmpfs to fill.
func canMountTmpfs() bool { return false }

func cmdTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("tmpfs: Linux only; guard the script with [tmpfs]")
}
