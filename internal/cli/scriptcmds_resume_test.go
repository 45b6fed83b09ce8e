package cli

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// resumeCmds are the script commands of the resume scripts.
var resumeCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"latestrun": cmdLatestRun,
}

// cmdLatestRun: latestrun VAR LOGDIR — sets VAR to the id of LOGDIR's
// latest run, for a script that must name a run after latest moved on.
func cmdLatestRun(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: latestrun VAR LOGDIR")
	}
	id, err := os.Readlink(ts.MkAbs(args[1] + "/latest"))
	ts.Check(err)
	ts.Setenv(args[0], id)
}
