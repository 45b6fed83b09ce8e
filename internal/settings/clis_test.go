package settings_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/settings"
)

// The example of readme/settings.md.
const myCLI = `clis:
  MyCLI:
    binary: my-agent
    args: ["run", "--prompt", "{prompt}"]
    prompt_via: arg        # arg | stdin | file
    output: json           # text | json
    answer_path: result
    env: {MY_FLAG: "1"}
`

func TestCustomCLIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		layers layers
		check  func(t *testing.T, s *settings.Settings)
	}{
		{
			name:   "a custom CLI, as documented",
			layers: layers{user: myCLI},
			check: func(t *testing.T, s *settings.Settings) {
				assert.Equal(t, map[string]agent.Definition{"mycli": {
					Name: "mycli", Binary: "my-agent", Args: []string{"run", "--prompt", "{prompt}"}, PromptVia: agent.PromptArg,
					Output: agent.OutputJSON, AnswerPath: "result", Env: map[string]string{"MY_FLAG": "1"}, // the variable's case kept
				}}, s.CLIs)
				assert.Equal(t, settings.Source{Layer: settings.LayerUser, Name: s.Sources["clis.mycli"].Name, Line: 2}, s.Sources["clis.mycli"])
			},
		},
		{
			name:   "names usable by agent.Names, in any case",
			layers: layers{user: myCLI},
			check: func(t *testing.T, s *settings.Settings) {
				for _, in := range []string{"mycli", "MYCLI", "MyCLI"} {
					c, ok := s.Names().Canonical(in)
					assert.True(t, ok, in)
					assert.Equal(t, "mycli", c)
				}
				assert.Contains(t, s.Names().List(), "mycli")
				c, ok := s.Names().Canonical("codex")
				assert.True(t, ok, "built-ins stay known")
				assert.Equal(t, "codex", c)
			},
		},
		{
			name:   "settings may name a custom CLI",
			layers: layers{user: myCLI, project: "default_cli: MyCli\n", env: map[string]string{"DTREE_DEFAULT_VALIDATE_CLI": "mycli"}},
			check: func(t *testing.T, s *settings.Settings) {
				assert.Equal(t, "mycli", s.DefaultCLI)
				assert.Equal(t, "mycli", s.DefaultValidateCLI)
			},
		},
		{
			name:   "a built-in's name replaces the built-in",
			layers: layers{user: "clis:\n  Claude:\n    binary: /opt/claude-wrapper\n    prompt_via: stdin\n"},
			check: func(t *testing.T, s *settings.Settings) {
				require.Contains(t, s.CLIs, "claude")
				assert.Equal(t, "/opt/claude-wrapper", s.CLIs["claude"].Binary)
				assert.Equal(t, agent.OutputText, s.CLIs["claude"].Output, "output defaults to text")
				c, ok := s.Names().Canonical("claude")
				assert.True(t, ok)
				assert.Equal(t, "claude", c)
				assert.Equal(t, []string{"aider", "amp", "claude", "codex", "copilot", "cursor", "gemini", "opencode", "qodo", "qwen", "replay"}, s.Names().List())
			},
		},
		{
			name: "the project file's definition replaces the user file's whole",
			layers: layers{
				user:    "clis:\n  mine:\n    binary: a\n    args: [\"{prompt}\"]\n    answer_path: x\n  other:\n    binary: o\n    prompt_via: stdin\n",
				project: "clis:\n  Mine:\n    binary: b\n    prompt_via: stdin\n",
				env:     trusted,
			},
			check: func(t *testing.T, s *settings.Settings) {
				assert.Equal(t, agent.Definition{Name: "mine", Binary: "b", PromptVia: agent.PromptStdin, Output: agent.OutputText}, s.CLIs["mine"])
				assert.Equal(t, settings.LayerProject, s.Sources["clis.mine"].Layer)
				assert.Equal(t, "o", s.CLIs["other"].Binary, "other CLIs of the user file stay")
				assert.Equal(t, settings.LayerUser, s.Sources["clis.other"].Layer)
			},
		},
		{
			name:   "prompt in a file",
			layers: layers{project: "clis:\n  f:\n    binary: f\n    prompt_via: file\n    args: [\"--prompt-file={prompt_file}\"]\n", env: trusted},
			check: func(t *testing.T, s *settings.Settings) {
				assert.Equal(t, agent.PromptFile, s.CLIs["f"].PromptVia)
			},
		},
		{
			name:   "empty clis",
			layers: layers{project: "clis:\n"},
			check: func(t *testing.T, s *settings.Settings) {
				assert.Empty(t, s.CLIs)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := load(t, tt.layers)
			require.NoError(t, err)
			tt.check(t, s)
		})
	}
}
