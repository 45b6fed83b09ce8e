//go:build unix

package agent_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
)

func TestProbeVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		binary      string
		env         []string
		wantVersion string
		wantErr     string
		alt         bool // the fake agent is the definition's other name
	}{
		{name: "answers", env: env("FAKE_MODE=print", "FAKE_STDOUT=\x1b[1mfake\x1b[0m 1.2.3\nmore\n"), wantVersion: "fake 1.2.3"},
		{name: "answers on stderr", env: env("FAKE_MODE=print", "FAKE_STDERR=\nfake 2.0\n"), wantVersion: "fake 2.0"},
		// A CLI without --version complains and fails: that is no version.
		{name: "fails", env: env("FAKE_MODE=print", "FAKE_STDERR=error: unknown option '--version'\nusage: fake [options]\n", "FAKE_EXIT=1"),
			wantErr: "--version exited with status 1: error: unknown option '--version'"},
		{name: "fails on stdout", env: env("FAKE_MODE=print", "FAKE_STDOUT=fake 3", "FAKE_EXIT=2"),
			wantErr: "--version exited with status 2: fake 3"},
		{name: "fails silently", env: env("FAKE_MODE=print", "FAKE_EXIT=2"), wantErr: "--version exited with status 2"},
		{name: "says nothing", env: env("FAKE_MODE=print"), wantErr: "--version printed nothing"},
		{name: "not installed", binary: "dtree-no-such-cli", wantErr: "not installed"},
		{name: "installed under another name", binary: "dtree-no-such-cli", alt: true,
			env: env("FAKE_MODE=print", "FAKE_STDOUT=fake 4"), wantVersion: "fake 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := fakeDef(agent.PromptStdin)
			if tt.binary != "" {
				def.Binary = tt.binary
			}
			if tt.alt {
				def.AltBinaries = []string{"dtree-no-such-cli-either", fakeAgent}
			}
			p := agent.ProbeVersion(t.Context(), def, tt.env, 10*time.Second)
			assert.Equal(t, tt.wantVersion, p.Version)
			assert.Equal(t, tt.wantErr, p.VersionError)
			if tt.binary == "" || tt.alt {
				assert.Equal(t, fakeAgent, p.Path)
				assert.Equal(t, fakeAgent, p.Binary, "the name it was found under")
			} else {
				assert.Empty(t, p.Path)
			}
		})
	}
}

// A CLI that hangs on --version is given up on in time, with everything it
// started.
func TestProbeVersionHangs(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pids")
	start := time.Now()
	p := agent.ProbeVersion(t.Context(), fakeDef(agent.PromptStdin), env("FAKE_MODE=spawn", "FAKE_PIDFILE="+pidfile), 500*time.Millisecond)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, "no answer to --version within 500ms", p.VersionError)
	assert.Empty(t, p.Version)
	for _, pid := range waitPids(t, pidfile, time.Second) {
		require.Eventually(t, func() bool { return gone(pid) }, 2*time.Second, 10*time.Millisecond, "pid %d", pid)
	}
}

func TestTraits(t *testing.T) {
	t.Parallel()
	r := agent.NewRegistry(map[string]agent.Definition{
		"mine": {Binary: "m", Args: []string{"-m", "{model}", "{prompt}"}, PromptVia: agent.PromptArg,
			Output: agent.OutputJSON, AnswerPath: "a", CostPath: "c", KeyVars: []string{"MINE_KEY", "OTHER_KEY"}},
	})
	getenv := func(k string) string { return map[string]string{"MINE_KEY": "x", "AMP_API_KEY": "y"}[k] }
	got := map[string]agent.Traits{}
	for _, e := range r.Entries() {
		got[e.Def.Name] = agent.TraitsOf(e, getenv)
	}
	tests := []struct {
		name string
		want agent.Traits
	}{
		{name: "claude", want: agent.Traits{Prompt: "argv", Long: "stdin", ModelFlag: "--model={model}",
			Usage: []string{"input_tokens", "output_tokens", "cost_usd", "duration_ms"}}},
		{name: "aider", want: agent.Traits{Prompt: "argv", Long: "file", ModelFlag: "--model={model}",
			Usage: []string{"input_tokens", "output_tokens", "cost_usd"}}},
		{name: "opencode", want: agent.Traits{Prompt: "stdin", Long: "stdin", ModelFlag: "--model={model}",
			Usage: []string{"input_tokens", "output_tokens", "cost_usd"}}},
		{name: "amp", want: agent.Traits{Prompt: "argv", Long: "stdin", ModelFlag: "--mode={model}",
			Usage: []string{"input_tokens", "output_tokens", "duration_ms"}}},
		{name: "qodo", want: agent.Traits{Prompt: "argv", Long: "file", ModelFlag: "--model={model}", Usage: []string{}}},
		{name: "mine", want: agent.Traits{Prompt: "argv", ModelFlag: "-m {model}", Usage: []string{"cost_usd"},
			KeyVars: []agent.KeyVar{{Name: "MINE_KEY", Set: true}, {Name: "OTHER_KEY"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := got[tt.name]
			if tt.want.KeyVars == nil {
				g.KeyVars = nil // checked for mine
			}
			assert.Equal(t, tt.want, g)
		})
	}
	assert.Contains(t, got["amp"].KeyVars, agent.KeyVar{Name: "AMP_API_KEY", Set: true})
}
