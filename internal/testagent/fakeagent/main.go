// Command fakeagent is the scripted test agent as a standalone program,
// for benchmarks that time dtree against a shell loop calling the same
// agent (see internal/testchart/benchrun).
package main

import (
	"os"

	"github.com/dtree-dev/dtree/internal/testagent"
)

func main() {
	os.Exit(testagent.Main())
}
