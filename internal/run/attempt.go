package run

import (
	"context"
	"encoding/json"
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
	// fellBack: the visit fell back to the next CLI of the node's list
	// after it; no backoff, since another service answers next.
	fellBack bool
	next     string
	label    string
	err      error
}

// A stepKind is the run's side of one step kind (types.Step): what a
// visit of a node of that kind does, and what it leaves. The walker
// (runNode) owns the visit: its attempts, retries, backoff, events and
// result; a kind owns one attempt: the call it makes and how it reads
// what came back. A process step's work is judged by a validator. A new
// kind is a type beside processStep, decisionStep and commandStep, and
// its line in stepKinds (readme/dev.md#what-a-change-touches).
type stepKind interface {
	// attempt makes attempt number a of the visit, with the critiques of
	// the attempts before it.
	attempt(ctx context.Context, v *step, a int, fb []feedback) outcome
	// soFar is a finished visit as the run so far shows it
	// (readme/context.md#the-run-so-far).
	soFar(p *pastStep) prompts.Step
	// field is what {{node.ID.name}} gives of a finished visit, false for
	// a name that is no field (readme/context.md#variables).
	field(p *pastStep, name string) (string, bool)
	// ended adds what the kind records of a visit that succeeded to its
	// node_end: a command step the command as it ran.
	ended(v *step, e *runlog.NodeEnd)
	// recorded says whether a visit that a resume carries was one of this
	// kind, as its events recorded it; the agents' kinds, which a visit's
	// role tells apart, say no.
	recorded(s *CarriedStep) bool
	// carried reads back the response a visit's node_end recorded (nil
	// when it has none or it does not read) and says whether the visit's
	// replies go on into a resumed run's answers.yaml, to replay it.
	carried(role string, raw json.RawMessage) (response any, replies bool)
}

// stepKinds are the run's step kinds: one line a kind. A terminator is
// never run.
var stepKinds = map[types.Step]stepKind{
	types.StepProcess:  processStep{},
	types.StepDecision: decisionStep{},
	types.StepCommand:  commandStep{},
	types.StepApproval: approvalStep{},
}

// kindOf is the kind of a node that is not a terminator; a node of a
// document never loaded as a chart is its role's.
func kindOf(n *types.ProcessedNode) stepKind { return kindFor(n.Step, n.Role) }

// kindFor is the run's kind of step; when step is none of them (""), the
// role's, a process's for a role that runs none.
func kindFor(step types.Step, role string) stepKind {
	if k, ok := stepKinds[step]; ok {
		return k
	}
	if k, ok := stepKinds[types.RoleStep(role)]; ok {
		return k
	}
	return processStep{}
}

// agentKind is what process and decision steps, which an agent answers,
// leave: a response of the agent's, its comments or its answer, and
// replies that replay.
type agentKind struct{}

func (agentKind) soFar(p *pastStep) prompts.Step {
	s := prompts.Step{Node: p.ID, Text: p.Text, Kind: p.Role, Status: p.Status, Output: p.Output}
	switch r := p.Response.(type) {
	case types.ProcessResponse:
		s.Comments = r.Comments
	case types.DecisionResponse:
		s.Answer, s.Reasons = p.Label, r.Reasons
		if s.Answer == "" {
			s.Answer = r.Answer
		}
	}
	return s
}

func (agentKind) field(p *pastStep, name string) (string, bool) { return p.common(name) }

func (agentKind) ended(*step, *runlog.NodeEnd) {}

func (agentKind) recorded(*CarriedStep) bool { return false }

func (agentKind) carried(role string, raw json.RawMessage) (any, bool) {
	if role == types.RoleDecision {
		return decodeAs[types.DecisionResponse](raw), true
	}
	return decodeAs[types.ProcessResponse](raw), true
}

