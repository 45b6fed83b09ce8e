package agent

import (
	"runtime"
	"syscall"
)

// parentDeath makes the kernel SIGKILL the agent when dtree dies, even by
// SIGKILL or a crash (PR_SET_PDEATHSIG). SIGKILL, not SIGTERM: an agent
// that ignored SIGTERM would outlive dtree. What the agent started gets no
// signal from the kernel; dtree ends it when it can, and the run's
// watcher when dtree dies (package procs).
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// lockThread keeps the goroutine that starts and waits for an agent on one
// OS thread until unlock: the kernel sends the parent-death signal when the
// *thread* that forked the agent ends, not the process (golang/go#27505),
// and Go ends a thread when a goroutine locked to it returns. A thread
// locked here runs nothing else, so nothing can end it under the agent.
func lockThread() (unlock func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
