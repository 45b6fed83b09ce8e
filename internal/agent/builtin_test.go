package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every built-in must run unattended on the first try: these are the
// properties each definition needs for that, checked on all of them (the
// exact argv of each is checked end to end in testdata/script/builtin_*).
func TestBuiltinsRunUnattended(t *testing.T) {
	t.Parallel()
	short := "Fix the test.\n\nAnswer with JSON."
	long := strings.Repeat("x", MaxArgPrompt) + "\nmore"
	dash := "- fix the test\n- then answer"
	for name, def := range builtins {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := formatOf(def)
			require.NoError(t, err)
			assert.NotNil(t, f.new(def))
			c, ok := Names{}.Canonical(strings.ToUpper(name))
			assert.True(t, ok && c == name, "the name resolves in any case")
			if def.InProcess { // replay: answered inside dtree, no program
				return
			}
			assert.NotEmpty(t, def.Binary)
			assert.NotEmpty(t, def.KeyVars)
			assert.Contains(t, def.InstallHint, "install")

			// The model goes in its own flag, and only when set.
			dir := t.TempDir()
			with, err := prepare(def, short, "some-model", dir)
			require.NoError(t, err)
			without, err := prepare(def, short, "", dir)
			require.NoError(t, err)
			assert.True(t, slices.ContainsFunc(with.args, func(a string) bool { return strings.Contains(a, "some-model") }), "model missing: %q", with.args)
			assert.Len(t, without.args, len(with.args)-1, "exactly one argument carries the model")
			for _, a := range without.args {
				assert.NotContains(t, a, "{", "a placeholder left in %q", without.args)
			}

			// A short prompt is one argument, or the whole of stdin.
			if def.PromptVia == PromptStdin {
				assert.Equal(t, short, without.stdin)
			} else {
				assert.Contains(t, without.args, short)
				assert.Empty(t, without.stdin)
			}

			// A long prompt, or one that looks like an option, is never an
			// argument: it goes on stdin or into a file.
			for _, p := range []string{long, dash} {
				inv, err := prepare(def, p, "", dir)
				require.NoError(t, err)
				defer inv.cleanup()
				for _, a := range inv.args {
					assert.NotEqual(t, p, a)
					assert.False(t, strings.HasPrefix(a, "- fix"), "the prompt is an argument: %q", inv.args)
				}
				switch {
				case inv.stdin != "":
					assert.Equal(t, p, inv.stdin)
				default:
					require.NotEmpty(t, inv.file, "the prompt went neither on stdin nor into a file")
					b, err := os.ReadFile(inv.file)
					require.NoError(t, err)
					assert.True(t, bytes.Equal([]byte(p), b))
					assert.True(t, slices.ContainsFunc(inv.args, func(a string) bool { return strings.Contains(a, inv.file) }))
					// A CLI told to read the file with its own tools finds
					// it in its workspace; others' stay out of it.
					want := filepath.Clean(os.TempDir())
					if slices.ContainsFunc(def.FallbackArgs, func(a string) bool { return strings.Contains(a, filePrompt) }) {
						assert.True(t, def.PromptFileInWorkdir, "a file the agent reads itself must be in its workspace")
						want = dir
					}
					assert.Equal(t, want, filepath.Dir(inv.file))
				}
			}
		})
	}
}

