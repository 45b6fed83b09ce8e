package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// builtins are the CLIs dtree runs without settings, by codename; each
// entry says how to run that CLI unattended, with the flags, envelopes and
// traps that readme/clis.md gives per CLI.
// Adding one is one entry here, and its names in builtinAliases.
//
// Common to all: the prompt is an argv element where the CLI's one-shot
// form takes it, and goes on stdin (or, for CLIs that cannot read stdin,
// into a file the short argv prompt names) when it is over MaxArgPrompt or
// starts with '-'; "{model}" arguments are dropped when no model is set.
// ReplayName is the built-in replay agent's name: it answers from an
// answers file, inside dtree (readme/replay.md).
const ReplayName = "replay"

var builtins = map[string]Definition{
	"claude": {
		Name:   "claude",
		Binary: "claude",
		// -p is one-shot print mode; stream-json (which -p wants with
		// --verbose) is one JSON event a line as the agent works: its tool
		// calls, their results, each turn's usage, then a "result" event
		// with is_error and usage even when the exit code is 0
		// (readme/clis.md#claude). API errors exit 1 with is_error,
		// subtype "success" and api_error_status (2.1.197). Without
		// --no-session-persistence each call leaves its transcript, the
		// whole prompt, in ~/.claude/projects/ (seen with 2.1.197).
		Args: []string{"-p", "{prompt}", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
			"--no-session-persistence", "--model={model}"},
		PromptVia:     PromptArg,
		StdinFallback: true,
		FallbackArgs: []string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
			"--no-session-persistence", "--model={model}"},
		Output: OutputStreamJSON,
		// Claude Code refuses to start inside another Claude Code session.
		UnsetEnv: []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"},
		// It retries a failed API call 10 times, about 3 silent minutes,
		// before failing; dtree retries the node itself, with feedback and
		// backoff, and fails a bad key at once. A value the user exports
		// wins. CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is left to the
		// user (readme/clis.md): it also turns off the auto-updater and
		// error reports, which are theirs to choose.
		EnvDefaults: map[string]string{"CLAUDE_CODE_MAX_RETRIES": "1"},
		KeyVars:     []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"},
		InstallHint: "install Claude Code: npm install -g @anthropic-ai/claude-code",
		// A max_turns is claude's own: it stops with error_max_turns.
		// 2.1.197 takes --max-turns though its --help does not list it (an
		// unknown option is "error: unknown option").
		MaxTurnsArgs: []string{"--max-turns", "{max_turns}"},
		// Its stream gives the cost only in its result event, so a call
		// dtree stopped mid-way has none: told what is left of the run's
		// --max-cost, claude stops itself there and says what it spent
		// (subtype error_max_budget_usd).
		MaxCostArgs: []string{"--max-budget-usd", "{max_cost}"},
	},
	"codex": {
		Name:   "codex",
		Binary: "codex",
		// exec never asks for approval; the sandbox flag lets it write and
		// run commands as the other built-ins do. Outside a git repository
		// it refuses without --skip-git-repo-check (readme/clis.md#codex).
		// Without --ephemeral each call leaves a session file of some 33 KB,
		// the whole prompt in it, under ~/.codex/sessions (seen with 0.169.0).
		Args: []string{"exec", "--json", "--color", "never", "--skip-git-repo-check", "--ephemeral",
			"--dangerously-bypass-approvals-and-sandbox", "--model={model}", "{prompt}"},
		PromptVia:     PromptArg,
		StdinFallback: true,
		FallbackArgs: []string{"exec", "--json", "--color", "never", "--skip-git-repo-check", "--ephemeral",
			"--dangerously-bypass-approvals-and-sandbox", "--model={model}", "-"},
		Output:      OutputCodex,
		KeyVars:     []string{"CODEX_API_KEY", "OPENAI_API_KEY"},
		InstallHint: "install Codex: npm install -g @openai/codex",
	},
	"gemini": {
		Name:   "gemini",
		Binary: "gemini",
		// Headless: tools that need approval are denied unless yolo; an
		// untrusted folder is refused, exit 55, unless trusted
		// (readme/clis.md#gemini). 0.61.0 reads GEMINI_CLI_TRUST_WORKSPACE
		// (GEMINI_TRUST_WORKSPACE does nothing); its --skip-trust only sets
		// that variable, and as a flag would make every call of a gemini
		// too old to know it fail on an unknown argument, where an unknown
		// variable is ignored. A default: a user who exports "false" wants
		// gemini's restricted mode, and gets it (and exit 55's hint).
		// stream-json prints its events as they happen (tool calls, then a
		// result with the stats), where json prints one envelope at the end.
		Args:          []string{"-p", "{prompt}", "--output-format", "stream-json", "--approval-mode", "yolo", "--model={model}"},
		PromptVia:     PromptArg,
		StdinFallback: true,
		FallbackArgs:  []string{"--output-format", "stream-json", "--approval-mode", "yolo", "--model={model}"},
		Output:        OutputGemini,
		EnvDefaults:   map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"},
		KeyVars:       []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"},
		InstallHint:   "install Gemini CLI: npm install -g @google/gemini-cli",
	},
	"cursor": {
		Name:   "cursor",
		Binary: "cursor-agent",
		// Its installer also links it as "agent" (readme/clis.md#cursor), the
		// only name some installs have.
		AltBinaries: []string{"agent"},
		// Without --force changes are only proposed; without --trust an
		// unknown workspace is refused, with exit 0 (readme/clis.md#cursor).
		// Reading stdin is undocumented, so long prompts go in a file.
		// stream-json prints its tool calls as they happen; its result
		// event is the json format's one object.
		Args:         []string{"-p", "{prompt}", "--output-format", "stream-json", "--force", "--trust", "--model={model}"},
		PromptVia:    PromptArg,
		FallbackArgs: []string{"-p", filePrompt, "--output-format", "stream-json", "--force", "--trust", "--model={model}"},
		// Its tools may not read outside the workspace (readme/clis.md#cursor).
		PromptFileInWorkdir: true,
		Output:              OutputCursor,
		KeyVars:             []string{"CURSOR_API_KEY"},
		InstallHint:         "install Cursor CLI: curl https://cursor.com/install -fsS | bash",
	},
	"copilot": {
		Name:   "copilot",
		Binary: "copilot",
		// --allow-all and --no-ask-user keep -p from stopping at a prompt
		// (readme/clis.md#copilot). Stdin is ignored when -p has text, but
		// without -p, its stdout not a terminal, copilot 1.0.102 takes
		// piped stdin as the prompt and runs it non-interactively: a 270 KB
		// prompt reached the model whole. A prompt file would not do: its
		// file tool refuses one of 200 KiB ("File too large to read at
		// once").
		Args:          []string{"-p", "{prompt}", "--output-format", "json", "--allow-all", "--no-ask-user", "--no-color", "--model={model}"},
		PromptVia:     PromptArg,
		StdinFallback: true,
		FallbackArgs:  []string{"--output-format", "json", "--allow-all", "--no-ask-user", "--no-color", "--model={model}"},
		Output:        OutputCopilot,
		// COPILOT_PROVIDER_API_KEY: a provider of your own (BYOK), which
		// needs no GitHub login.
		KeyVars:     []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY"},
		InstallHint: "install GitHub Copilot CLI: npm install -g @github/copilot",
	},
	"qodo": {
		Name:   "qodo",
		Binary: "qodo",
		// --ci -y: no questions; -q: the final result only
		// (readme/clis.md#qodo). Neither stdin nor an envelope is documented.
		Args:                []string{"--ci", "-y", "-q", "--model={model}", "{prompt}"},
		PromptVia:           PromptArg,
		FallbackArgs:        []string{"--ci", "-y", "-q", "--model={model}", filePrompt},
		PromptFileInWorkdir: true,
		Output:              OutputText,
		KeyVars:             []string{"QODO_API_KEY"},
		InstallHint:         "install Qodo Command: npm install -g @qodo/command, then qodo login",
	},
	"opencode": {
		Name:   "opencode",
		Binary: "opencode",
		// run quotes every argument that has a space before joining them
		// into the message, so the prompt goes on stdin, read whole when
		// no message is given. Without --auto, permission asks are
		// rejected (readme/clis.md#opencode). Without --title it asks the model
		// for a title first, one more request per call (1.18.33 against a
		// mock server: two requests, one with --title).
		// OPENCODE_DISABLE_MODELS_FETCH is left to the user
		// (readme/clis.md): with it, opencode knows only the models of the
		// catalogue it was built with.
		Args:        []string{"run", "--format", "json", "--auto", "--title", "dtree", "--model={model}"},
		PromptVia:   PromptStdin,
		Output:      OutputOpencode,
		KeyVars:     []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY"},
		InstallHint: "install opencode: npm install -g opencode-ai",
	},
	"aider": {
		Name:   "aider",
		Binary: "aider",
		// --message runs one message and exits; it cannot read the prompt
		// from stdin, so a long one goes in --message-file. dtree's nodes
		// decide about commits, so aider makes none (readme/clis.md#aider).
		Args: []string{"--message", "{prompt}", "--yes-always", "--no-auto-commits", "--no-pretty", "--no-stream",
			"--no-check-update", "--no-analytics", "--no-show-model-warnings", "--model={model}"},
		PromptVia: PromptArg,
		FallbackArgs: []string{"--message-file", "{prompt_file}", "--yes-always", "--no-auto-commits", "--no-pretty", "--no-stream",
			"--no-check-update", "--no-analytics", "--no-show-model-warnings", "--model={model}"},
		Output:      OutputAider,
		KeyVars:     []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"},
		InstallHint: "install aider: python -m pip install aider-install && aider-install",
	},
	"qwen": {
		Name:   "qwen",
		Binary: "qwen",
		// Qwen Code 0.15.10: a positional prompt runs one-shot (-p is
		// deprecated), --yolo approves every tool, -o stream-json prints
		// its events a line each as they happen (-o json prints the same
		// events in one array at the end); with no prompt argument it
		// reads the prompt from stdin (a 290 KB one arrived whole).
		// --chat-recording=false keeps it from saving each call's chat,
		// prompt included, under ~/.qwen/projects/.
		Args:          []string{"-o", "stream-json", "--yolo", "--chat-recording=false", "--model={model}", "{prompt}"},
		PromptVia:     PromptArg,
		StdinFallback: true,
		FallbackArgs:  []string{"-o", "stream-json", "--yolo", "--chat-recording=false", "--model={model}"},
		Output:        OutputQwen,
		KeyVars:       []string{"OPENAI_API_KEY", "DASHSCOPE_API_KEY", "BAILIAN_CODING_PLAN_API_KEY"},
		InstallHint:   "install Qwen Code: npm install -g @qwen-code/qwen-code",
	},
	"amp": {
		Name:   "amp",
		Binary: "amp",
		// -x is execute mode; amp has no model flag, its --mode picks
		// low, medium, high or ultra (smart, rush and deep still work,
		// hidden: readme/clis.md#amp): a
		// run's --model gpt-5, meant for the other CLIs, must not become
		// --mode=gpt-5.
		Args:          []string{"-x", "{prompt}", "--stream-json", "--dangerously-allow-all", "--mode={model}"},
		ModelValues:   []string{"low", "medium", "high", "ultra", "smart", "rush", "deep"},
		PromptVia:     PromptArg,
		StdinFallback: true,
		FallbackArgs:  []string{"-x", "--stream-json", "--dangerously-allow-all", "--mode={model}"},
		Output:        OutputStreamJSON,
		KeyVars:       []string{"AMP_API_KEY"},
		InstallHint:   "install Amp: npm install -g @ampcode/cli",
	},
	// replay is no program: it answers each call from an answers file,
	// inside dtree (internal/replay, readme/replay.md), when `dtree run
	// CHART --answers FILE` brings its runner.
	ReplayName: {
		Name:        ReplayName,
		InProcess:   true,
		Output:      OutputText,
		InstallHint: "replay is built into dtree; pass --answers FILE",
	},
}

