// Package procs ends what a run's steps leave running
// (readme/run.md#what-dtree-stops-and-when). On Linux dtree makes itself a
// child subreaper, so every process an agent starts stays dtree's descendant
// whatever it does (a new session, a double fork): orphans are reparented to
// dtree, not to init. After each agent call a Reaper finds dtree's
// descendants in /proc and ends them (SIGTERM, a grace period, SIGKILL)
// unless the step keeps them running; at the run's end it ends everything.
// A watcher process (watch.go) ends the run's processes, found by the
// run's id in their environment, when dtree dies without a chance to.
// Elsewhere a Reaper does nothing: the agent's process group is all dtree can
// stop.
package procs
