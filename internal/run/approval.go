package run

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/prompts"
	"github.com/dtree-dev/dtree/types"
)

// StatusWaiting is a run, and the visit of its gate, stopped at an
// approval gate no answer was given for (exit 5).
const StatusWaiting = "waiting_for_approval"

// Answers a gate takes (Approval.Answer, Approval.All).
const (
	Approve = "approve"
	Reject  = "reject"
)

// Who gave a gate's answer (runlog.ApprovalGiven's who).
const (
	WhoFlag     = "flag"     // dtree resume --approve or --reject
	WhoCIInput  = "ci_input" // the same, given --ci-input: a CI system's inputs (the action's approve or reject)
	WhoAll      = "all"      // --approve-all, --reject-all or the approvals setting
	WhoAnswers  = "answers"  // a dry run's --answer, a replay's answers file
	WhoTerminal = "terminal" // a person at the terminal the run is on
)

// Gate is what a person answering a gate on a terminal is shown
// (Approval.Ask).
type Gate struct {
	Node, Text string
	// SoFar is the run so far, briefly: a line a finished visit, oldest
	// first, the newest few.
	SoFar []string
	// Change is what changed in the working tree since the run started
	// or since the last gate (SinceGate); nil when checkpoints are off.
	Change    *types.Change
	SinceGate bool
	// Timeout is the node's own timeout (custom data timeout); 0 is none:
	// a gate waits for its answer as long as it takes.
	Timeout time.Duration
}

// soFarShown bounds Gate.SoFar: the logs have the whole run.
const soFarShown = 10

// Approval is how a run answers its approval gates
// (readme/charts.md#approval-gates). With no answer for a gate, the run
// stops there, waiting for approval.
type Approval struct {
	// Answer is dtree resume's --approve (Approve) or --reject (Reject):
	// the answer to the first gate the run reaches, the one it waited at.
	// Reason is its --reason.
	Answer string
	Reason string
	// Who gave Answer, as approval_given logs it: WhoFlag ("") or
	// WhoCIInput. Only a label: it changes nothing else.
	Who string
	// All answers every gate (Approve or Reject), after Answer: the flags
	// --approve-all and --reject-all, or the approvals setting.
	All string
	// Answers gives the answer to a visit of a gate in a dry run or a
	// replay, a label of the gate or an answer word (approved, rejected,
	// yes, no). Its error, when it has none for this visit, fails the
	// gate off a terminal: a replay is never resumed, so it cannot wait
	// for an answer.
	Answers func(node string, visit int) (string, error)
	// Ask asks a person at the terminal for a gate's answer (Approve or
	// Reject) and its reason, when nothing above answers it; nil (not on
	// a terminal) stops the run there, waiting. Its error is the
	// context's when the run was interrupted at the prompt.
	Ask func(ctx context.Context, g Gate) (answer, reason string, err error)
}

// WaitingError is a run stopped at an approval gate (exit 5): RunID is
// the run to resume with the answer, LogDir the log directory it is in
// (its --log-dir; "" or the default's is not named in the commands).
type WaitingError struct {
	Node   string
	Text   string
	RunID  string
	LogDir string
}

func (e *WaitingError) Error() string {
	return fmt.Sprintf("node %s %s waits for approval", e.Node, types.Quote(types.Excerpt(e.Text, errorTextRunes)))
}

// Hint says how to go on: the commands that approve and reject.
func (e *WaitingError) Hint() string {
	return GateHint(e.RunID, e.LogDir)
}

// Waiting is the gate a run waits at and the commands that answer it
// (Summary.Waiting).
func (e *WaitingError) Waiting() *Waiting {
	c := ResumeCommand(e.RunID, e.LogDir)
	return &Waiting{Node: e.Node, Approve: c + " --approve", Reject: c + " --reject --reason TEXT"}
}

// Waiting is what `dtree run --json` says of the approval gate the run
// waits at (readme/run.md#fields): the gate and the command lines that
// approve and reject it.
type Waiting struct {
	Node    string `json:"node"`
	Approve string `json:"approve"`
	Reject  string `json:"reject"`
}