// filePrompt is the argv prompt of CLIs that read neither stdin nor a
// prompt file: they read the file with their own tools, so it is written
// in the working directory (PromptFileInWorkdir), where cursor and qodo
// are sure to be allowed to read. aider reads its --message-file itself,
// so that file stays in the temporary directory, out of the repository
// whose files aider lists and edits.
const filePrompt = "Your task is in the file {prompt_file}. Read the whole file, then do exactly what it says, including the format of your final answer."

// builtinAliases are the names besides its codename that pick a built-in,
// matched as codenames are (types.FoldName: case, '-', '_' and spaces do
// not count).
var builtinAliases = map[string][]string{
	"claude":  {"claude-code"},
	"codex":   {"codex-cli"},
	"gemini":  {"gemini-cli"},
	"cursor":  {"cursor-agent", "agent", "cursor-cli"},
	"copilot": {"copilot-cli", "github-copilot"},
	"qodo":    {"qodo-gen", "qodo-command"},
	"aider":   {"aider-chat"},
	"qwen":    {"qwen-code"},
}

// builtinReports overrides what a built-in's output format can report,
// where its CLI leaves a figure out (amp's stream-json has no cost).
var builtinReports = map[string][]string{
	"amp": {"input_tokens", "output_tokens", "duration_ms"},
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

// NotRunnableError is a CLI dtree knows by name but has no definition for.
type NotRunnableError struct{ Name string }

func (e *NotRunnableError) Error() string {
	return fmt.Sprintf("dtree cannot run CLI %s: it has no definition; define it under clis: in the settings", e.Name)
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

// Entry is one CLI the registry knows, as `dtree clis` lists it.
type Entry struct {
	Def     Definition
	Aliases []string // names besides Def.Name that pick it
	Builtin bool     // dtree has a definition of this name
	Custom  bool     // defined under clis: (replacing the built-in if Builtin)
}

// Entries returns every CLI the registry can run, built-in and custom,
// sorted by name; a custom definition replaces the built-in of its name.
// A built-in's alias that a custom CLI has taken as its name (agent:) is
// that CLI's, and not listed with the built-in.
func (r *Registry) Entries() []Entry {
	taken := func(alias string) bool {
		for name := range r.custom {
			if types.FoldName(name) == types.FoldName(alias) {
				return true
			}
		}
		return false
	}
	byName := map[string]Entry{}
	for name, d := range builtins {
		aliases := slices.DeleteFunc(slices.Clone(builtinAliases[name]), taken)
		byName[name] = Entry{Def: d, Aliases: aliases, Builtin: true}
	}
	for name, d := range r.custom {
		e := byName[name]
		e.Def, e.Custom = d, true
		byName[name] = e
	}
	out := make([]Entry, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out
}