// The registry lists built-ins and custom CLIs once each, a custom one
// replacing the built-in of its name but keeping its aliases.
func TestRegistryEntries(t *testing.T) {
	t.Parallel()
	r := NewRegistry(map[string]Definition{
		"cursor": {Name: "cursor", Binary: "my-cursor", Output: OutputText},
		"mybot":  {Binary: "mybot", Output: OutputText},
	})
	entries := r.Entries()
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Def.Name
	}
	assert.True(t, slices.IsSorted(names))
	for _, want := range []string{"aider", "amp", "claude", "codex", "copilot", "cursor", "gemini", "mybot", "opencode", "qodo", "qwen"} {
		assert.Contains(t, names, want)
	}
	for _, e := range entries {
		switch e.Def.Name {
		case "cursor":
			assert.True(t, e.Builtin && e.Custom)
			assert.Equal(t, "my-cursor", e.Def.Binary)
			assert.Equal(t, []string{"cursor-agent", "agent", "cursor-cli"}, e.Aliases)
		case "mybot":
			assert.True(t, !e.Builtin && e.Custom)
		case "claude":
			assert.True(t, e.Builtin && !e.Custom)
		}
	}
	d, err := r.Lookup("AGENT")
	require.NoError(t, err)
	assert.Equal(t, "my-cursor", d.Binary, "an alias reaches the custom definition")
}

// A custom CLI named like a built-in's alias is that CLI, and the
// built-in's entry no longer lists the alias, however it is written.
func TestRegistryEntriesCustomTakesAlias(t *testing.T) {
	t.Parallel()
	r := NewRegistry(map[string]Definition{
		"agent":      {Binary: "my-agent", Output: OutputText},
		"cursor_cli": {Binary: "my-cursor-cli", Output: OutputText},
	})
	aliases := map[string][]string{}
	for _, e := range r.Entries() {
		aliases[e.Def.Name] = e.Aliases
	}
	assert.Equal(t, []string{"cursor-agent"}, aliases["cursor"])
	assert.Empty(t, aliases["agent"])
	assert.Equal(t, []string{"claude-code"}, aliases["claude"], "other aliases stay")
	for name, want := range map[string]string{"Agent": "my-agent", "cursor-cli": "my-cursor-cli", "cursor-agent": "cursor-agent"} {
		d, err := r.Lookup(name)
		require.NoError(t, err)
		assert.Equal(t, want, d.Binary, name)
	}
	assert.Equal(t, []string{"cursor-agent", "agent", "cursor-cli"}, builtinAliases["cursor"], "the built-ins' list is left as it was")
}

// Lines reach a decoder whole however the output is cut into writes, and
// a line too long to keep is skipped, not cut.
func TestLines(t *testing.T) {
	t.Parallel()
	in := "one\r\n\ntwo three\n" + strings.Repeat("y", maxLine+5) + "\nfour\nlast"
	want := []string{"one", "two three", "four", "last"}
	for _, size := range []int{1, 2, 3, 7, 64, 1 << 20, len(in)} {
		var got []string
		l := lines{fn: func(b []byte) { got = append(got, string(b)) }}
		for p := []byte(in); len(p) > 0; {
			k := min(size, len(p))
			l.write(p[:k])
			p = p[k:]
		}
		l.close()
		assert.Equal(t, want, got, "writes of %d bytes", size)
	}
}

func TestAiderCount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"42": 42, "3.0k": 3000, "12k": 12000, "1.2M": 1200000, "0.5k": 500} {
		got := aiderCount(in)
		require.NotNil(t, got, in)
		assert.Equal(t, want, *got, in)
	}
	assert.Nil(t, aiderCount("k"))
}

// dtree clis says what each CLI's output reports: none claims a figure
// the real CLI was not seen to print (copilot 1.0.102 prints no tokens).
func TestBuiltinTraits(t *testing.T) {
	t.Parallel()
	entries := NewRegistry(nil).Entries()
	got := map[string]Traits{}
	for _, e := range entries {
		got[e.Def.Name] = TraitsOf(e, func(string) string { return "" })
	}
	assert.Equal(t, []string{"duration_ms"}, got["copilot"].Usage)
	assert.Equal(t, "stdin", got["copilot"].Long, "copilot's file tool refuses long prompt files")
	assert.Equal(t, []string{"input_tokens", "output_tokens", "duration_ms"}, got["qwen"].Usage)
	assert.Equal(t, "argv", got["qwen"].Prompt)
	assert.Equal(t, "stdin", got["qwen"].Long)
	assert.Equal(t, "--model={model}", got["qwen"].ModelFlag)
}
