package settings_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

// layers are the inputs of one Load: file contents ("" is no file), the
// environment and the command line.
type layers struct {
	user, project, config string // config: the file given to --config
	env                   map[string]string
	flags                 []string // parsed by runFlags
}

// runFlags is a flag set like dtree run's: the flags Load binds.
func runFlags(t *testing.T, args []string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.String("cli", "gemini", "") // a default that must not count unless passed
	fs.String("validate-cli", "", "")
	fs.String("retry-cli", "", "")
	fs.Int("retries", 7, "")
	fs.String("timeout", "", "")
	fs.String("log-dir", "", "")
	fs.String("rollback", "", "")
	fs.Int("parallel", 0, "") // as dtree run's: 0, not passed, is no value
	require.NoError(t, fs.Parse(args))
	return fs
}

// load writes the layers into a temporary HOME and working directory and
// loads them. It returns the options used, for paths in assertions.
func load(t *testing.T, l layers) (*settings.Settings, settings.LoadOptions, error) {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home}
	for k, v := range l.env {
		env[k] = v
	}
	o := settings.LoadOptions{Cwd: cwd, Getenv: func(k string) string { return env[k] }, Flags: runFlags(t, l.flags)}
	if l.user != "" {
		writeFile(t, o.UserFile(), l.user)
	}
	if l.project != "" {
		writeFile(t, filepath.Join(cwd, "dtree.yaml"), l.project)
	}
	if l.config != "" {
		o.ConfigFile = "other.yaml" // relative: found in Cwd
		writeFile(t, filepath.Join(cwd, "other.yaml"), l.config)
	}
	s, err := settings.Load(o)
	return s, o, err
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		layers layers
		want   map[string]string         // key -> value as `settings get` prints it
		from   map[string]settings.Layer // key -> where it came from
	}{
		{
			name: "built-in defaults",
			want: map[string]string{"default_cli": "claude", "default_validate_cli": "", "default_retry_cli": "", "default_retry_count": "3",
				"default_timeout": "10m0s", "log_dir": ".dtree/runs", "write_log_short": "true", "write_log_long": "true", "write_log_graph": "true",
				"long_log_call_max": "16MiB", "long_log_max": "1GiB"},
			from: map[string]settings.Layer{"default_cli": settings.LayerDefault, "default_timeout": settings.LayerDefault},
		},
		{
			name:   "user file over default",
			layers: layers{user: "default_cli: codex\ndefault_timeout: 90\nwrite_log_long: false\n"},
			want:   map[string]string{"default_cli": "codex", "default_timeout": "1m30s", "write_log_long": "false", "log_dir": ".dtree/runs"},
			from:   map[string]settings.Layer{"default_cli": settings.LayerUser, "log_dir": settings.LayerDefault},
		},
		{
			name:   "project file over user file, key by key",
			layers: layers{user: "default_cli: codex\ndefault_retry_count: 5\n", project: "default_cli: gemini\n"},
			want:   map[string]string{"default_cli": "gemini", "default_retry_count": "5"},
			from:   map[string]settings.Layer{"default_cli": settings.LayerProject, "default_retry_count": settings.LayerUser},
		},
		{
			name:   "--config replaces ./dtree.yaml",
			layers: layers{user: "log_dir: u\n", project: "default_cli: gemini\nlog_dir: p\n", config: "log_dir: c\n"},
			want:   map[string]string{"default_cli": "claude", "log_dir": "c"},
			from:   map[string]settings.Layer{"default_cli": settings.LayerDefault, "log_dir": settings.LayerProject},
		},
		{
			name: "env over project file",
			layers: layers{project: "default_cli: gemini\ndefault_retry_count: 1\n",
				env: map[string]string{"DTREE_DEFAULT_CLI": "Codex", "DTREE_LOG_DIR": "/tmp/logs", "DTREE_WRITE_LOG_SHORT": "no"}},
			want: map[string]string{"default_cli": "codex", "default_retry_count": "1", "log_dir": "/tmp/logs", "write_log_short": "false"},
			from: map[string]settings.Layer{"default_cli": settings.LayerEnv, "default_retry_count": settings.LayerProject},
		},
		{
			name:   "an empty variable counts as unset",
			layers: layers{user: "default_cli: codex\n", env: map[string]string{"DTREE_DEFAULT_CLI": ""}},
			want:   map[string]string{"default_cli": "codex"},
			from:   map[string]settings.Layer{"default_cli": settings.LayerUser},
		},
		{
			name: "flag over env",
			layers: layers{env: map[string]string{"DTREE_DEFAULT_CLI": "codex", "DTREE_DEFAULT_RETRY_COUNT": "2", "DTREE_DEFAULT_TIMEOUT": "15m"},
				flags: []string{"--cli", "aider", "--retries", "0", "--timeout", "30"}},
			want: map[string]string{"default_cli": "aider", "default_retry_count": "0", "default_timeout": "30s"},
			from: map[string]settings.Layer{"default_cli": settings.LayerFlag, "default_retry_count": settings.LayerFlag},
		},
		{
			name:   "parallel's default",
			layers: layers{},
			want:   map[string]string{"parallel": "4"},
			from:   map[string]settings.Layer{"parallel": settings.LayerDefault},
		},
		{
			name:   "parallel from the project file, over the user file",
			layers: layers{user: "parallel: 8\n", project: "parallel: 2\n"},
			want:   map[string]string{"parallel": "2"},
			from:   map[string]settings.Layer{"parallel": settings.LayerProject},
		},
		{
			name:   "--parallel over DTREE_PARALLEL",
			layers: layers{env: map[string]string{"DTREE_PARALLEL": "6"}, flags: []string{"--parallel", "1"}},
			want:   map[string]string{"parallel": "1"},
			from:   map[string]settings.Layer{"parallel": settings.LayerFlag},
		},
		{
			name:   "DTREE_PARALLEL when no flag is passed",
			layers: layers{env: map[string]string{"DTREE_PARALLEL": " 6 "}},
			want:   map[string]string{"parallel": "6"},
			from:   map[string]settings.Layer{"parallel": settings.LayerEnv},
		},
		{
			name:   "a flag not passed does not count, whatever its default",
			layers: layers{env: map[string]string{"DTREE_DEFAULT_RETRY_COUNT": "2"}, flags: []string{"--log-dir", "out"}},
			want:   map[string]string{"default_cli": "claude", "default_retry_count": "2", "log_dir": "out"},
			from:   map[string]settings.Layer{"default_cli": settings.LayerDefault, "default_retry_count": settings.LayerEnv, "log_dir": settings.LayerFlag},
		},
		{
			name:   "a key with no value leaves the layer below",
			layers: layers{user: "default_cli: codex\n", project: "default_cli:\n"},
			want:   map[string]string{"default_cli": "codex"},
			from:   map[string]settings.Layer{"default_cli": settings.LayerUser},
		},
		{
			name:   `"" sets the validation CLI back to the node's own`,
			layers: layers{user: "default_validate_cli: codex\n", project: "default_validate_cli: \"\"\n"},
			want:   map[string]string{"default_validate_cli": ""},
			from:   map[string]settings.Layer{"default_validate_cli": settings.LayerProject},
		},
		{
			name:   "empty and comment-only files",
			layers: layers{user: "# nothing yet\n", project: "\n"},
			want:   map[string]string{"default_cli": "claude"},
			from:   map[string]settings.Layer{"default_cli": settings.LayerDefault},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := load(t, tt.layers)
			require.NoError(t, err)
			for k, want := range tt.want {
				got, ok := s.Value(k)
				assert.True(t, ok, k)
				assert.Equal(t, want, got, k)
			}
			for k, want := range tt.from {
				assert.Equal(t, want, s.Sources[k].Layer, k)
			}
		})
	}
}