// step is one visit of a node in progress, as its kind sees it.
type step struct {
	w      *walker
	b      *branch // the branch the visit is on
	n      *types.ProcessedNode
	out    []types.Edge // the node's edges, in the chart's order
	labels []string     // their labels
	res    *NodeResult
	// output is the final text of the visit's last attempt that got one:
	// the agent's answer, or a command's output. Later steps see it
	// (the run so far, {{node.ID.output}}).
	output string
	// exitCode is a command step's exit status (-1: killed, or never
	// run); command is the command it ran, its references expanded.
	exitCode int
	command  string
	// fell indexes the node's CLI list (CLIChain): the CLI the visit fell
	// back to, 0 while it has not.
	fell int
	// g watches what the visit's attempts leave in the working tree
	// (guard.go).
	g *guard
}

// cli is the CLI of attempt a: once the visit has fallen back, the CLI
// of the node's list it fell back to; else the node's, and its retry
// CLI's after the first attempt.
func (v *step) cli(a int) string {
	if v.fell > 0 {
		return v.n.CLIChain()[v.fell]
	}
	if a > 1 {
		return v.n.RetryCLI
	}
	return v.n.CLI
}

// validateCLI is the CLI that validates attempt a: the node's validation
// CLI, unless that is the node's own CLI and the visit fell back, when it
// is the CLI it fell back to (the node's own CLI failed).
func (v *step) validateCLI(a int) string {
	if v.fell > 0 && v.n.ValidateCLI == v.n.CLI {
		return v.cli(a)
	}
	return v.n.ValidateCLI
}

// fallBack moves the visit on to the next CLI of the node's list after
// the CLI of attempt a failed for an agent reason, logging it; false when
// the list has no CLI left.
func (v *step) fallBack(a int, from, reason string) bool {
	chain := v.n.CLIChain()
	if v.fell+1 >= len(chain) {
		return false
	}
	v.fell++
	to := chain[v.fell]
	v.w.event(runlog.Fallback{Node: v.n.ID, Attempt: a, From: from, To: to, Reason: reason})
	return true
}

// ask makes an agent call of the visit with the prompt and sorts out how
// it ended: ok is false with the outcome to return when the call gives
// the attempt nothing to read. A CLI that is not installed, or fails in a
// way no retry mends, is fallen back from within the attempt: no call was
// made, or none could do the work.
func (v *step) ask(ctx context.Context, a int, prompt, purpose string) (agent.Result, outcome, bool) {
	w, n := v.w, v.n
	for {
		def, err := w.o.Registry.Lookup(v.cli(a))
		if err != nil {
			return agent.Result{}, outcome{err: err}, false
		}
		w.o.Progress.AttemptStarted(n, a, def.Name, purpose)
		r, err := w.call(ctx, n, a, def, prompt, purpose, v.res)
		if ctx.Err() != nil {
			return r, outcome{err: ctx.Err()}, false
		}
		if lerr := w.logFailed(); lerr != nil {
			// The run stops, but what the agent did is kept: its answer is in
			// the node's result (and answers.yaml), for the summary.
			if err == nil {
				v.res.Response = parseResponse(n.Role == types.RoleDecision, r.Answer)
			}
			return r, outcome{err: lerr}, false
		}
		if be := (*BudgetError)(nil); errors.As(err, &be) {
			return r, outcome{err: be}, false // stopped mid-call: the budget's words, not the stopped call's
		}
		kind, _ := agent.Permanent(err)
		if errors.Is(err, agent.ErrNotFound) || kind != "" {
			if reason := "the agent call failed: " + err.Error(); v.fallBack(a, def.Name, reason) {
				// A CLI that is not installed was named before the run
				// started (the preflight's warning): no failure to report.
				if !errors.Is(err, agent.ErrNotFound) {
					w.o.Progress.AttemptFailed(n, a, fmt.Sprintf("%s; falling back to %s", reason, v.cli(a)))
				}
				continue
			}
			if kind == "" {
				return r, outcome{err: err}, false
			}
			return r, outcome{err: &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: a,
				Last: "the agent call failed: " + err.Error()}}, false
		}
		if err != nil {
			if isRateLimit(err) { // every branch's calls to this CLI wait it out
				w.limits.backoff(def.Name, w.o.Backoff(a))
			}
			reason := "the agent call failed: " + err.Error()
			return r, outcome{reason: reason, agentError: true, fellBack: v.fallBack(a, def.Name, reason)}, false
		}
		v.output = r.Answer
		return r, outcome{}, true
	}
}

