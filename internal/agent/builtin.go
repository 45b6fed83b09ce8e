package agent

import (
	"fmt"
	"slices"
	"strings"
)

// builtins are the CLIs dtree can run without settings. The others in
// builtinNames are known by name (so charts naming them lint clean) and get
// their definitions with the built-in CLI work (issue 4); until then a
// custom definition under clis: runs them.
var builtins = map[string]Definition{
	"claude": {
		Name:   "claude",
		Binary: "claude",
		// -p is one-shot print mode; JSON gives is_error and usage even when
		// the exit code is 0 (agent-clis.md §1).
		Args:             []string{"-p", "{prompt}", "--output-format", "json", "--dangerously-skip-permissions", "--model={model}"},
		PromptVia:        PromptArg,
		StdinFallback:    true,
		FallbackArgs:     []string{"-p", "--output-format", "json", "--dangerously-skip-permissions", "--model={model}"},
		Output:           OutputJSON,
		AnswerPath:       "result",
		ErrorPath:        "is_error",
		StatusPath:       "subtype",
		StatusOK:         "success",
		InputTokensPath:  "usage.input_tokens",
		OutputTokensPath: "usage.output_tokens",
		CostPath:         "total_cost_usd",
		DurationPath:     "duration_ms",
		// Claude Code refuses to start inside another Claude Code session.
		UnsetEnv:    []string{"CLAUDECODE"},
		KeyVars:     []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"},
		InstallHint: "install Claude Code: npm install -g @anthropic-ai/claude-code",
	},
}

// Registry resolves CLI names to definitions: custom ones (settings' clis:)
// first, then the built-ins.
type Registry struct {
	custom map[string]Definition // by lower-case name
}

// NewRegistry returns a registry with the given custom definitions.
func NewRegistry(custom map[string]Definition) *Registry {
	r := &Registry{custom: map[string]Definition{}}
	for name, d := range custom {
		if d.Name == "" {
			d.Name = name
		}
		r.custom[strings.ToLower(name)] = d
	}
	return r
}

// Names returns every CLI name the registry knows.
func (r *Registry) Names() Names {
	var custom []string
	for name := range r.custom {
		custom = append(custom, name)
	}
	slices.Sort(custom)
	return Names{}.With(custom...)
}

// NotRunnableError is a CLI dtree knows by name but has no way to run yet.
type NotRunnableError struct{ Name string }

func (e *NotRunnableError) Error() string {
	return fmt.Sprintf("dtree cannot run CLI %s yet: only claude and CLIs defined under clis: in the settings can run", e.Name)
}

// Lookup returns the definition for a CLI name, matched as tags are.
func (r *Registry) Lookup(name string) (Definition, error) {
	canonical, ok := r.Names().Canonical(name)
	if !ok {
		return Definition{}, fmt.Errorf("unknown CLI %q", name)
	}
	if d, ok := r.custom[canonical]; ok {
		return d, nil
	}
	if d, ok := builtins[canonical]; ok {
		return d, nil
	}
	return Definition{}, &NotRunnableError{Name: canonical}
}