// A command checks only the settings it uses (Check): a bad value of
// another is passed over, in Ignored, and that setting keeps the layer
// below's value.
func TestLoadCheckOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		layers  layers
		check   []string
		timeout time.Duration
		ignored []string // Error() of each ignored value
		err     string
	}{
		{name: "run-only setting bad, chart keys checked", layers: layers{project: "default_timeout: ten\ndefault_cli: codex\n"},
			check: settings.ChartKeys, timeout: types.DefaultTimeout, ignored: []string{`dtree.yaml:1: default_timeout: "ten" is not a duration`}},
		{name: "a bad value falls to the layer below", layers: layers{user: "default_timeout: 20m\n", env: map[string]string{"DTREE_DEFAULT_TIMEOUT": "soon"}},
			check: settings.ChartKeys, timeout: 20 * time.Minute, ignored: []string{`environment variable DTREE_DEFAULT_TIMEOUT: "soon" is not a duration`}},
		{name: "all checked", layers: layers{project: "default_timeout: ten\n"}, err: `default_timeout: "ten" is not a duration`},
		{name: "a checked key is still an error", layers: layers{project: "default_timeout: ten\ndefault_cli: gpt\n"},
			check: settings.ChartKeys, err: `default_cli: "gpt" is not a CLI dtree knows`},
		{name: "an unknown key is an error for every command", layers: layers{project: "colour: red\n"},
			check: []string{}, err: "colour: unknown setting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home, cwd := t.TempDir(), t.TempDir()
			env := map[string]string{"HOME": home}
			for k, v := range tt.layers.env {
				env[k] = v
			}
			o := settings.LoadOptions{Cwd: cwd, Getenv: func(k string) string { return env[k] }, Check: tt.check}
			if tt.layers.user != "" {
				writeFile(t, o.UserFile(), tt.layers.user)
			}
			if tt.layers.project != "" {
				writeFile(t, filepath.Join(cwd, "dtree.yaml"), tt.layers.project)
			}
			s, err := settings.Load(o)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.timeout, s.DefaultTimeout)
			var got []string
			for _, e := range s.Ignored {
				got = append(got, e.Error())
			}
			require.Len(t, got, len(tt.ignored))
			for i, want := range tt.ignored {
				assert.Contains(t, got[i], want)
			}
		})
	}
}

