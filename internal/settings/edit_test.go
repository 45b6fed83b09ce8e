package settings_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/settings"
)

func TestUserFileSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before string // "" is no file
		key    string
		value  string
		after  string
	}{
		{name: "new file", key: "default_cli", value: "Codex", after: "default_cli: codex\n"},
		{name: "replace, keeping comments and order", before: "# mine\ndefault_cli: codex # for now\nlog_dir: x\n",
			key: "default_cli", value: "gemini", after: "# mine\ndefault_cli: gemini # for now\nlog_dir: x\n"},
		{name: "append", before: "log_dir: x\n", key: "default_retry_count", value: "05", after: "log_dir: x\ndefault_retry_count: 5\n"},
		{name: "duration in seconds stays a number", key: "default_timeout", value: "600", after: "default_timeout: 600\n"},
		{name: "Go duration", key: "default_timeout", value: "15m", after: "default_timeout: 15m\n"},
		{name: "boolean", key: "write_log_long", value: "off", after: "write_log_long: false\n"},
		{name: "a budget in dollars", key: "max_cost", value: "$2.50", after: "max_cost: 2.5\n"},
		{name: "a budget in tokens", key: "max_tokens", value: "200000", after: "max_tokens: 200000\n"},
		{name: "a path that looks like a number is quoted", key: "log_dir", value: "123", after: "log_dir: \"123\"\n"},
		{name: "empty validation CLI", key: "default_validate_cli", value: "", after: "default_validate_cli: \"\"\n"},
		{name: "a CLI defined in the file", before: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\n", key: "default_cli", value: "Mine",
			after: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\ndefault_cli: mine\n"},
		{name: "a duplicate is removed", before: "log_dir: a\nlog_dir: b\n", key: "log_dir", value: "c", after: "log_dir: c\n"},
		{name: "a file holding only a comment", before: "# settings\n", key: "log_dir", value: "c", after: "# settings\nlog_dir: c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "conf", "dtree", "config.yaml")
			if tt.before != "" {
				writeFile(t, path, tt.before)
			}
			f, err := settings.OpenUserFile(path)
			require.NoError(t, err)
			require.NoError(t, f.Set(tt.key, tt.value))
			require.NoError(t, f.Save())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.after, string(got))

			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
			if tt.before == "" {
				dir, err := os.Stat(filepath.Dir(path))
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
			}
			entries, err := os.ReadDir(filepath.Dir(path))
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temporary file left behind")

			// What set wrote, Load reads back.
			s, err := settings.Load(settings.LoadOptions{UserConfigDir: filepath.Join(filepath.Dir(path), ".."), Cwd: t.TempDir(),
				Getenv: func(string) string { return "" }})
			require.NoError(t, err)
			assert.Equal(t, settings.LayerUser, s.Sources[tt.key].Layer)
		})
	}
}

func TestUserFileSetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key, value, message, hint string
	}{
		{name: "negative retries", key: "default_retry_count", value: "-1", message: `default_retry_count: "-1" is not a whole number of 0 or more`, hint: "0 or more"},
		{name: "bad duration", key: "default_timeout", value: "soon", message: `default_timeout: "soon" is not a duration`, hint: "90s, 15m"},
		{name: "unknown CLI", key: "default_cli", value: "gpt", message: `default_cli: "gpt" is not a CLI dtree knows`, hint: "claude, codex"},
		{name: "a project's CLI does not count", key: "default_cli", value: "projcli", message: `"projcli" is not a CLI dtree knows`},
		{name: "empty default CLI", key: "default_cli", value: "", message: "default_cli: the value is empty"},
		{name: "not a boolean", key: "write_log_short", value: "maybe", message: `"maybe" is not true or false`},
		{name: "negative cost", key: "max_cost", value: "-1", message: `max_cost: "-1" is not an amount of dollars, 0 or more`, hint: "US dollars (2.50)"},
		{name: "cost in words", key: "max_cost", value: "two dollars", message: `"two dollars" is not an amount of dollars`},
		{name: "tokens with a unit", key: "max_tokens", value: "200k", message: `max_tokens: "200k" is not a whole number of 0 or more`, hint: "whole number of tokens"},
		{name: "clis", key: "clis", value: "x", message: "clis: not a setting 'dtree settings set' can change"},
		{name: "unknown key", key: "colour", value: "x", message: "colour: not a setting", hint: "default_cli, default_validate_cli"},
		{name: "replay as the default CLI", key: "default_cli", value: "replay", message: "default_cli: replay answers only from an answers file", hint: "pass --answers FILE to dtree run instead"},
		{name: "replay in a fallback list", key: "default_cli", value: "claude,replay", message: "every run would fail"},
		{name: "replay validates", key: "default_validate_cli", value: "replay", message: "default_validate_cli: replay answers only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "config.yaml")
			writeFile(t, path, "log_dir: x\n")
			f, err := settings.OpenUserFile(path)
			require.NoError(t, err)
			err = f.Set(tt.key, tt.value)
			var serr *settings.Error
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, tt.key, serr.Key)
			assert.Contains(t, err.Error(), tt.message)
			assert.Contains(t, serr.Hint, tt.hint)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "log_dir: x\n", string(got), "the file is untouched")
		})
	}
}

func TestUserFileUnset(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, "default_cli: codex\n# logs\nlog_dir: x\n")
	f, err := settings.OpenUserFile(path)
	require.NoError(t, err)
	v, ok := f.Get("default_cli")
	assert.True(t, ok)
	assert.Equal(t, "codex", v)
	assert.True(t, f.Unset("default_cli"))
	assert.False(t, f.Unset("default_cli"), "already gone")
	_, ok = f.Get("default_cli")
	assert.False(t, ok)
	require.NoError(t, f.Save())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "# logs\nlog_dir: x\n", string(got))

	missing, err := settings.OpenUserFile(filepath.Join(t.TempDir(), "none.yaml"))
	require.NoError(t, err)
	assert.False(t, missing.Unset("log_dir"))
}

// A file dtree cannot parse is refused, not overwritten.
func TestOpenUserFileBroken(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, "log_dir: x\ndefault_cli: [codex\n")
	_, err := settings.OpenUserFile(path)
	var serr *settings.Error
	require.ErrorAs(t, err, &serr)
	assert.Equal(t, 2, serr.Source.Line)
	assert.Contains(t, err.Error(), path+":2: not valid YAML")
}
