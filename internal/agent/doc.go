// Package agent knows the agent CLIs dtree can run nodes with and runs
// them. Names resolves CLI names, so that charts naming an unknown CLI are
// caught before a run; Registry turns a name into a Definition, which says
// how to run that CLI unattended. The built-in definitions (builtin.go)
// are described in readme/clis.md, for users and for whoever changes them.
//
// Run starts one call of a Definition as a child process: never through a
// shell, with the prompt as one argv element, on stdin or in a file, with
// stdin always set (never the terminal), in a process group of its own that
// a timeout ends whole (SIGTERM, then SIGKILL after a grace period). The
// child's stdout and stderr stream to the caller's writer as they arrive;
// only bounded tails stay in memory. The answer, usage and reported errors
// are read by the decoder of the definition's output format (envelope.go):
// plain text, or JSON objects of which the last with the answer counts,
// or, for the built-ins' event streams (jsonl.go, streams.go, formats.go),
// line by line as stdout arrives, so that sums over a long session see all
// of it. A CLI that waits for a human (amp's login prompt, waiting.go) is
// stopped at once. A failure no retry can mend (a bad key, an untrusted
// folder, refused as root, not logged in: permanent.go) says so in its
// AgentError, with a hint; the quoted stderr line is the one that states
// the error (stderr.go). Secrets are redacted by whoever writes the
// output down (runlog), not here.
//
// One built-in, replay, is no program (Definition.InProcess): dtree
// answers its calls itself (internal/replay, readme/replay.md), and
// InProcessResult gives what it printed the logs and the Result of a
// text CLI's call; Run refuses it.
//
// ProbeVersion and TraitsOf tell `dtree clis` what is installed and what
// each definition does.
package agent
