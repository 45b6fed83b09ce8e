package agent

import (
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// builtinNames are the built-in CLIs' codenames (SPEC §4) and their
// aliases, keyed by their folded form (types.FoldName).
var builtinNames = map[string]string{
	"claude":      "claude",
	"claudecode":  "claude",
	"gemini":      "gemini",
	"codex":       "codex",
	"cursor":      "cursor",
	"cursoragent": "cursor",
	"agent":       "cursor",
	"copilot":     "copilot",
	"qodo":        "qodo",
	"opencode":    "opencode",
	"aider":       "aider",
	"amp":         "amp",
}

// Names resolves CLI names, matched case-insensitively, to their codename.
// Custom names (from settings) are added with With.
type Names struct {
	custom []string
}

// With returns Names that also know the given custom CLI names.
func (n Names) With(custom ...string) Names {
	return Names{custom: append(slices.Clone(n.custom), custom...)}
}

// Canonical returns the codename for name, and whether it is known. A
// custom name is its own codename, in lower case.
func (n Names) Canonical(name string) (string, bool) {
	f := types.FoldName(name)
	for _, c := range n.custom {
		if types.FoldName(c) == f {
			return strings.ToLower(strings.TrimSpace(c)), true
		}
	}
	c, ok := builtinNames[f]
	return c, ok
}

// List returns every known codename, sorted.
func (n Names) List() []string {
	var out []string
	for _, c := range builtinNames {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	for _, c := range n.custom {
		if l := strings.ToLower(c); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
