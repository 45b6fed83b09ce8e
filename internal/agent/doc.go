// Package agent knows the agent CLIs dtree can run nodes with and runs
// them. Names resolves CLI names, so that charts naming an unknown CLI are
// caught before a run; Registry turns a name into a Definition, which says
// how to run that CLI unattended.
//
// Run starts one call of a Definition as a child process: never through a
// shell, with the prompt as one argv element, on stdin or in a file, with
// stdin always set (never the terminal), in a process group of its own that
// a timeout ends whole (SIGTERM, then SIGKILL after a grace period). The
// child's stdout and stderr stream to the caller's writer as they arrive;
// only bounded tails stay in memory, from which the answer and usage are
// read (the CLI's JSON envelope, or plain text). Secrets are redacted by
// whoever writes the output down (runlog), not here.
package agent