// Sources name the file and line, the variable, the flag.
func TestLoadSources(t *testing.T) {
	t.Parallel()
	s, o, err := load(t, layers{
		user:    "# mine\nlog_dir: logs\n",
		project: "\n\ndefault_retry_count: 4\n",
		env:     map[string]string{"DTREE_DEFAULT_CLI": "codex"},
		flags:   []string{"--timeout", "1h"},
	})
	require.NoError(t, err)
	assert.Equal(t, settings.Source{Layer: settings.LayerUser, Name: o.UserFile(), Line: 2}, s.Sources["log_dir"])
	assert.Equal(t, settings.Source{Layer: settings.LayerProject, Name: o.ProjectFile(), Line: 3}, s.Sources["default_retry_count"])
	assert.Equal(t, "env DTREE_DEFAULT_CLI", s.Sources["default_cli"].String())
	assert.Equal(t, "flag --timeout", s.Sources["default_timeout"].String())
	assert.Equal(t, "default", s.Sources["write_log_long"].String())
	assert.Equal(t, "user file "+o.UserFile()+":2", s.Sources["log_dir"].String())
}

func TestUserFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    settings.LoadOptions
		env  map[string]string
		want string
	}{
		{name: "XDG_CONFIG_HOME", env: map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, want: "/x/dtree/config.yaml"},
		{name: "HOME when XDG_CONFIG_HOME is unset", env: map[string]string{"HOME": "/h"}, want: "/h/.config/dtree/config.yaml"},
		{name: "a relative XDG_CONFIG_HOME is ignored", env: map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, want: "/h/.config/dtree/config.yaml"},
		{name: "neither", want: ""},
		{name: "UserConfigDir wins", o: settings.LoadOptions{UserConfigDir: "/u"}, env: map[string]string{"XDG_CONFIG_HOME": "/x"}, want: "/u/dtree/config.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := tt.o
			o.Getenv = func(k string) string { return tt.env[k] }
			assert.Equal(t, tt.want, o.UserFile())
		})
	}
}