// ResumeCommand is the command line that resumes run id (RUN_ID when it
// is not known) in logDir, its --log-dir: named when logDir is not the
// default, so that the line finds the run pasted as printed.
func ResumeCommand(id, logDir string) string {
	argv := []string{"dtree", "resume", cmp.Or(id, "RUN_ID")}
	if logDir != "" && filepath.Clean(logDir) != filepath.Clean(types.DefaultLogDir) {
		argv = append(argv, "--log-dir", logDir)
	}
	return types.ShellJoin(argv)
}

// GateHint says how to answer the gate run id waits at, in logDir.
func GateHint(id, logDir string) string {
	c := ResumeCommand(id, logDir)
	return fmt.Sprintf("approve it: %s --approve [--reason TEXT]; reject it: %s --reject --reason TEXT", c, c)
}

// ResumeHint says how a run that stopped goes on (not at a gate).
func ResumeHint(id, logDir string) string {
	return "go on from where it stopped, without redoing the steps that finished: " + ResumeCommand(id, logDir)
}

// approvalStep is an approval gate: no agent, no command; a person's
// answer, given to dtree resume or for every gate, takes the branch
// labelled approved or rejected. Its reason goes to the steps after it.
type approvalStep struct{}

func (approvalStep) attempt(ctx context.Context, v *step, _ int, _ []feedback) outcome {
	w, n := v.w, v.n
	answer, reason, who, aerr := w.gateAnswer(n.ID, v.res.Visit, v.labels)
	if aerr != nil && w.o.Approval.Ask == nil {
		return outcome{err: &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: 1, Last: aerr.Error()}}
	}
	if answer == "" {
		// The gate asks: at the terminal, or by stopping the run.
		werr := &WaitingError{Node: n.ID, Text: firstLine(n.Text)}
		if w.o.Log != nil {
			werr.RunID, werr.LogDir = w.o.Log.RunID, filepath.Dir(w.o.Log.Dir)
		}
		w.event(runlog.ApprovalAsked{Node: n.ID, Resume: werr.Hint()})
		if w.o.Approval.Ask != nil {
			a, r, err := w.o.Approval.Ask(ctx, w.gate(ctx, v.b, n))
			if err != nil {
				return outcome{err: err}
			}
			answer, reason, who = a, r, WhoTerminal // a == "": the terminal closed
		}
		if answer == "" {
			w.sum.Waiting = werr.Waiting()
			return outcome{err: werr}
		}
	}
	label, ok := response.GateLabel(v.labels, answer == Approve)
	if !ok { // lint (approval_gate) refuses such a chart
		return outcome{err: &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: 1,
			Last: fmt.Sprintf("the gate was %s, and no branch is labelled so (labels: %s)", past(answer), quoteAll(v.labels))}}
	}
	next := ""
	for _, e := range v.out {
		if e.Label == label {
			next = e.To
			break
		}
	}
	// A reason is a person's few words; one pasted whole from a log is
	// kept to its beginning, within the bound of a step's output.
	reason = types.HeadBytes(strings.TrimSpace(reason), maxOutput)
	r := types.DecisionResponse{Answer: past(answer), Reasons: []string{}}
	if reason != "" {
		r.Reasons = []string{reason}
	}
	v.res.Response, v.output = r, reason
	w.event(runlog.ApprovalGiven{Node: n.ID, Answer: r.Answer, Label: label, Next: next, Who: who, Reason: reason})
	w.replies.Add(n.ID, v.res.Visit, n.Text, true, false, string(encodeResponse(r)), nil, v.labels)
	return outcome{next: next, label: label}
}

