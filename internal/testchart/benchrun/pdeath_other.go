//go:build !linux

package main

import "syscall"

// parentDeath is nothing where there is no parent-death signal.
func parentDeath(*syscall.SysProcAttr) {}
