//go:build !unix

package agent

import (
	"os"
	"os/exec"
	"time"
)

// Without Unix process groups only the agent itself can be stopped.

func setProcessGroup(*exec.Cmd) {}

func terminate(p *os.Process) error { return p.Kill() }

func reapGroup(int, time.Time) {}

func killGroup(int) {}

// processAlive cannot tell here: every pid counts as alive, so no prompt
// file is removed as stale.
func processAlive(int) bool { return true }
