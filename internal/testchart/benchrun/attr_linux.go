package main

import "syscall"

// procAttr starts an agent as dtree's runner does on Linux: in a process
// group of its own, with the parent-death signal.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
