package agent

// PromptVia says how a CLI takes its prompt.
type PromptVia string

const (
	// PromptArg puts the prompt in argv where the template says {prompt}
	// (or on stdin when it is longer than MaxArgPrompt).
	PromptArg PromptVia = "arg"
	// PromptStdin writes the prompt to the child's stdin and closes it.
	PromptStdin PromptVia = "stdin"
	// PromptFile writes the prompt to a temporary file and puts its path
	// where the template says {prompt_file}.
	PromptFile PromptVia = "file"
)

// Output formats of a CLI's stdout. Text and json are generic: a custom
// CLI describes its JSON with the *Path fields. The others are the
// envelopes of the built-in CLIs, read by code of their own (streams.go,
// formats.go): event streams whose answer, usage and errors are spread over
// many lines, or text with figures in it.
const (
	OutputText = "text" // the whole stdout is the answer
	OutputJSON = "json" // one JSON object; AnswerPath names the answer text
	// OutputJSONL is JSON lines, one event a line, read as they arrive:
	// AnswerPath names the answer in the event that has it, the Tool*
	// paths the tool calls (customjsonl.go).
	OutputJSONL = "jsonl"

	OutputStreamJSON = "stream-json"        // Claude Code's and Amp's JSON lines, ending in a "result" event
	OutputCodex      = "codex-jsonl"        // codex exec --json events
	OutputGemini     = "gemini-json"        // gemini --output-format stream-json events, or its json envelope
	OutputCopilot    = "copilot-jsonl"      // copilot --output-format json events
	OutputOpencode   = "opencode-jsonl"     // opencode run --format json events
	OutputAider      = "aider-text"         // aider's transcript, with its "Tokens:" and error lines
	OutputCursor     = "cursor-stream-json" // cursor-agent --output-format stream-json events (or its json result)
	OutputQwen       = "qwen-json"          // qwen -o stream-json events (or -o json: the same in one array), ending in a "result"
)

// MaxArgPrompt is the longest prompt put in argv: Linux refuses one argv
// string over 128 KiB (MAX_ARG_STRLEN), so longer prompts go on stdin, or to
// a file for CLIs that cannot read stdin (readme/run.md#agent-processes).
const MaxArgPrompt = 100 << 10

