package procs

import (
	"io"
	"os"
)

// The watcher (readme/run.md#what-dtree-stops-and-when): a second dtree
// process per run that ends the run's processes when dtree dies without a
// chance to do it itself (SIGKILL, the OOM killer, a crash). The subreaper
// cannot: when dtree dies, what its steps started is orphaned to an
// ancestor that knows nothing of it. The watcher is not an ancestor of
// the steps either, so it finds them by what they all inherit: the run's
// DTREE_RUN_ID in their environment.
//
// dtree starts it with the read end of a pipe whose write end only dtree
// holds, and never writes. When the run is over and everything ended
// (EndAll), dtree kills the watcher. When dtree dies first, the kernel
// closes the pipe: the watcher reads end of file and ends every process
// whose environment holds the run's id, SIGTERM then SIGKILL after the
// grace period, as EndAll would have.

// watchArg and watchEnv mark a dtree started as a watcher: argv is
// [argv0, watchArg, RUN_ID] and watchEnv names the pipe's descriptor.
const (
	watchArg = "watch-run"
	watchEnv = "DTREE_WATCH_FD"
)

// WatcherMain runs the watcher when this process was started as one (ok),
// and returns its exit code. dtree's main calls it first.
func WatcherMain() (code int, ok bool) {
	if len(os.Args) != 3 || os.Args[1] != watchArg || os.Getenv(watchEnv) != "3" {
		return 0, false
	}
	return watch(os.NewFile(3, "dtree"), os.Args[2]), true
}

// watch waits for dtree's death, then ends the run's processes.
func watch(pipe *os.File, runID string) int {
	if pipe == nil || runID == "" {
		return 2
	}
	// The read blocks until dtree is gone; nothing else ends it with end
	// of file (dtree writes nothing), and anything else is no death.
	n, err := pipe.Read(make([]byte, 1))
	pipe.Close()
	if n != 0 || err != io.EOF {
		return 2
	}
	endRun("DTREE_RUN_ID="+runID, DefaultGrace)
	return 0
}
