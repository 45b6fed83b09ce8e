package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
)

// The table's cells say in a few words what the JSON says in fields.
func TestCLIsCells(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, got, want string
	}{
		{name: "usage in full", got: usageCell([]string{"input_tokens", "output_tokens", "cost_usd", "duration_ms"}), want: "tokens, cost, duration"},
		{name: "output tokens only", got: usageCell([]string{"output_tokens", "duration_ms"}), want: "output tokens, duration"},
		{name: "input tokens only", got: usageCell([]string{"input_tokens"}), want: "input tokens"},
		{name: "no usage", got: usageCell([]string{}), want: "none"},
		{name: "model flag with =", got: modelCell("--model={model}"), want: "--model"},
		{name: "model flag apart", got: modelCell("-m {model}"), want: "-m"},
		{name: "model positional", got: modelCell("{model}"), want: "(positional)"},
		{name: "no model flag", got: modelCell(""), want: "-"},
		{name: "argv, stdin if long", got: promptCell(cliInfo{Prompt: "argv", LongPrompt: "stdin"}), want: "argv (stdin if long)"},
		{name: "stdin", got: promptCell(cliInfo{Prompt: "stdin", LongPrompt: "stdin"}), want: "stdin"},
		{name: "argv only", got: promptCell(cliInfo{Prompt: "argv"}), want: "argv (no long prompts)"},
		{name: "default and custom", got: nameCell(cliInfo{Name: "x", Default: true, Custom: true}), want: "x (default, custom)"},
		{name: "key set", got: keyCell(cliInfo{KeyVars: []agent.KeyVar{{Name: "A"}, {Name: "B", Set: true}}}), want: "B"},
		{name: "key not set", got: keyCell(cliInfo{KeyVars: []agent.KeyVar{{Name: "A"}}}), want: "not set"},
		{name: "no key", got: keyCell(cliInfo{KeyVars: []agent.KeyVar{}}), want: "-"},
		{name: "not installed", got: versionCell(cliInfo{}), want: "-"},
		{name: "binary found", got: binaryCell(cliInfo{Binary: "agent", AltBinaries: []string{"agent"}, Installed: true}), want: "agent"},
		{name: "binary looked for under two names", got: binaryCell(cliInfo{Binary: "cursor-agent", AltBinaries: []string{"agent"}}), want: "cursor-agent|agent"},
		{name: "installed, no version", got: versionCell(cliInfo{Installed: true, VersionError: "--version exited with status 2"}), want: "?"},
		{name: "long version cut", got: versionCell(cliInfo{Installed: true, Version: strings.Repeat("é", 50)}), want: strings.Repeat("é", 39) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.got)
		})
	}
}

// --json lists every CLI once, with the key variables read through the
// App's environment, and arrays that are never null.
func TestCLIsJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "dtree.yaml")
	require.NoError(t, os.WriteFile(config, []byte("default_cli: mine\nclis:\n  mine:\n    binary: dtree-no-such-cli\n    prompt_via: stdin\n"), 0o644))
	var out, errs bytes.Buffer
	env := map[string]string{"CODEX_API_KEY": "k", "HOME": dir, "XDG_CONFIG_HOME": dir}
	a := &App{In: strings.NewReader(""), Out: &out, Err: &errs, Getenv: func(k string) string { return env[k] }}
	code := a.Run(t.Context(), []string{"clis", "--json", "--config", config})
	require.Equal(t, 0, code, errs.String())
	assert.Empty(t, errs.String())
	var r clisReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	assert.Equal(t, 1, r.FormatVersion)
	byName := map[string]cliInfo{}
	for _, c := range r.CLIs {
		_, dup := byName[c.Name]
		assert.False(t, dup, "%s listed twice", c.Name)
		byName[c.Name] = c
	}
	for _, name := range []string{"aider", "amp", "claude", "codex", "copilot", "cursor", "gemini", "mine", "opencode", "qodo", "qwen"} {
		assert.Contains(t, byName, name)
	}
	assert.True(t, byName["codex"].KeySet)
	assert.False(t, byName["claude"].KeySet)
	assert.False(t, byName["claude"].Default)
	mine := byName["mine"]
	assert.True(t, mine.Default && mine.Custom && !mine.Builtin)
	assert.False(t, mine.Installed)
	assert.Equal(t, "not installed", mine.VersionError)
	assert.Equal(t, "text", mine.Output)
	assert.NotContains(t, out.String(), "null", "arrays are never null")
}
