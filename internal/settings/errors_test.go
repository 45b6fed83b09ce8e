package settings_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/settings"
)

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		layers  layers
		layer   settings.Layer
		line    int    // 0: not checked
		key     string // the *Error's Key
		message string // a part of Error()
		hint    string // a part of the hint
	}{
		{
			name:    "bad duration",
			layers:  layers{user: "log_dir: x\ndefault_timeout: soon\n"},
			layer:   settings.LayerUser,
			line:    2,
			key:     "default_timeout",
			message: `config.yaml:2: default_timeout: "soon" is not a duration`,
			hint:    "change it on line 2 of ",
		},
		{
			name:    "zero duration",
			layers:  layers{project: "default_timeout: 0\n"},
			layer:   settings.LayerProject,
			line:    1,
			key:     "default_timeout",
			message: `dtree.yaml:1: default_timeout: "0" is not a positive duration`,
			hint:    "seconds (600) or a Go duration (90s, 15m)",
		},
		{
			name:    "negative retries in a file",
			layers:  layers{project: "default_retry_count: -1\n"},
			layer:   settings.LayerProject,
			line:    1,
			key:     "default_retry_count",
			message: `dtree.yaml:1: default_retry_count: "-1" is not a whole number of 0 or more`,
			hint:    "0 means one attempt and no retry",
		},
		{
			name:    "negative retries in the environment",
			layers:  layers{env: map[string]string{"DTREE_DEFAULT_RETRY_COUNT": "-2"}},
			layer:   settings.LayerEnv,
			key:     "default_retry_count",
			message: `environment variable DTREE_DEFAULT_RETRY_COUNT: "-2" is not a whole number of 0 or more`,
			hint:    "change or unset DTREE_DEFAULT_RETRY_COUNT",
		},
		{
			name:    "parallel 0 in a file",
			layers:  layers{project: "parallel: 0\n"},
			layer:   settings.LayerProject,
			line:    1,
			key:     "parallel",
			message: `dtree.yaml:1: parallel: "0" is not a whole number of 1 or more`,
			hint:    "parallel takes a whole number of calls at once, 1 or more",
		},
		{
			name:    "negative parallel in the environment",
			layers:  layers{env: map[string]string{"DTREE_PARALLEL": "-2"}},
			layer:   settings.LayerEnv,
			key:     "parallel",
			message: `environment variable DTREE_PARALLEL: "-2" is not a whole number of 1 or more`,
			hint:    "change or unset DTREE_PARALLEL",
		},
		{
			name:    "--parallel 0",
			layers:  layers{flags: []string{"--parallel", "0"}},
			layer:   settings.LayerFlag,
			key:     "parallel",
			message: `--parallel: "0" is not a whole number of 1 or more`,
			hint:    "--parallel takes a whole number of calls at once, 1 or more",
		},
		{
			name:    "--parallel -1",
			layers:  layers{flags: []string{"--parallel=-1"}},
			layer:   settings.LayerFlag,
			key:     "parallel",
			message: `--parallel: "-1" is not a whole number of 1 or more`,
		},
		{
			name:    "bad flag",
			layers:  layers{flags: []string{"--timeout", "forever"}},
			layer:   settings.LayerFlag,
			key:     "default_timeout",
			message: `--timeout: "forever" is not a duration`,
			hint:    "--timeout takes seconds (600) or a Go duration",
		},
		{
			name:    "unknown CLI",
			layers:  layers{user: "default_retry_cli: gpt\n"},
			layer:   settings.LayerUser,
			line:    1,
			key:     "default_retry_cli",
			message: `default_retry_cli: "gpt" is not a CLI dtree knows`,
			hint:    "takes one of: aider, amp, claude, codex",
		},
		{
			name:    "unknown CLI flag",
			layers:  layers{flags: []string{"--cli", "gpt"}},
			layer:   settings.LayerFlag,
			key:     "default_cli",
			message: `--cli: "gpt" is not a CLI dtree knows`,
		},
		{
			name:    "a bad value is an error even when a higher layer overrides it",
			layers:  layers{user: "default_cli: gpt\n", project: "default_cli: codex\n"},
			layer:   settings.LayerUser,
			line:    1,
			key:     "default_cli",
			message: `"gpt" is not a CLI dtree knows`,
		},
		{
			name:    "not a boolean",
			layers:  layers{user: "write_log_short: maybe\n"},
			layer:   settings.LayerUser,
			line:    1,
			key:     "write_log_short",
			message: `"maybe" is not true or false`,
			hint:    "write_log_short takes true or false",
		},
		{
			name:    "broken YAML",
			layers:  layers{project: "default_cli: codex\nlog_dir: [a\n\ndefault_timeout: 5\n"},
			layer:   settings.LayerProject,
			line:    2,
			message: "dtree.yaml:2: not valid YAML: did not find expected ',' or ']'",
			hint:    "fix the YAML at line 2 of ",
		},
		{
			name:    "broken YAML: a mapping inside a value",
			layers:  layers{project: "default_cli: codex\nlog_dir: a: b\n"},
			layer:   settings.LayerProject,
			line:    2,
			message: "dtree.yaml:2: not valid YAML: mapping values are not allowed in this context",
		},
		{
			name:    "broken YAML: a tab",
			layers:  layers{user: "default_cli: codex\n\tlog_dir: x\n"},
			layer:   settings.LayerUser,
			line:    2,
			message: "config.yaml:2: not valid YAML: found a tab character that violates indentation",
		},
		{
			name:    "not a mapping",
			layers:  layers{user: "- default_cli\n"},
			layer:   settings.LayerUser,
			line:    1,
			message: "config.yaml:1: the file is not a YAML mapping of settings",
		},
		{
			name:    "unknown key",
			layers:  layers{project: "default_clii: codex\n"},
			layer:   settings.LayerProject,
			line:    1,
			key:     "default_clii",
			message: "default_clii: unknown setting; did you mean default_cli?",
			hint:    "the settings are: default_cli, default_validate_cli",
		},
		{
			name:    "a chart named dtree.yaml",
			layers:  layers{project: "title: Release\nnodes:\n  - {id: a, text: Tag it.}\n"},
			layer:   settings.LayerProject,
			message: "dtree.yaml: this is a chart (it has nodes:), but dtree reads ./dtree.yaml as its settings file",
			hint:    "rename the chart (mv dtree.yaml chart.yaml)",
		},
		{
			name:    "a chart given to --config",
			layers:  layers{config: "pages:\n  - id: p\n"},
			layer:   settings.LayerProject,
			message: "other.yaml: this is a chart (it has pages:), not a settings file",
			hint:    "--config takes a settings file",
		},
		{
			name:    "a typo of a CLI",
			layers:  layers{flags: []string{"--cli", "gemni"}},
			layer:   settings.LayerFlag,
			key:     "default_cli",
			message: `--cli: "gemni" is not a CLI dtree knows; did you mean gemini?`,
		},
		{
			name:    "key set twice",
			layers:  layers{project: "log_dir: a\nlog_dir: b\n"},
			layer:   settings.LayerProject,
			line:    2,
			key:     "log_dir",
			message: "log_dir: set twice (first on line 1)",
		},
		{
			name:    "a list for a value",
			layers:  layers{project: "log_dir: [a, b]\n"},
			layer:   settings.LayerProject,
			line:    1,
			key:     "log_dir",
			message: "must be a single value",
		},
		{
			name:    "--config file missing",
			layers:  layers{config: ""},
			layer:   settings.LayerProject,
			message: "cannot read the settings file: no such file or directory",
			hint:    "check the file given to --config",
		},
		{
			name:    "custom CLI missing binary",
			layers:  layers{user: "clis:\n  mine:\n    args: [\"{prompt}\"]\n"},
			layer:   settings.LayerUser,
			line:    2,
			key:     "clis.mine.binary",
			message: "config.yaml:2: clis.mine.binary: missing; a CLI needs the program to run",
			hint:    "add binary:",
		},
		{
			name:    "custom CLI without {prompt}",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    args: [run]\n"},
			layer:   settings.LayerProject,
			line:    4,
			key:     "clis.mine.args",
			message: "clis.mine.args: no {prompt} in them",
			hint:    "or set prompt_via: stdin",
		},
		{
			name:    "custom CLI with prompt_via file needs {prompt_file}",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: file\n    args: [\"{prompt}\"]\n"},
			layer:   settings.LayerProject,
			line:    5,
			key:     "clis.mine.args",
			message: "no {prompt_file} in them",
		},
		{
			name:    "custom CLI with a bad prompt_via",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: pipe\n"},
			layer:   settings.LayerProject,
			line:    4,
			key:     "clis.mine.prompt_via",
			message: `clis.mine.prompt_via: "pipe" is not arg, stdin or file`,
		},
		{
			name:    "custom CLI with a bad output",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\n    output: xml\n"},
			layer:   settings.LayerProject,
			line:    5,
			key:     "clis.mine.output",
			message: `clis.mine.output: "xml" is not text, json, jsonl or stream-json`,
		},
		{
			name:    "custom CLI with jsonl output and no answer_path",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\n    output: jsonl\n"},
			layer:   settings.LayerProject,
			line:    2,
			key:     "clis.mine.answer_path",
			message: `clis.mine.answer_path: missing; output jsonl needs the path of the answer`,
		},
		{
			name:    "custom CLI with a tool path and json output",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\n    output: json\n    answer_path: result\n    tool_name_path: tool.name\n"},
			layer:   settings.LayerProject,
			line:    7,
			key:     "clis.mine.tool_name_path",
			message: `clis.mine.tool_name_path: read only with output: jsonl (output is json)`,
		},
		{
			name:    "custom CLI with a tool input path and no tool name path",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\n    output: jsonl\n    answer_path: result\n    tool_input_path: tool.input\n"},
			layer:   settings.LayerProject,
			line:    7,
			key:     "clis.mine.tool_input_path",
			message: `clis.mine.tool_input_path: set without tool_name_path`,
		},
		{
			name:    "custom CLI with a tool error path and no tool end path",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\n    output: jsonl\n    answer_path: result\n    tool_error_path: is_error\n"},
			layer:   settings.LayerProject,
			line:    7,
			key:     "clis.mine.tool_error_path",
			message: `clis.mine.tool_error_path: set without tool_end_id_path`,
		},
		{
			name:    "custom CLI with json output and no answer_path",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    prompt_via: stdin\n    output: json\n"},
			layer:   settings.LayerProject,
			line:    2,
			key:     "clis.mine.answer_path",
			message: "clis.mine.answer_path: missing; output json needs",
		},
		{
			name:    "custom CLI with an unknown field",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    answer-path: x\n"},
			layer:   settings.LayerProject,
			line:    4,
			key:     "clis.mine.answer-path",
			message: "clis.mine.answer-path: not a field of a CLI definition",
			hint:    "answer_path",
		},
		{
			name:    "custom CLI with args not a list",
			layers:  layers{project: "clis:\n  mine:\n    binary: m\n    args: run\n"},
			layer:   settings.LayerProject,
			line:    4,
			key:     "clis.mine",
			message: "dtree.yaml:4: clis.mine: cannot unmarshal !!str `run` into []string",
		},
		{
			name:    "custom CLI names that differ only in case and dashes",
			layers:  layers{project: "clis:\n  my-cli:\n    binary: m\n    prompt_via: stdin\n  MyCli:\n    binary: n\n    prompt_via: stdin\n"},
			layer:   settings.LayerProject,
			line:    5,
			key:     "clis.MyCli",
			message: `clis.MyCli: the same CLI name as "my-cli"`,
		},
		{
			name:    "custom CLI with an unusable name",
			layers:  layers{project: "clis:\n  \"my cli\":\n    binary: m\n"},
			layer:   settings.LayerProject,
			line:    2,
			key:     "clis.my cli",
			message: "clis.my cli: not a usable CLI name",
		},
		{
			name:    "clis not a mapping",
			layers:  layers{project: "clis: [a]\n"},
			layer:   settings.LayerProject,
			line:    1,
			key:     "clis",
			message: "must be a mapping of CLI names",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := tt.layers
			if tt.name == "--config file missing" {
				l.config = "log_dir: c\n" // loaded, then swapped for a missing file
			}
			s, o, err := loadMissingConfig(t, l, tt.name == "--config file missing")
			require.Error(t, err)
			assert.Nil(t, s)
			var serr *settings.Error
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, tt.layer, serr.Source.Layer)
			if tt.layer == settings.LayerUser {
				assert.Equal(t, o.UserFile(), serr.Source.Name)
			}
			if tt.line > 0 {
				assert.Equal(t, tt.line, serr.Source.Line)
			}
			assert.Equal(t, tt.key, serr.Key)
			assert.Contains(t, err.Error(), tt.message)
			assert.Contains(t, serr.Hint, tt.hint)
			assert.NotEmpty(t, serr.Hint, "every settings error says what to do")
		})
	}
}

// loadMissingConfig is load, with the --config file removed first when
// missing is set.
func loadMissingConfig(t *testing.T, l layers, missing bool) (*settings.Settings, settings.LoadOptions, error) {
	t.Helper()
	if !missing {
		return load(t, l)
	}
	_, o, err := load(t, l)
	require.NoError(t, err)
	o.ConfigFile = "gone.yaml"
	s, err := settings.Load(o)
	return s, o, err
}