// processStep sends the node's text to its agent, reads a
// ProcessResponse, and has the work validated.
type processStep struct{ agentKind }

func (processStep) attempt(ctx context.Context, v *step, a int, fb []feedback) outcome {
	r, o, ok := v.ask(ctx, a, prompts.BuildProcess(v.text(), v.runSoFar(), fb), agent.PurposeRun)
	if !ok {
		return o
	}
	p, err := response.ParseProcess(r.Answer)
	if err != nil {
		return outcome{reason: replyError(err, r)}
	}
	v.res.Response = p
	if !p.Completed {
		reason := "you reported the task as not completed (\"completed\": false)"
		if len(p.Comments) > 0 {
			reason += ": " + strings.Join(p.Comments, "; ")
		}
		return outcome{reason: reason}
	}
	next := ""
	if len(v.out) > 0 {
		next = v.out[0].To
	}
	if !v.n.Validate || v.w.o.NoValidate {
		return outcome{next: next}
	}
	// A change outside the step's paths fails the attempt before any
	// validation call is spent on it.
	if reason, err := v.g.checkScope(ctx, a); err != nil || reason != "" {
		return outcome{reason: reason, err: err}
	}
	mark := v.g.mark(ctx, "the validation of node "+v.n.ID)
	val, err := validator{}.judge(ctx, v, a, r.Answer)
	if kerr := v.g.keep(ctx, mark, a, "validation"); kerr != nil && err == nil && ctx.Err() == nil {
		err = kerr
	}
	if err != nil {
		return outcome{err: err}
	}
	v.res.Validation = &val
	if !val.FullyCompleted {
		reason := "validation did not pass (fully_completed: false)"
		if len(val.Warnings) > 0 {
			reason += ": " + strings.Join(val.Warnings, "; ")
		}
		return outcome{reason: reason}
	}
	return outcome{next: next}
}

// decisionStep asks the node's agent to pick one of the node's labels.
type decisionStep struct{ agentKind }

func (decisionStep) attempt(ctx context.Context, v *step, a int, fb []feedback) outcome {
	r, o, ok := v.ask(ctx, a, prompts.BuildDecision(v.text(), v.runSoFar(), v.labels, fb), agent.PurposeRun)
	if !ok {
		return o
	}
	d, err := response.ParseDecision(r.Answer)
	if err != nil {
		return outcome{reason: fmt.Sprintf("%s. Answer with one of: %s.", replyError(err, r), quoteAll(v.labels))}
	}
	v.res.Response = d
	label, ok := response.MatchLabel(d.Answer, v.labels)
	if !ok {
		return outcome{reason: fmt.Sprintf("the answer %q is not one of the allowed answers. Answer with exactly one of: %s.", d.Answer, quoteAll(v.labels))}
	}
	return v.take(label, d.Answer)
}

// take follows the edge with the label, logging the decision.
func (v *step) take(label, answer string) outcome {
	for _, e := range v.out {
		if e.Label == label {
			v.w.event(runlog.Decision{Node: v.n.ID, Answer: answer, Label: label, Next: e.To})
			return outcome{next: e.To, label: label}
		}
	}
	return outcome{reason: fmt.Sprintf("no branch is labelled %q", label)}
}

// validator has a process step's work judged by the node's validation
// CLI.
type validator struct{}

