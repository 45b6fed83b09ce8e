package agent

import "github.com/dtree-dev/dtree/types"

// Shell runs command steps (readme/context.md#command-steps): the call's
// prompt is the command, given to /bin/sh -c, or on stdin to /bin/sh -s
// when it is too long for argv or starts with '-'. Run treats it as any
// CLI, so a command has an agent's timeout, process group, environment and
// output logging; its output is text, and the logs show the command
// itself, not its size.
var Shell = Definition{
	Name:          types.CommandCLI,
	Binary:        "/bin/sh",
	Args:          []string{"-c", "{prompt}"},
	PromptVia:     PromptArg,
	StdinFallback: true,
	FallbackArgs:  []string{"-s"},
	Output:        OutputText,
	ShowPrompt:    true,
	Silent:        true,
}