// With neither HOME nor XDG_CONFIG_HOME there is no user file: Load still
// works.
func TestLoadWithoutUserFile(t *testing.T) {
	t.Parallel()
	s, err := settings.Load(settings.LoadOptions{Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	assert.Equal(t, "claude", s.DefaultCLI)
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	s := settings.Default()
	assert.Equal(t, types.BuiltinDefaults(), s.Defaults())
	assert.Equal(t, types.Defaults{CLI: "claude", Retries: 3, Timeout: 600 * time.Second, MaxVisits: 10}, s.Defaults())
	assert.Equal(t, ".dtree/runs", s.LogDir)
	assert.True(t, s.WriteLogShort)
	assert.True(t, s.WriteLogLong)
	assert.Empty(t, s.CLIs)

	loaded, _, err := load(t, layers{user: "default_cli: codex\ndefault_validate_cli: gemini\ndefault_retry_cli: aider\ndefault_retry_count: 0\ndefault_timeout: 15m\n"})
	require.NoError(t, err)
	assert.Equal(t, types.Defaults{CLI: "codex", ValidateCLI: "gemini", RetryCLI: "aider", Retries: 0, Timeout: 15 * time.Minute, MaxVisits: 10}, loaded.Defaults())
}

// Every key's variable is DTREE_ and its name in upper case, and the keys
// are those of readme/settings.md#the-settings.
// Sizes (long_log_call_max, long_log_max) are read in bytes, KiB, MiB or
// GiB, and shown in the largest whole unit.
func TestSizeSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      bool
	}{
		{in: "16MiB", want: "16MiB"},
		{in: "16 mib", want: "16MiB"},
		{in: "1024", want: "1KiB"},
		{in: "1536", want: "1536"},
		{in: "2048KiB", want: "2MiB"},
		{in: "1GiB", want: "1GiB"},
		{in: "100B", want: "100"},
		{in: "0", want: "0"},
		{in: "-1", err: true},
		{in: "10MB", err: true},
		{in: "MiB", err: true},
		{in: "99999999999GiB", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := settings.Load(settings.LoadOptions{Cwd: dir, UserConfigDir: dir, Getenv: func(name string) string {
				if name == "DTREE_LONG_LOG_CALL_MAX" {
					return tt.in
				}
				return ""
			}})
			if tt.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "is not a size")
				return
			}
			require.NoError(t, err)
			got, _ := s.Value("long_log_call_max")
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	var names []string
	for _, k := range settings.Keys() {
		names = append(names, k.Name)
		assert.Equal(t, "DTREE_"+strings.ToUpper(k.Name), k.Env)
		assert.NotEmpty(t, k.Help, k.Name)
	}
	assert.Equal(t, []string{"default_cli", "default_validate_cli", "default_retry_cli", "default_retry_count",
		"default_timeout", "log_dir", "write_log_short", "write_log_long", "write_log_graph", "long_log_call_max", "long_log_max", "stream_log_max", "max_cost", "max_tokens", "allow_unmetered", "max_turns", "junit", "worktree", "keep_runs", "rollback", "checkpoints", "approvals", "parallel"}, names)
	assert.Equal(t, append(names, "clis"), settings.KeyNames())
}

// A project file of more than a megabyte is refused before it is read
// whole: a checkout's dtree.yaml may be of any size.
func TestLoadRefusesAHugeFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := "default_retry_count: 1\n# " + strings.Repeat("x", 1<<20) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dtree.yaml"), []byte(big), 0o644))
	_, err := settings.Load(settings.LoadOptions{Cwd: dir, UserConfigDir: filepath.Join(dir, "config"), Getenv: func(string) string { return "" }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read the settings file: it is larger than 1024 KiB, which no settings file is")

	// One just under is read.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dtree.yaml"), []byte(big[:1<<20]), 0o644))
	s, err := settings.Load(settings.LoadOptions{Cwd: dir, UserConfigDir: filepath.Join(dir, "config"), Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	assert.Equal(t, 1, s.DefaultRetryCount)
}

// worktree takes off, head or dirty, and true and false for head and off.
func TestWorktreeSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		err      bool
	}{
		{in: "", want: "off"},
		{in: "off", want: "off"},
		{in: "false", want: "off"},
		{in: "head", want: "head"},
		{in: "TRUE", want: "head"},
		{in: "dirty", want: "dirty"},
		{in: "HEAD~1", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := settings.Load(settings.LoadOptions{Cwd: dir, UserConfigDir: dir, Getenv: func(name string) string {
				if name == "DTREE_WORKTREE" {
					return tt.in
				}
				return ""
			}})
			if tt.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "is not off, head or dirty")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Worktree)
		})
	}
}

func TestRollbackSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		l    layers
		want string
		err  string
	}{
		{name: "default keep", want: "keep"},
		{name: "file", l: layers{user: "rollback: attempt\n"}, want: "attempt"},
		{name: "env over file", l: layers{user: "rollback: attempt\n", env: map[string]string{"DTREE_ROLLBACK": "KEEP"}}, want: "keep"},
		{name: "flag over env", l: layers{env: map[string]string{"DTREE_ROLLBACK": "keep"}, flags: []string{"--rollback", "attempt"}}, want: "attempt"},
		{name: "bad flag", l: layers{flags: []string{"--rollback", "always"}}, err: `"always" is not attempt or keep`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := load(t, tt.l)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Contains(t, err.Error(), "--rollback")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Rollback)
		})
	}
}