// judge asks the validation CLI to judge the output, retrying a call
// that itself fails; the work is not re-run.
func (validator) judge(ctx context.Context, v *step, attempt int, output string) (types.ValidationResponse, error) {
	w, n, res := v.w, v.n, v.res
	def, err := w.o.Registry.Lookup(v.validateCLI(attempt))
	if err != nil {
		return types.ValidationResponse{}, err
	}
	prompt := prompts.BuildValidation(v.validatePrompt(), v.text(), v.runSoFar(), output)
	var last string
	for call := 1; call <= validationCalls; call++ {
		w.o.Progress.AttemptStarted(n, attempt, def.Name, agent.PurposeValidate)
		r, err := w.call(ctx, n, attempt, def, prompt, agent.PurposeValidate, res)
		if ctx.Err() != nil {
			return types.ValidationResponse{}, ctx.Err()
		}
		if lerr := w.logFailed(); lerr != nil {
			if v, perr := response.ParseValidation(r.Answer); err == nil && perr == nil {
				res.Validation = &v
			}
			return types.ValidationResponse{}, lerr
		}
		if be := (*BudgetError)(nil); errors.As(err, &be) {
			return types.ValidationResponse{}, be
		}
		if errors.Is(err, agent.ErrNotFound) {
			return types.ValidationResponse{}, err
		}
		if kind, _ := agent.Permanent(err); kind != "" {
			return types.ValidationResponse{}, &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: attempt,
				Last: fmt.Sprintf("validation with %s failed: %s", def.Name, err)}
		}
		if isRateLimit(err) {
			w.limits.backoff(def.Name, w.o.Backoff(call))
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
			if err := w.pause(ctx, w.o.Backoff(call)); err != nil {
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
	// A slot of --parallel, and the CLI's shared backoff, are waited for
	// with the walker let go (readme/parallel.md#limits).
	held := w.release()
	slot, err := w.limits.acquire(ctx, limitCLI(def, purpose))
	w.take(held)
	if err != nil {
		return agent.Result{}, err
	}
	defer slot()
	if purpose != agent.PurposeCommand {
		if err := w.overBudget(n); err != nil {
			return agent.Result{}, err // no call made, none logged
		}
		prompt = prompts.WithBudget(w.budgetLine(), prompt) // past 80 % of a budget, what is left
		if b := w.cur; purpose == agent.PurposeRun && len(b.conflicts) > 0 && b.cur == w.index(n.ID) {
			prompt = prompts.WithBudget(prompts.ConflictsLine(conflictList(b.conflicts)), prompt) // a join's merge conflicts
		}
		// An earlier step's output in the run so far may hold a NUL,
		// which no argv can carry (readme/context.md#variables).
		if k := strings.Count(prompt, "\x00"); k > 0 {
			prompt = strings.ReplaceAll(prompt, "\x00", "\uFFFD")
			w.event(runlog.VarNUL{Node: n.ID, NULs: k})
		}
	}
	runID := ""
	if w.o.Log != nil {
		runID = w.o.Log.RunID
	}
	// The node's model is for its own CLI; another (a validate_cli, a
	// retry_cli) gets the run's --model, as any node without one.
	model := w.o.Model
	if n.Model != "" && def.Name == n.CLI {
		model = n.Model
	}
	c := agent.Call{Def: def, Prompt: prompt, Model: model, Dir: w.cur.tree.dir, Env: w.o.Env,
		Request: agent.Request{RunID: runID, Node: n.ID, Purpose: purpose, Attempt: attempt, Visit: res.Visit}, Timeout: n.Timeout, KeepRunning: n.KeepRunning}
	var s *seen
	if purpose != agent.PurposeCommand {
		s = w.see(n, res, attempt, def.Name, purpose)
		c.Observe = w.observe(n, attempt, def.Name, purpose, s)
	}
	if err := w.flush(); err != nil {
		return agent.Result{}, err
	}
	var lw io.WriteCloser
	var sw *runlog.StreamWriter // the call's stream file (readme/logs.md#streams)
	if w.o.Log != nil {
		lw = w.o.Log.Call(n.ID, def.Name, attempt, purpose)
		if err := w.logFailed(); err != nil {
			return agent.Result{}, err
		}
		c.Output = lw
		if purpose != agent.PurposeCommand && def.Streams() {
			if sw = w.o.Log.Stream(n.ID, res.Visit, attempt, purpose); sw != nil {
				c.Stream = sw
			}
		}
	}
	start := time.Now()
	c.MaxTurns = n.MaxTurns // for a CLI that takes it (readme/run.md#max-turns)
	if w.o.MaxCost > 0 && purpose != agent.PurposeCommand {
		// What is left of the cost budget, for a CLI that stops itself
		// there (readme/run.md#budgets); the calls before were checked.
		c.MaxCost = w.o.MaxCost
		if t := w.spent(); t.CostUSD != nil {
			c.MaxCost -= *t.CostUSD
		}
	}
	w.cur.tree.fresh = false // the call may change the working tree
	if w.o.CallStarted != nil {
		w.o.CallStarted()
	}
	b := w.release() // other branches go on while the call runs
	r, err := w.o.Runner(ctx, c)
	slot()
	w.take(b)
	if w.o.CallEnded != nil {
		w.o.CallEnded(c.KeepRunning)
	}
	if lw != nil {
		_ = lw.Close() // its error is logFailed's
	}
	if sw != nil {
		_ = sw.Close() // as long.log's
	}
	if s != nil {
		s.done()
	}
	// Whatever the runner, figures are checked (SPEC §12).
	var more []string
	r.Usage, more = agent.CheckUsage(r.Usage)
	if m := w.costless(r.Usage, err); m != "" {
		more = append(more, m)
	}
	if ws, ok := w.o.Progress.(UsageWarner); ok {
		for _, m := range append(r.UsageWarnings, more...) {
			ws.UsageWarning(n, attempt, def.Name, m)
		}
	}
	a := Attempt{N: attempt, Purpose: purpose, CLI: def.Name, ExitCode: r.ExitCode, TimedOut: r.TimedOut,
		StoppedAfterAnswer: r.StoppedAfterAnswer, DurationMS: time.Since(start).Milliseconds(),
		StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes, Usage: r.Usage, StderrTail: r.StderrTail}
	if err != nil {
		a.Error = err.Error()
	}
	res.Attempts = append(res.Attempts, a)
	if purpose != agent.PurposeCommand { // a command has no reply to replay, no usage
		if ctx.Err() == nil && !errors.Is(err, agent.ErrNotFound) {
			w.record(n, res.Visit, purpose, r.Answer, err)
		}
		w.sum.count(res, a)
		w.noteSpending(n.ID, a)
		if errors.As(err, new(*BudgetError)) {
			w.sum.Budget.Reached = true // a call stopped as it crossed the budget (meter.go)
		}
	}
	w.event(runlog.AgentCall{Node: n.ID, Attempt: attempt, Purpose: purpose, CLI: def.Name,
		Argv: r.Argv, DurationMS: a.DurationMS, ExitCode: r.ExitCode, TimedOut: r.TimedOut,
		StoppedAfterAnswer: r.StoppedAfterAnswer, StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes,
		Usage: r.Usage, Error: a.Error, StderrTail: r.StderrTail})
	return r, err
}

// record keeps the reply of a call of the node's visit for answers.yaml.
func (w *walker) record(n *types.ProcessedNode, visit int, purpose, answer string, err error) {
	decision := n.Role == types.RoleDecision
	var labels []string
	if decision {
		for _, e := range w.o.Chart.Graph.Out(w.index(n.ID)) {
			labels = append(labels, e.Label)
		}
	}
	w.replies.Add(n.ID, visit, n.Text, decision, purpose == agent.PurposeValidate, answer, err, labels)
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
