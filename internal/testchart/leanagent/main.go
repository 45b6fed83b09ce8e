// Command leanagent is the leanest agent dtree can run: installed as
// "claude", it prints one fixed Claude Code JSON envelope saying the step
// is completed and exits, reading nothing. benchrun -agent lean times dtree
// with it, so that what dtree adds to each call is a larger part of the
// whole than with the scripted fake agent.
package main

import "os"

const envelope = `{"type":"result","subtype":"success","is_error":false,` +
	`"result":"{\"completed\": true, \"comments\": []}","session_id":"lean","num_turns":1,` +
	`"duration_ms":1,"total_cost_usd":0,"usage":{"input_tokens":1,"output_tokens":1}}` + "\n"

func main() {
	if _, err := os.Stdout.WriteString(envelope); err != nil {
		os.Exit(1)
	}
}
