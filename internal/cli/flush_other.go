//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package cli

// tcflush does nothing where dtree knows no way to flush a terminal's
// input: type-ahead then answers a gate.
func tcflush(int) error { return nil }
