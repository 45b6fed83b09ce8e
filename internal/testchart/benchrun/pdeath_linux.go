package main

import "syscall"

// parentDeath asks for the parent-death signal, as dtree's runner does.
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
