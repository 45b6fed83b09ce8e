//go:build unix && !linux

package main

import "syscall"

// procAttr starts an agent in a process group of its own, as dtree's
// runner does where there is no parent-death signal.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
