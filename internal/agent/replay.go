package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The replay agent is dtree itself, started as `dtree agent replay`: it
// answers from an answers file (internal/replay, readme/replay.md) through
// the same runner as every other CLI.
func init() {
	builtinNames["replay"] = "replay"
	builtins["replay"] = Definition{
		Name:        "replay",
		Binary:      selfPath(),
		Args:        []string{"agent", "replay"},
		PromptVia:   PromptStdin,
		Output:      OutputText,
		InstallHint: "replay is built into dtree; pass --answers FILE",
	}
}

// selfPath is how to start this dtree again: the name it was started by
// when that resolves (a link named dtree stays one), else the executable.
func selfPath() string {
	arg0 := os.Args[0]
	if strings.ContainsRune(arg0, os.PathSeparator) {
		if abs, err := filepath.Abs(arg0); err == nil {
			return abs
		}
	} else if p, err := exec.LookPath(arg0); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return arg0
}
