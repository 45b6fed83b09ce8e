//go:build !unix

package main

import "syscall"

// procAttr is nothing special here.
func procAttr() *syscall.SysProcAttr { return nil }
