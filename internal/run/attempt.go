package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/prompts"
	"github.com/dtree-dev/dtree/types"
)

// validationCalls is how often a validation call that itself fails (agent
// error, unparseable reply) is made before the node fails: once and two
// retries (readme/run.md#3-each-node). It never re-runs the work.
const validationCalls = 3

type feedback = prompts.Feedback

func feedbackFor(attempt int, reason string) feedback {
	return feedback{Attempt: attempt, Reason: reason}
}

// outcome is how one attempt ended: reason is empty on success, else the
// critique for the next attempt; err stops the node without retrying.
type outcome struct {
	reason     string
	agentError bool // the agent call itself failed: back off before retrying
	next       string
	label      string
	err        error
}

func (w *walker) attempt(ctx context.Context, n *types.ProcessedNode, attempt int, cli string, out []types.Edge, labels []string, fb []feedback, res *NodeResult) outcome {
	def, err := w.o.Registry.Lookup(cli)
	if err != nil {
		return outcome{err: err}
	}
	decision := n.Role == types.RoleDecision
	prompt := prompts.BuildProcess(n.Text, fb)
	if decision {
		prompt = prompts.BuildDecision(n.Text, labels, fb)
	}
	w.o.Progress.AttemptStarted(n, attempt, def.Name, "run")
	r, err := w.call(ctx, n, attempt, def, prompt, "run", res)
	if ctx.Err() != nil {
		return outcome{err: ctx.Err()}
	}
	if lerr := w.logFailed(); lerr != nil {
		// The run stops, but what the agent did is kept: its answer is in
		// the node's result (and answers.yaml), for the summary.
		if err == nil {
			res.Response = parseResponse(decision, r.Answer)
		}
		return outcome{err: lerr}
	}
	if errors.Is(err, agent.ErrNotFound) {
		return outcome{err: err}
	}
	if kind, _ := agent.Permanent(err); kind != "" {
		return outcome{err: &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: attempt,
			Last: "the agent call failed: " + err.Error()}}
	}
	if err != nil {
		return outcome{reason: "the agent call failed: " + err.Error(), agentError: true}
	}
	if decision {
		d, err := response.ParseDecision(r.Answer)
		if err != nil {
			return outcome{reason: fmt.Sprintf("%s. Answer with one of: %s.", replyError(err, r), quoteAll(labels))}
		}
		res.Response = d
		label, ok := response.MatchLabel(d.Answer, labels)
		if !ok {
			return outcome{reason: fmt.Sprintf("the answer %q is not one of the allowed answers. Answer with exactly one of: %s.", d.Answer, quoteAll(labels))}
		}
		for _, e := range out {
			if e.Label == label {
				w.event(runlog.Decision{Node: n.ID, Answer: d.Answer, Label: label, Next: e.To})
				return outcome{next: e.To, label: label}
			}
		}
	}
	p, err := response.ParseProcess(r.Answer)
	if err != nil {
		return outcome{reason: replyError(err, r)}
	}
	res.Response = p
	if !p.Completed {
		reason := "you reported the task as not completed (\"completed\": false)"
		if len(p.Comments) > 0 {
			reason += ": " + strings.Join(p.Comments, "; ")
		}
		return outcome{reason: reason}
	}
	next := ""
	if len(out) > 0 {
		next = out[0].To
	}
	if !n.Validate || w.o.NoValidate {
		return outcome{next: next}
	}
	v, err := w.validate(ctx, n, attempt, r.Answer, res)
	if err != nil {
		return outcome{err: err}
	}
	res.Validation = &v
	if !v.FullyCompleted {
		reason := "validation did not pass (fully_completed: false)"
		if len(v.Warnings) > 0 {
			reason += ": " + strings.Join(v.Warnings, "; ")
		}
		return outcome{reason: reason}
	}
	return outcome{next: next}
}

// validate asks the validation CLI to judge the output, retrying a call
// that itself fails; the work is not re-run.
func (w *walker) validate(ctx context.Context, n *types.ProcessedNode, attempt int, output string, res *NodeResult) (types.ValidationResponse, error) {
	def, err := w.o.Registry.Lookup(n.ValidateCLI)
	if err != nil {
		return types.ValidationResponse{}, err
	}
	prompt := prompts.BuildValidation(n.ValidatePrompt, n.Text, output)
	var last string
	for call := 1; call <= validationCalls; call++ {
		w.o.Progress.AttemptStarted(n, attempt, def.Name, "validate")
		r, err := w.call(ctx, n, attempt, def, prompt, "validate", res)
		if ctx.Err() != nil {
			return types.ValidationResponse{}, ctx.Err()
		}
		if lerr := w.logFailed(); lerr != nil {
			if v, perr := response.ParseValidation(r.Answer); err == nil && perr == nil {
				res.Validation = &v
			}
			return types.ValidationResponse{}, lerr
		}
		if errors.Is(err, agent.ErrNotFound) {
			return types.ValidationResponse{}, err
		}
		if kind, _ := agent.Permanent(err); kind != "" {
			return types.ValidationResponse{}, &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: attempt,
				Last: fmt.Sprintf("validation with %s failed: %s", def.Name, err)}
		}
		if err == nil {
			v, perr := response.ParseValidation(r.Answer)
			if perr == nil {
				w.event(runlog.Validation{Node: n.ID, Attempt: attempt, Validation: v})
				return v, nil
			}
			err = errors.New(replyError(perr, r))
			res.Attempts[len(res.Attempts)-1].Error = perr.Error()
		}
		last = err.Error()
		w.o.Progress.AttemptFailed(n, attempt, fmt.Sprintf("validation call %d of %d failed: %s", call, validationCalls, last))
		w.event(runlog.ValidationFailed{Node: n.ID, Attempt: attempt, Call: call, Error: last})
		if call < validationCalls {
			if err := w.flush(); err != nil {
				return types.ValidationResponse{}, err
			}
			if err := sleep(ctx, w.o.Backoff(call)); err != nil {
				return types.ValidationResponse{}, err
			}
		}
	}
	return types.ValidationResponse{}, &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: attempt,
		Last: fmt.Sprintf("validation with %s failed %d times: %s", def.Name, validationCalls, last)}
}

