package agent

import "github.com/dtree-dev/dtree/types"

// Shell runs command steps (readme/context.md#command-steps): the call's
// prompt is the command, given to /bin/sh -c, or, when it is too long for
// argv or starts with '-', written to a temporary file (mode 0600,
// removed after the call) that /bin/sh runs as a script. Stdin is empty
// either way: a program in the command that reads stdin (cat, read, ssh)
// must not eat the rest of the command, as it would with /bin/sh -s.
// Run treats it as any CLI, so a command has an agent's timeout, process
// group, environment and output logging; its output is text, and the logs
// show the command itself, not its size.
var Shell = Definition{
	Name:         types.CommandCLI,
	Binary:       "/bin/sh",
	Args:         []string{"-c", "{prompt}"},
	PromptVia:    PromptArg,
	FallbackArgs: []string{"{prompt_file}"},
	Output:       OutputText,
	ShowPrompt:   true,
	Silent:       true,
}
