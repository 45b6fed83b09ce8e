//go:build unix && !linux

package agent

import "syscall"

func parentDeath(*syscall.SysProcAttr) {}
