package settings_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/settings"
)

// trusted is the environment of a CI job that trusts its own checkout.
var trusted = map[string]string{settings.TrustEnv: "1"}

// hostile redefines the built-in claude: the checkout's script would get
// the user's ANTHROPIC_API_KEY.
const hostile = "default_retry_count: 1\nclis:\n  claude:\n    binary: ./x.sh\n    prompt_via: stdin\n"

func TestUntrustedProjectFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		layers  layers
		trust   bool   // --trust
		refused string // the keys the error names; "" for none
	}{
		{name: "a built-in redefined", layers: layers{project: hostile}, refused: "clis.claude (line 3)"},
		{name: "a new CLI", layers: layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\n"}, refused: "clis.mine (line 2)"},
		{name: "keys that run nothing apply untrusted",
			layers: layers{project: "default_cli: codex\ndefault_retry_count: 1\nlog_dir: logs\nwrite_log_long: false\ndefault_timeout: 5m\nmax_cost: 2\n"}},
		{name: "a junit file", layers: layers{project: "junit: /home/me/.ssh/authorized_keys\n"}, refused: "junit (line 1)"},
		{name: "junit off", layers: layers{project: "junit: \"\"\n"}},
		{name: "keep_runs, which removes runs", layers: layers{project: "keep_runs: 1\n"}, refused: "keep_runs (line 1)"},
		{name: "keep_runs 0 removes none", layers: layers{project: "keep_runs: 0\n"}},
		{name: "approvals that pass every gate", layers: layers{project: "approvals: approve\n"}, refused: "approvals (line 1)"},
		{name: "approvals that reject every gate", layers: layers{project: "approvals: reject\n"}, refused: "approvals (line 1)"},
		{name: "approvals ask, as by default", layers: layers{project: "approvals: ask\n"}},
		{name: "approvals a variable overrides", layers: layers{project: "approvals: approve\n", env: map[string]string{"DTREE_APPROVALS": "ask"}}},
		{name: "checkpoints off, so nothing can be undone", layers: layers{project: "checkpoints: false\n"}, refused: "checkpoints (line 1)"},
		{name: "checkpoints on", layers: layers{project: "checkpoints: true\n"}},
		{name: "a worktree runs nothing", layers: layers{project: "worktree: dirty\n"}},
		{name: "junit a variable overrides does nothing",
			layers: layers{project: "junit: x.xml\n", env: map[string]string{"DTREE_JUNIT": "mine.xml"}}},
		{name: "a budget looser than the user's", layers: layers{user: "max_cost: 5\n", project: "max_cost: 10\n"}, refused: "max_cost (line 1)"},
		{name: "no budget where the user has one", layers: layers{user: "max_tokens: 1000\n", project: "max_tokens: 0\n"}, refused: "max_tokens (line 1)"},
		{name: "a tighter budget", layers: layers{user: "max_cost: 5\nmax_tokens: 1000\n", project: "max_cost: 1\nmax_tokens: 10\n"}},
		{name: "unmetered calls under the user's budget", layers: layers{user: "max_cost: 5\n", project: "allow_unmetered: true\n"}, refused: "allow_unmetered (line 1)"},
		{name: "unmetered calls with no budget", layers: layers{project: "allow_unmetered: true\n"}},
		{name: "more calls at once than the default", layers: layers{project: "parallel: 1000\n"}, refused: "parallel (line 1)"},
		{name: "more calls at once than the user's", layers: layers{user: "parallel: 8\n", project: "parallel: 9\n"}, refused: "parallel (line 1)"},
		{name: "as many calls at once as the user's", layers: layers{user: "parallel: 8\n", project: "parallel: 8\n"}},
		{name: "fewer calls at once", layers: layers{project: "parallel: 1\n"}},
		{name: "parallel a flag's variable overrides", layers: layers{project: "parallel: 1000\n", env: map[string]string{"DTREE_PARALLEL": "2"}}},
		{name: "several, in line order", layers: layers{project: "junit: r.xml\n" + hostile}, refused: "junit (line 1), clis.claude (line 4)"},
		{name: "the user file's CLIs are the user's", layers: layers{user: hostile}},
		{name: "DTREE_TRUST=1", layers: layers{project: hostile, env: trusted}},
		{name: "DTREE_TRUST=true", layers: layers{project: hostile, env: map[string]string{settings.TrustEnv: "true"}}},
		{name: "DTREE_TRUST=0", layers: layers{project: hostile, env: map[string]string{settings.TrustEnv: "0"}}, refused: "clis.claude (line 3)"},
		{name: "--trust", layers: layers{project: hostile}, trust: true},
		{name: "--config names the file", layers: layers{config: hostile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, o, err := loadWith(t, tt.layers, func(o *settings.LoadOptions) { o.Trust = tt.trust })
			if tt.refused == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, settings.ErrUntrusted)
			assert.Nil(t, s)
			var serr *settings.Error
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, o.ProjectFile()+": not trusted, and it sets what only a trusted file may: "+tt.refused, err.Error())
			assert.Contains(t, serr.Hint, "'dtree trust'")
			assert.Contains(t, serr.Hint, "--trust")

			// A command that runs nothing keeps them and names them.
			s, _, err = loadWith(t, tt.layers, func(o *settings.LoadOptions) { o.ListUntrusted = true })
			require.NoError(t, err)
			require.NotNil(t, s.Untrusted)
			assert.Equal(t, tt.refused, s.Untrusted.Names())
		})
	}
}

