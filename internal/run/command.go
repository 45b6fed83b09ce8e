package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/prompts"
	"github.com/dtree-dev/dtree/types"
)

// commandStep runs the node's command through /bin/sh instead of an agent
// (readme/context.md#command-steps). A process step succeeds on exit 0; a
// decision takes the branch its exit status routes to. It costs no tokens,
// and its exit status and output go to the steps after it.
type commandStep struct{}

func (commandStep) attempt(ctx context.Context, v *step, a int, _ []feedback) outcome {
	w, n := v.w, v.n
	w.o.Progress.AttemptStarted(n, a, agent.Shell.Name, agent.PurposeCommand)
	script, env, serr := v.commandScript()
	if serr != nil { // no retry can mend the command
		return outcome{err: &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: a,
			Last: "the command cannot be run safely: " + serr.Error()}}
	}
	v.command = script
	def := agent.Shell
	def.Env = env // the references' values: DTREE_REF_N over any of the caller's
	r, err := w.call(ctx, n, a, def, v.command, agent.PurposeCommand, v.res)
	if ctx.Err() != nil {
		return outcome{err: ctx.Err()}
	}
	if lerr := w.logFailed(); lerr != nil {
		return outcome{err: lerr}
	}
	var ae *agent.AgentError
	switch {
	case err == nil:
	case errors.As(err, &ae):
		// Its own exit status, or a timeout: recorded below.
	default: // /bin/sh could not be started: no retry can mend that
		return outcome{err: &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: a,
			Last: "the command could not be run: " + err.Error()}}
	}
	v.exitCode, v.output = r.ExitCode, commandOutput(r)
	v.res.Response = types.CommandResponse{ExitCode: r.ExitCode, Output: types.LastLines(v.output, responseLines, responseBytes)}
	if r.TimedOut {
		return outcome{reason: fmt.Sprintf("the command %s%s", ae.Reason, tailNote(v.output))}
	}
	if n.Role == types.RoleDecision {
		label, ok := response.RouteExit(v.labels, r.ExitCode)
		if !ok {
			return outcome{reason: fmt.Sprintf("the command exited with status %d, and no branch takes it (labels: %s)%s",
				r.ExitCode, quoteAll(v.labels), tailNote(v.output))}
		}
		return v.take(label, fmt.Sprintf("exit %d", r.ExitCode))
	}
	if r.ExitCode != 0 {
		return outcome{reason: fmt.Sprintf("the command %s%s", ae.Reason, tailNote(v.output))}
	}
	next := ""
	if len(v.out) > 0 {
		next = v.out[0].To
	}
	return outcome{next: next}
}

// soFar shows the command as it ran, its exit status and the end of its
// output.
func (commandStep) soFar(p *pastStep) prompts.Step {
	return prompts.Step{Node: p.ID, Text: p.Text, Kind: string(types.StepCommand), Status: p.Status, Output: p.Output,
		Command: p.CommandText, ExitCode: p.ExitCode}
}

// field gives {{node.ID.exit_code}}, besides the fields every step has.
func (commandStep) field(p *pastStep, name string) (string, bool) {
	if name == "exit_code" {
		return strconv.Itoa(p.ExitCode), true
	}
	return p.common(name)
}

// ended records the command as it ran, its references expanded.
func (commandStep) ended(v *step, e *runlog.NodeEnd) { e.Command = v.command }

// recorded: a command step's node_end has the command it ran.
func (commandStep) recorded(s *CarriedStep) bool { return s.End.Command != "" }

// carried reads the command's exit status and output back; a command has
// no reply to replay.
func (commandStep) carried(_ string, raw json.RawMessage) (any, bool) {
	return decodeAs[types.CommandResponse](raw), false
}

// What a command step's response (short.json, the --json summary) keeps of
// its output; the steps after it get up to maxOutput.
const (
	responseLines = 20
	responseBytes = 2 << 10
)

// commandOutput is what a command printed, as far as dtree kept it: the end
// of stdout, then the end of stderr.
func commandOutput(r agent.Result) string {
	out := r.Stdout
	if r.StderrTail != "" {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += r.StderrTail
	}
	return types.TailBytes(out, maxOutput)
}

// tailNote is the last line a failed command printed, for its failure
// reason: one line, as errors are; the rest is in long.log and the step's
// response.
func tailNote(output string) string {
	last := strings.TrimSpace(types.LastLines(output, 1, maxName))
	if last == "" {
		return ""
	}
	return fmt.Sprintf("; its last line: %q", last)
}
