package agent_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/agent"
)

func TestNamesCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		names  agent.Names
		in     string
		want   string
		wantOK bool
	}{
		{name: "codename", in: "claude", want: "claude", wantOK: true},
		{name: "upper case", in: "GEMINI", want: "gemini", wantOK: true},
		{name: "mixed case", in: "OpenCode", want: "opencode", wantOK: true},
		{name: "padded", in: "  codex\t", want: "codex", wantOK: true},
		{name: "alias claude-code", in: "claude-code", want: "claude", wantOK: true},
		{name: "alias cursor-agent", in: "Cursor-Agent", want: "cursor", wantOK: true},
		{name: "alias agent", in: "agent", want: "cursor", wantOK: true},
		{name: "copilot", in: "copilot", want: "copilot", wantOK: true},
		{name: "qodo", in: "qodo", want: "qodo", wantOK: true},
		{name: "aider", in: "aider", want: "aider", wantOK: true},
		{name: "amp", in: "amp", want: "amp", wantOK: true},
		{name: "alias agent upper case", in: "AGENT", want: "cursor", wantOK: true},
		{name: "CURSOR", in: "CURSOR", want: "cursor", wantOK: true},
		{name: "alias gemini-cli", in: "Gemini CLI", want: "gemini", wantOK: true},
		{name: "alias github-copilot", in: "GitHub_Copilot", want: "copilot", wantOK: true},
		{name: "alias qodo-command", in: "qodo-command", want: "qodo", wantOK: true},
		{name: "alias codex-cli", in: "CODEX-CLI", want: "codex", wantOK: true},
		{name: "unknown", in: "gpt", wantOK: false},
		{name: "empty", in: "", wantOK: false},
		{name: "prefix of a name", in: "clau", wantOK: false},
		{name: "name with a suffix", in: "claude2", wantOK: false},
		{name: "custom", names: agent.Names{}.With("MyBot"), in: "mybot", want: "mybot", wantOK: true},
		{name: "custom any case", names: agent.Names{}.With("mybot"), in: "MYBOT", want: "mybot", wantOK: true},
		{name: "custom does not hide built-ins", names: agent.Names{}.With("mybot"), in: "codex", want: "codex", wantOK: true},
		{name: "custom alias name overrides the alias", names: agent.Names{}.With("agent"), in: "agent", want: "agent", wantOK: true},
		{name: "custom unknown still unknown", names: agent.Names{}.With("mybot"), in: "yourbot", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := tt.names.Canonical(tt.in)
			assert.Equal(t, tt.wantOK, ok)
			if tt.wantOK {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestNamesList(t *testing.T) {
	t.Parallel()
	builtins := []string{"aider", "amp", "claude", "codex", "copilot", "cursor", "gemini", "opencode", "qodo", "qwen", "replay"}
	with := func(extra ...string) []string {
		out := append(slices.Clone(builtins), extra...)
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name  string
		names agent.Names
		want  []string
	}{
		// Aliases (claude-code, cursor-agent, agent, …) pick a built-in
		// but are not listed.
		{name: "built-ins only, sorted, no aliases", want: builtins},
		{name: "custom names lower-cased and sorted in", names: agent.Names{}.With("Zeta", "Alpha"), want: with("alpha", "zeta")},
		{name: "custom overriding a built-in listed once", names: agent.Names{}.With("Claude", "claude"), want: builtins},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.names.List()
			assert.Equal(t, tt.want, got)
			assert.True(t, slices.IsSorted(got))
		})
	}
}

// With must not change the Names it was called on, nor share storage
// between two Names derived from the same base.
func TestNamesWithDoesNotAlias(t *testing.T) {
	t.Parallel()
	base := agent.Names{}.With("one")
	// Two derivations from the same base: with a shared backing array the
	// second append would overwrite the first's extra name.
	a := base.With("two")
	b := base.With("three")

	tests := []struct {
		name  string
		names agent.Names
		known []string
		not   []string
	}{
		{name: "base", names: base, known: []string{"one"}, not: []string{"two", "three"}},
		{name: "a", names: a, known: []string{"one", "two"}, not: []string{"three"}},
		{name: "b", names: b, known: []string{"one", "three"}, not: []string{"two"}},
		{name: "zero value", names: agent.Names{}, not: []string{"one", "two", "three"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, n := range tt.known {
				_, ok := tt.names.Canonical(n)
				assert.True(t, ok, "%s should be known", n)
				assert.Contains(t, tt.names.List(), n)
			}
			for _, n := range tt.not {
				_, ok := tt.names.Canonical(n)
				assert.False(t, ok, "%s should not be known", n)
				assert.NotContains(t, tt.names.List(), n)
			}
		})
	}
}
