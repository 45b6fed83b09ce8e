package agent

import (
	"slices"
	"strings"
)

// builtinNames are the built-in CLIs' codenames (SPEC §4) and their
// aliases, keyed by their folded form (see fold).
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

// fold makes the spellings of a name alike, as tags are (SPEC §2): case,
// '_', '-' and spaces do not count, so "Claude Code", "claude_code" and
// "claude-code" are one name.
func fold(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r != '_' && r != '-' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Canonical returns the codename for name, and whether it is known. A
// custom name is its own codename, in lower case.
func (n Names) Canonical(name string) (string, bool) {
	f := fold(name)
	for _, c := range n.custom {
		if fold(c) == f {
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
