//go:build unix

package testagent

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// newSession starts cmd in a session of its own, as claude's Bash tool
// runs each command: out of the agent's process group.
func newSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// onTerm takes over SIGTERM: it is ignored (and noted: recordTerm), or
// (spawnFirst) answered by starting a process in a session of its own,
// then exiting, as an agent that starts a tool while it is being stopped.
func onTerm(spawnFirst bool) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() {
		for range sigs {
			if spawnFirst {
				recordPids(spawn(childSetsid, false))
				os.Exit(143)
			}
			recordTerm()
		}
	}()
}

// ignoreTerm makes SIGTERM do nothing to this process but be noted
// (recordTerm).
func ignoreTerm() { onTerm(false) }
