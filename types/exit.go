package types

// dtree's exit codes (readme/exit-codes.md), one table for every command
// and for a run's summary (exit_code).
const (
	ExitOK          = 0   // done; a run that finished
	ExitFailed      = 1   // a node failed after its attempts
	ExitUsage       = 2   // a usage or settings error, a CLI that cannot run, logs that cannot be written
	ExitChart       = 3   // the chart has errors, or cannot be read
	ExitLimit       = 4   // max_visits or --max-steps was reached
	ExitWaiting     = 5   // the run stopped at an approval gate: dtree resume RUN --approve or --reject
	ExitInterrupted = 130 // interrupted (SIGINT, SIGTERM, SIGHUP)
)