// gate is what the terminal shows of gate n on branch b: its text, the
// run so far and what changed since the run started or since the last
// gate asked.
func (w *walker) gate(ctx context.Context, b *branch, n *types.ProcessedNode) Gate {
	g := Gate{Node: n.ID, Text: n.Text}
	for k := range n.Metadata {
		if types.FoldName(k) == "timeout" {
			g.Timeout = n.Timeout // else the chart's default, an agent's
		}
	}
	for _, p := range b.history[max(0, len(b.history)-soFarShown):] {
		line := p.ID + " " + firstLine(p.Text) + ": " + p.Status
		if p.Label != "" {
			line += " → " + p.Label
		}
		g.SoFar = append(g.SoFar, line)
	}
	if t := b.tree; t.ws != nil {
		// Since the run began: in a resumed run, before the steps it took
		// from the earlier one, whose changes the person answering is
		// asked about too.
		from := cmp.Or(t.gateMark, t.carriedFirst, t.first)
		g.SinceGate = t.gateMark != ""
		c, err := t.ws.Repo.Changes(context.WithoutCancel(ctx), from, t.ws.Last.Commit)
		if err != nil && from != t.first && !g.SinceGate { // the earlier run's checkpoints pruned
			c, err = t.ws.Repo.Changes(context.WithoutCancel(ctx), t.first, t.ws.Last.Commit)
		}
		if err == nil {
			g.Change = &c
		}
		t.gateMark = t.ws.Last.Commit
	}
	return g
}

// past is an answer as the logs and the run so far say it.
func past(answer string) string {
	if answer == Approve {
		return "approved"
	}
	return "rejected"
}

// gateAnswer is the answer to a visit of gate id, "" when there is none:
// the answer given to resume, once; an answer for every gate; a dry
// run's or a replay's. Its error says why a dry run or a replay has none.
func (w *walker) gateAnswer(id string, visit int, labels []string) (answer, reason, who string, err error) {
	a := &w.o.Approval
	if a.Answer != "" && !w.gateAnswered {
		w.gateAnswered = true
		return a.Answer, a.Reason, cmp.Or(a.Who, WhoFlag), nil
	}
	if a.All != "" {
		reason := a.Reason // resume --approve-all --reason: every gate's
		if a.Answer != "" {
			reason = "" // the reason was the answer's
		}
		return a.All, reason, WhoAll, nil
	}
	if a.Answers != nil {
		s, err := a.Answers(id, visit)
		if err != nil {
			return "", "", "", err
		}
		_, approve, ok := response.GateAnswer(s, labels)
		switch {
		case ok && approve:
			return Approve, "", WhoAnswers, nil
		case ok:
			return Reject, "", WhoAnswers, nil
		}
		return "", "", "", fmt.Errorf("its answer %s is neither approved nor rejected (labels: %s)", types.Quote(types.Excerpt(s, 60)), quoteAll(labels))
	}
	return "", "", "", nil
}

// soFar shows the answer and its reason.
func (approvalStep) soFar(p *pastStep) prompts.Step {
	s := prompts.Step{Node: p.ID, Text: p.Text, Kind: string(types.StepApproval), Status: p.Status, Answer: p.Label}
	if r, ok := p.Response.(types.DecisionResponse); ok {
		s.Answer, s.Reasons = r.Answer, r.Reasons
	}
	return s
}

// field gives {{node.ID.answer}} (approved or rejected) and
// {{node.ID.reason}}, besides the fields every step has.
func (approvalStep) field(p *pastStep, name string) (string, bool) {
	r, _ := p.Response.(types.DecisionResponse)
	switch name {
	case "answer":
		return r.Answer, true
	case "reason":
		return strings.Join(r.Reasons, "; "), true
	}
	return p.common(name)
}

func (approvalStep) ended(*step, *runlog.NodeEnd) {}

// recorded: a gate's node_end has its answer, approved or rejected, and
// no agent call before it.
func (approvalStep) recorded(s *CarriedStep) bool {
	if len(s.Calls) > 0 || s.End.Command != "" {
		return false
	}
	r, ok := decodeAs[types.DecisionResponse](s.End.Response).(types.DecisionResponse)
	return ok && len(r.Choices) == 0 && (r.Answer == "approved" || r.Answer == "rejected") && s.End.Validation == nil
}

// carried reads the answer back; its reply goes on into answers.yaml, so
// that a replay of the resumed run takes the same branch.
func (approvalStep) carried(_ string, raw json.RawMessage) (any, bool) {
	return decodeAs[types.DecisionResponse](raw), true
}
