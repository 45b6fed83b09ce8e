package agent

import (
	"os"
	"strings"
)

// Preview is the command line a call would run and where its prompt would
// go, without running it (`dtree run --dry-run`). The argv shows the prompt
// elided, as the logs do, and a prompt file as "<prompt file>"; maxTurns
// is the call's max_turns (Call.MaxTurns), maxCost what is left of the
// run's cost budget (Call.MaxCost).
func Preview(def Definition, prompt, model string, maxTurns int, maxCost float64) (argv []string, onStdin bool, err error) {
	if def.InProcess {
		return []string{InProcessName(def)}, false, nil
	}
	// A prompt file meant for the working directory goes to the temporary
	// one: a dry run changes nothing there. Its path is not shown anyway.
	inv, err := prepare(def, prompt, modelFor(def, model), os.TempDir())
	if err != nil {
		return nil, false, err
	}
	defer inv.cleanup()
	inv.addMaxTurns(def, maxTurns)
	inv.addMaxCost(def, maxCost)
	argv = append([]string{def.Binary}, inv.shown...)
	if file := inv.file; file != "" {
		for i, a := range argv {
			argv[i] = strings.ReplaceAll(a, file, "<prompt file>")
		}
	}
	return argv, inv.stdin != "", nil
}
