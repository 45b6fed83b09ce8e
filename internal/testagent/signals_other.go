//go:build !unix

package testagent

import "os/exec"

func newSession(*exec.Cmd) {}

func onTerm(bool) {}

func ignoreTerm() {}
