package types

import (
	"strings"
	"time"
)

// Defaults are the settings a node falls back to when its tags and metadata
// say nothing. ValidateCLI and RetryCLI may be empty: the node's own CLI is
// used then.
type Defaults struct {
	// CLI is default_cli: a CLI, or a fallback list of them separated by
	// commas ("claude,codex"; SplitCLIs).
	CLI         string
	ValidateCLI string
	RetryCLI    string
	Retries     int
	Timeout     time.Duration
	MaxVisits   int
	// MaxTurns is max_turns: the most model turns of one agent call, 0
	// for no bound.
	MaxTurns int
}

// Built-in defaults (readme/settings.md#the-settings).
const (
	DefaultCLI       = "claude"
	DefaultRetries   = 3
	DefaultTimeout   = 600 * time.Second
	DefaultMaxVisits = 10
	// DefaultParallel is parallel's default: how many agent calls and
	// command steps a run makes at once (readme/parallel.md#limits).
	DefaultParallel = 4
	// DefaultLogDir is log_dir's default: a command dtree prints for a
	// run elsewhere names its --log-dir (run.ResumeCommand).
	DefaultLogDir = ".dtree/runs"
)

// CommandCLI is the CLI a command step shows (its Settings.CLI): the
// shell that runs its command (readme/context.md#command-steps).
const CommandCLI = "sh"

// BuiltinDefaults are the defaults before any settings are read.
func BuiltinDefaults() Defaults {
	return Defaults{CLI: DefaultCLI, Retries: DefaultRetries, Timeout: DefaultTimeout, MaxVisits: DefaultMaxVisits}
}

// ProcessedNode is a node with everything the runner needs resolved from its
// tags, metadata and the defaults. It points at the document's node rather
// than copying it, and nodes whose settings are all defaults share one
// Settings: treat both as read-only.
type ProcessedNode struct {
	*Node
	*Settings
}

// Settings are a node's resolved run settings.
type Settings struct {
	// Role is how the node runs: terminator, decision or process.
	Role string `json:"role"`
	CLI  string `json:"cli"`
	// Fallback are the CLIs after CLI in the node's list (cli: claude,
	// codex): when an attempt fails for an agent reason, the next attempt
	// uses the next one (readme/run.md#fallback-clis).
	Fallback    []string `json:"fallback,omitempty"`
	ValidateCLI string   `json:"validate_cli"`
	RetryCLI    string   `json:"retry_cli"`
	Retries     int      `json:"retries"`
	// Timeout is per agent call; TimeoutS is the same in seconds for JSON.
	Timeout  time.Duration `json:"-"`
	TimeoutS float64       `json:"timeout_s"`
	Validate bool          `json:"validate"`
	// ValidatePrompt is the node's own validation prompt; empty means the
	// default one.
	ValidatePrompt string `json:"validate_prompt"`
	MaxVisits      int    `json:"max_visits"`
	// Model is the node's model (metadata model), passed with its CLI's
	// own flag on calls made with the node's CLI; empty means the run's
	// --model, or the CLI's default.
	Model string `json:"model,omitempty"`
	// KeepRunning (metadata keep_running) lets what the node's agent calls
	// start run on until the run ends (a server for later steps); otherwise
	// it is ended when each call ends
	// (readme/run.md#what-dtree-stops-and-when).
	KeepRunning bool `json:"keep_running,omitempty"`
	// MaxTurns (metadata max_turns, setting max_turns) bounds the model
	// turns of one agent call: passed to a CLI that has a flag for it,
	// else counted from its stream, and the call stopped past it
	// (readme/run.md#max-turns); 0 is no bound.
	MaxTurns int `json:"max_turns,omitempty"`
	// Marked is the step kind a key of the node's metadata marks it as
	// (command: StepCommand); "" for its role's. nodeconf.Step reads it
	// into the node's Step.
	Marked Step `json:"-"`
	// Command (metadata command, YAML command:) makes the node a command
	// step: dtree runs it through /bin/sh -c instead of an agent
	// (readme/context.md#command-steps).
	Command string `json:"command,omitempty"`
	// Context (metadata context) is how much of the run so far the node's
	// prompts get: none, previous or path; empty takes the chart's or
	// the run's (readme/context.md#the-run-so-far).
	Context string `json:"context,omitempty"`
	// Paths (metadata paths) are the globs, as in a .gitignore, of the
	// files the node's step may change; a change outside them is undone
	// and fails the attempt. Empty: any file (readme/workspace.md#scope).
	Paths []string `json:"paths,omitempty"`
	// Rollback (metadata rollback) is RollbackAttempt or RollbackKeep:
	// whether a failed attempt's change is undone before the retry;
	// empty takes the run's setting (readme/workspace.md#rollback).
	Rollback string `json:"rollback,omitempty"`
}

// What a failed attempt's change becomes before its retry
// (readme/workspace.md#rollback).
const (
	RollbackAttempt = "attempt" // undone: each retry starts from the same tree
	RollbackKeep    = "keep"    // kept: the retry builds on it
)

// NormalizedDocument is what `dtree inspect --json` prints: the document with
// every node resolved. readme/inspect.md documents it.
type NormalizedDocument struct {
	FormatVersion int             `json:"format_version"`
	Title         string          `json:"title"`
	Status        string          `json:"status"`
	Source        string          `json:"source"`
	Format        string          `json:"format"`
	Pages         []Page          `json:"pages"`
	Nodes         []ProcessedNode `json:"nodes"`
	Edges         []Edge          `json:"edges"`
	Warnings      []Diagnostic    `json:"warnings"`
	// Vars are the chart's variables (readme/context.md#variables).
	Vars []Var `json:"vars,omitempty"`
}

// SplitCLIs splits a CLI list, "claude, codex", into its names, empty
// ones left out.
func SplitCLIs(v string) []string {
	var out []string
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// CLIChain is the node's CLI and its fallbacks, in order.
func (s *Settings) CLIChain() []string {
	return append([]string{s.CLI}, s.Fallback...)
}