// Definition says how to run one agent CLI unattended.
type Definition struct {
	Name   string `yaml:"name" json:"name"`
	Binary string `yaml:"binary" json:"binary"`
	// AltBinaries are other names its program is installed under, tried
	// in order when Binary is not found (cursor-agent is also "agent").
	AltBinaries []string `yaml:"alt_binaries" json:"alt_binaries"`
	// Args is the argv after the binary. "{prompt}" is replaced by the
	// prompt, "{prompt_file}" by the path of a file holding it, and
	// "{model}" by the model when one is set (the element is dropped when
	// not).
	Args []string `yaml:"args" json:"args"`
	// ModelValues, when set, are the only models the CLI's model argument
	// takes (amp's --mode: low, medium, high, ultra, …): another model, meant for
	// other CLIs, leaves the {model} argument out rather than break the
	// call. Matched ignoring case; passed as listed.
	ModelValues []string  `yaml:"model_values" json:"model_values"`
	PromptVia   PromptVia `yaml:"prompt_via" json:"prompt_via"`
	// MaxTurnsArgs are added to the argv when a call has a max_turns, with
	// "{max_turns}" replaced by it (claude's --max-turns N): the CLI
	// stops itself. A CLI without them has its turns counted from its
	// stream by dtree (readme/run.md#max-turns).
	MaxTurnsArgs []string `yaml:"max_turns_args" json:"max_turns_args"`
	// MaxCostArgs are added to the argv when the run has a cost budget,
	// with "{max_cost}" replaced by what is left of it in US dollars
	// (claude's --max-budget-usd): the CLI stops itself there, and reports
	// what it spent, which a call dtree stops cannot
	// (readme/run.md#budgets).
	MaxCostArgs []string `yaml:"max_cost_args" json:"max_cost_args"`
	// StdinFallback says the CLI reads the prompt from stdin when argv
	// has none: used for prompts over MaxArgPrompt, and for prompts that
	// start with '-' (which the CLI could take for an option).
	StdinFallback bool `yaml:"stdin_fallback" json:"stdin_fallback"`
	// FallbackArgs replace Args when the prompt goes on stdin instead, or,
	// when they hold {prompt_file}, when it goes to a file instead.
	FallbackArgs []string `yaml:"fallback_args" json:"fallback_args"`
	// PromptFileInWorkdir writes the {prompt_file} file in the working
	// directory instead of the temporary directory: for a CLI that is told
	// to read the file with its own tools, which may refuse to read outside
	// its workspace (cursor's --workspace, qodo's --dir).
	PromptFileInWorkdir bool   `yaml:"prompt_file_in_workdir" json:"prompt_file_in_workdir"`
	Output              string `yaml:"output" json:"output"`
	// AnswerPath is a dotted path into the JSON output ("result").
	AnswerPath string `yaml:"answer_path" json:"answer_path"`
	// ErrorPath names a bool that, when true, makes the call a failure
	// whatever the exit code ("is_error").
	ErrorPath string `yaml:"error_path" json:"error_path"`
	// StatusPath names a string that must equal StatusOK for the call to
	// succeed ("subtype" = "success" for claude); a missing one is fine.
	StatusPath string `yaml:"status_path" json:"status_path"`
	StatusOK   string `yaml:"status_ok" json:"status_ok"`
	// APIStatusPath names the HTTP status of the model API's answer when
	// the CLI reports an API error (claude's api_error_status): the
	// failure's message then starts with it ("API error 401: …"). Built-ins
	// only.
	APIStatusPath string `yaml:"-" json:"-"`
	// Usage paths into the JSON output; empty when the CLI does not report.
	// Paths joined by "+" are summed ("usage.input+usage.cached"): the
	// figure is unknown only when none of them is there.
	InputTokensPath  string `yaml:"input_tokens_path" json:"input_tokens_path"`
	OutputTokensPath string `yaml:"output_tokens_path" json:"output_tokens_path"`
	CostPath         string `yaml:"cost_path" json:"cost_path"`
	DurationPath     string `yaml:"duration_path" json:"duration_path"`
	// The tool calls of an output jsonl stream: an event with a string at
	// ToolNamePath is a call, its input (an object or a string) at
	// ToolInputPath, its id at ToolIDPath; an event with a string at
	// ToolEndIDPath ends the call of that id, failed when ToolErrorPath
	// there is true, a non-empty string or an object.
	ToolNamePath  string `yaml:"tool_name_path" json:"tool_name_path"`
	ToolInputPath string `yaml:"tool_input_path" json:"tool_input_path"`
	ToolIDPath    string `yaml:"tool_id_path" json:"tool_id_path"`
	ToolEndIDPath string `yaml:"tool_end_id_path" json:"tool_end_id_path"`
	ToolErrorPath string `yaml:"tool_error_path" json:"tool_error_path"`
	// VersionArgs make Binary print its version, for `dtree clis`: a
	// built-in's is --version. A custom CLI is asked only when its
	// definition gives them: its program may take any argument for a
	// prompt, and send `--version` to a paid model.
	VersionArgs []string `yaml:"version_args" json:"version_args"`
	// Env is added to the child's environment; UnsetEnv is removed from it.
	Env      map[string]string `yaml:"env" json:"env"`
	UnsetEnv []string          `yaml:"unset_env" json:"unset_env"`
	// EnvDefaults are added to the child's environment only where dtree's
	// own environment does not set them: a built-in's choice that the user
	// may override (claude's CLAUDE_CODE_MAX_RETRIES), where Env is what
	// the CLI must get. Not settable under clis:, where env: says it all.
	EnvDefaults map[string]string `yaml:"-" json:"-"`
	// KeyVars are the environment variables holding its API key, any of
	// which will do.
	KeyVars     []string `yaml:"key_vars" json:"key_vars"`
	InstallHint string   `yaml:"install_hint" json:"install_hint"`
	// InProcess says the CLI is answered inside dtree, not by a program:
	// the replay agent (readme/replay.md). It has no binary to look up or
	// start; a run that has its runner (--answers) answers its calls, and
	// Run refuses them. Built-ins only.
	InProcess bool `yaml:"-" json:"-"`
	// ShowPrompt puts the prompt itself in the argv the logs show, not
	// "<prompt: N bytes>": a command step's command (Shell). Built-ins
	// only.
	ShowPrompt bool `yaml:"-" json:"-"`
	// Silent says an exit 0 with no output is success, not an empty
	// answer: a command (Shell). Built-ins only.
	Silent bool `yaml:"-" json:"-"`
}