// replyError is why a reply could not be read. When the reply was longer
// than the tail dtree keeps (agent.MaxStdoutTail), its beginning is lost,
// and with it, often, the JSON object: saying only "no JSON object in the
// reply" blamed an agent that had written one.
func replyError(err error, r agent.Result) string {
	if !r.Truncated {
		return err.Error()
	}
	return fmt.Sprintf("the reply was cut off: it had %d bytes and dtree keeps only its last %d (%d MiB), so what came before was not read: %v. Keep the reply under %d MiB, its JSON object at the end",
		r.StdoutBytes, len(r.Stdout), agent.MaxStdoutTail>>20, err, agent.MaxStdoutTail>>20)
}

// call runs one agent call with the node's environment and timeout,
// streaming its output to long.log, and records it. When the logs cannot
// be written (logFailed), it starts no agent: nothing is done that the
// run's record would miss. A long.log that fails during the call ends
// nothing: the output is still read, and the caller stops the run after.
func (w *walker) call(ctx context.Context, n *types.ProcessedNode, attempt int, def agent.Definition, prompt, purpose string, res *NodeResult) (agent.Result, error) {
	runID := ""
	if w.o.Log != nil {
		runID = w.o.Log.RunID
	}
	env := append(append([]string(nil), w.o.Env...),
		"DTREE_RUN_ID="+runID, "DTREE_NODE_ID="+n.ID, "DTREE_ATTEMPT="+strconv.Itoa(attempt), "DTREE_PURPOSE="+purpose)
	// The node's model is for its own CLI; another (a validate_cli, a
	// retry_cli) gets the run's --model, as any node without one.
	model := w.o.Model
	if n.Model != "" && def.Name == n.CLI {
		model = n.Model
	}
	c := agent.Call{Def: def, Prompt: prompt, Model: model, Dir: w.o.Workdir, Env: env, Timeout: n.Timeout, KeepRunning: n.KeepRunning}
	if err := w.flush(); err != nil {
		return agent.Result{}, err
	}
	var lw io.WriteCloser
	if w.o.Log != nil {
		lw = w.o.Log.Call(n.ID, def.Name, attempt, purpose)
		if err := w.logFailed(); err != nil {
			return agent.Result{}, err
		}
		c.Output = lw
	}
	start := time.Now()
	r, err := w.o.Runner(ctx, c)
	if lw != nil {
		_ = lw.Close() // its error is logFailed's
	}
	a := Attempt{N: attempt, Purpose: purpose, CLI: def.Name, ExitCode: r.ExitCode, TimedOut: r.TimedOut,
		StoppedAfterAnswer: r.StoppedAfterAnswer, DurationMS: time.Since(start).Milliseconds(),
		StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes, Usage: r.Usage, StderrTail: r.StderrTail}
	if err != nil {
		a.Error = err.Error()
	}
	res.Attempts = append(res.Attempts, a)
	if ctx.Err() == nil && !errors.Is(err, agent.ErrNotFound) {
		w.record(n, purpose, r.Answer, err)
	}
	w.sum.count(res, a)
	w.event(runlog.AgentCall{Node: n.ID, Attempt: attempt, Purpose: purpose, CLI: def.Name,
		Argv: r.Argv, DurationMS: a.DurationMS, ExitCode: r.ExitCode, TimedOut: r.TimedOut,
		StoppedAfterAnswer: r.StoppedAfterAnswer, StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes,
		Usage: r.Usage, Error: a.Error, StderrTail: r.StderrTail})
	return r, err
}

// record keeps the call's reply for answers.yaml.
func (w *walker) record(n *types.ProcessedNode, purpose, answer string, err error) {
	decision := n.Role == types.RoleDecision
	var labels []string
	if decision {
		for _, e := range w.o.Chart.Graph.Out(w.index(n.ID)) {
			labels = append(labels, e.Label)
		}
	}
	w.replies.Add(n.ID, n.Text, decision, purpose == "validate", answer, err, labels)
}

// parseResponse reads an answer into a node's response as attempt does,
// nil when it cannot be read.
func parseResponse(decision bool, answer string) any {
	if decision {
		if d, err := response.ParseDecision(answer); err == nil {
			return d
		}
		return nil
	}
	if p, err := response.ParseProcess(answer); err == nil {
		return p
	}
	return nil
}

func quoteAll(labels []string) string {
	q := make([]string, len(labels))
	for i, l := range labels {
		q[i] = strconv.Quote(l)
	}
	return strings.Join(q, ", ")
}