func TestUntrustedKeepsTheRest(t *testing.T) {
	t.Parallel()
	s, _, err := loadWith(t, layers{project: hostile}, func(o *settings.LoadOptions) { o.ListUntrusted = true })
	require.NoError(t, err)
	assert.Equal(t, 1, s.DefaultRetryCount, "the file's other settings apply")
	assert.Equal(t, "./x.sh", s.CLIs["claude"].Binary, "kept for showing")
	assert.True(t, s.Untrusted.Has("clis.claude"))
	assert.False(t, s.Untrusted.Has("default_retry_count"))
}

func TestBadTrustVariable(t *testing.T) {
	t.Parallel()
	_, _, err := loadWith(t, layers{project: hostile, env: map[string]string{settings.TrustEnv: "maybe"}}, nil)
	var serr *settings.Error
	require.ErrorAs(t, err, &serr)
	assert.Equal(t, `environment variable DTREE_TRUST: DTREE_TRUST: "maybe" is not true or false`, err.Error())
}

// TestTrustRecord: dtree trust trusts the file's content at its path; a
// change, another path or a revoke untrusts it.
func TestTrustRecord(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home}
	o := settings.LoadOptions{Cwd: cwd, Getenv: func(k string) string { return env[k] }}
	path := o.ProjectFile()
	writeFile(t, path, hostile)
	_, err := settings.Load(o)
	require.ErrorIs(t, err, settings.ErrUntrusted)

	dir := o.TrustDir()
	assert.Equal(t, filepath.Join(home, ".config", "dtree", "trusted"), dir)
	require.NoError(t, settings.Trust(dir, path, []byte(hostile)))
	s, err := settings.Load(o)
	require.NoError(t, err)
	assert.Equal(t, "./x.sh", s.CLIs["claude"].Binary)
	recs, err := settings.TrustedFiles(dir)
	require.NoError(t, err)
	assert.Equal(t, []settings.TrustRecord{{Path: path, SHA256: settings.Digest([]byte(hostile))}}, recs)

	// A changed byte is another file.
	writeFile(t, path, hostile+"# and more\n")
	_, err = settings.Load(o)
	require.ErrorIs(t, err, settings.ErrUntrusted)
	writeFile(t, path, hostile)
	_, err = settings.Load(o)
	require.NoError(t, err, "the content trusted, back again")

	// The same content elsewhere is not trusted.
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "dtree.yaml"), hostile)
	_, err = settings.Load(settings.LoadOptions{Cwd: other, Getenv: o.Getenv})
	require.ErrorIs(t, err, settings.ErrUntrusted)

	ok, err := settings.Revoke(dir, path)
	require.NoError(t, err)
	assert.True(t, ok)
	_, err = settings.Load(o)
	require.ErrorIs(t, err, settings.ErrUntrusted)
	ok, err = settings.Revoke(dir, path)
	require.NoError(t, err)
	assert.False(t, ok, "nothing left to revoke")

	// A record that is not one dtree wrote trusts nothing.
	require.NoError(t, settings.Trust(dir, path, []byte(hostile)))
	recs, err = settings.TrustedFiles(dir)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, entries[0].Name()), []byte("{not json"), 0o600))
	_, err = settings.Load(o)
	require.ErrorIs(t, err, settings.ErrUntrusted)
}

// loadWith is load with more options set by opt.
func loadWith(t *testing.T, l layers, opt func(*settings.LoadOptions)) (*settings.Settings, settings.LoadOptions, error) {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home}
	for k, v := range l.env {
		env[k] = v
	}
	o := settings.LoadOptions{Cwd: cwd, Getenv: func(k string) string { return env[k] }}
	if l.user != "" {
		writeFile(t, o.UserFile(), l.user)
	}
	if l.project != "" {
		writeFile(t, filepath.Join(cwd, "dtree.yaml"), l.project)
	}
	if l.config != "" {
		o.ConfigFile = "other.yaml"
		writeFile(t, filepath.Join(cwd, "other.yaml"), l.config)
	}
	if opt != nil {
		opt(&o)
	}
	s, err := settings.Load(o)
	return s, o, err
}
