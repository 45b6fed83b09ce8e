package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/types"
)

// Runner is the replay agent: its Call is a run.Runner that answers each
// agent call of a run with the next reply of the call's node in a Plan,
// or of the call's visit of the node when the plan gives the node's
// replies per visit, inside dtree. It starts no process and writes no
// file of its own; each node's and visit's place in its replies is kept
// here, safe for calls from several goroutines.
type Runner struct {
	plan *Plan
	mu   sync.Mutex
	used map[visitOf]int // replies taken, by node (visit 0) or node and visit
}

// visitOf keys the replies taken: a node's in call order have visit 0.
type visitOf struct {
	node  string
	visit int
}

// NewRunner returns a Runner that answers from p, which it does not change.
func NewRunner(p *Plan) *Runner {
	return &Runner{plan: p, used: map[visitOf]int{}}
}

// Answers is the answers file the runner answers from, as its messages
// name it.
func (r *Runner) Answers() string { return r.plan.Answers }

// CallError is a call the replay agent fails, as an agent's call fails:
// an "error:" reply (Msg is its text), a node with no reply left, a reply
// with no text. The run retries the node as after any failed call.
type CallError struct {
	Node string
	Msg  string
	// End is set when the file is a recording of a run that stopped
	// before this call (interrupted, failed): no retry can mend that.
	End bool
}

func (e *CallError) Error() string { return e.Msg }

// Call answers one agent call with the next reply of the node and visit
// c.Request names, for its purpose (a validation reads "ok" and "fail: why" as a
// verdict). The reply goes to c.Output as a text CLI's stdout would, an
// error as its stderr; the Result says what Run would say of a text CLI
// that printed them, exit status 0, or 1 for an error.
func (r *Runner) Call(ctx context.Context, c agent.Call) (agent.Result, error) {
	if err := ctx.Err(); err != nil {
		return agent.Result{ExitCode: -1}, &agent.StoppedError{Name: c.Def.Name, Err: err}
	}
	argv := []string{agent.InProcessName(c.Def), "--answers", r.plan.Answers}
	fail := func(err *CallError) (agent.Result, error) {
		return agent.InProcessResult(c, argv, "", err.Msg+"\n", 1), err
	}
	id, purpose := c.Request.Node, c.Request.Purpose
	node, reply, err := r.next(id, c.Request.Visit, purpose)
	if err != nil && err.End {
		rec := r.plan.Recorded
		res := agent.InProcessResult(c, argv, "", err.Msg+"\n", 1)
		return res, &agent.AgentError{Name: "replay", ExitCode: 1, Reason: strings.TrimPrefix(err.Msg, "replay: "),
			Permanent: agent.PermanentRecordingEnds,
			Hint: fmt.Sprintf("go on with the agents from where run %s stopped: dtree resume %s; or add replies for node %s to %s to replay further",
				rec.RunID, rec.RunID, id, r.plan.Answers)}
	}
	if err != nil {
		return fail(err)
	}
	out, errText := Render(reply.Text, node.Decision, purpose == agent.PurposeValidate)
	if errText != "" {
		return fail(&CallError{Node: id, Msg: errText})
	}
	res := agent.InProcessResult(c, argv, out+"\n", "", 0)
	if strings.TrimSpace(res.Answer) == "" {
		return res, &CallError{Node: id, Msg: fmt.Sprintf("replay gave an empty answer: the reply to node %s at %s:%d has no text", id, r.plan.Answers, reply.Line)}
	}
	return res, nil
}

// next takes the next reply of the node's visit, or says why there is
// none. A node whose replies are a list takes them in call order,
// whatever the visit.
func (r *Runner) next(id string, visit int, purpose string) (*Node, Reply, *CallError) {
	fail := func(format string, args ...any) (*Node, Reply, *CallError) {
		return nil, Reply{}, &CallError{Node: id, Msg: "replay: " + fmt.Sprintf(format, args...)}
	}
	if id == "" {
		return fail("a call for no node: the replay agent answers the calls of `dtree run CHART --answers FILE`")
	}
	node := r.plan.Nodes[id]
	key, line, forVisit := visitOf{node: id}, 0, ""
	var replies []Reply
	if node != nil {
		replies, line = node.Replies, node.Line
		if node.Visits != nil {
			key.visit, forVisit = visit, fmt.Sprintf(" for visit %d", visit)
			replies, line = node.Visits[visit].Replies, node.Visits[visit].Line
		}
	}
	r.mu.Lock()
	n := r.used[key]
	if n < len(replies) {
		r.used[key] = n + 1
	}
	r.mu.Unlock()
	if n < len(replies) {
		return node, replies[n], nil
	}
	text := ""
	if node != nil {
		text = " " + types.Quote(types.Excerpt(node.Text, 60))
	}
	if rec := r.plan.Recorded; rec != nil && rec.Status != "succeeded" {
		return nil, Reply{}, &CallError{Node: id, End: true, Msg: fmt.Sprintf(
			"replay: has no reply left for node %s%s%s in %s: the run it was recorded from, %s, was %s before this %s call was answered, so the recording ends here",
			id, text, forVisit, r.plan.Answers, rec.RunID, rec.Status, purposeName(purpose))}
	}
	switch {
	case node == nil, len(node.Replies) == 0 && node.Visits == nil:
		return fail("node %s%s has no replies in %s; add a list under %q", id, text, r.plan.Answers, id)
	case len(replies) == 0:
		return fail("node %s%s has no replies for visit %d in %s; add \"visit %d\" under %q (line %d)", id, text, visit, r.plan.Answers, visit, id, node.Line)
	case len(replies) == 1:
		return fail("node %s%s has no reply left%s in %s: its one reply (line %d) is used; add one for this %s call",
			id, text, forVisit, r.plan.Answers, line, purposeName(purpose))
	}
	return fail("node %s%s has no reply left%s in %s: its %d replies (line %d) are used; add one for this %s call",
		id, text, forVisit, r.plan.Answers, len(replies), line, purposeName(purpose))
}

func purposeName(p string) string {
	if p == agent.PurposeValidate {
		return "validation"
	}
	return "run"
}

// Unused lists, in the answers file's order, the nodes whose replies the
// calls so far left over: after a run that reached its end, a sign that
// the chart or the file changed since they matched.
func (r *Runner) Unused() []Leftover {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Leftover
	for id, n := range r.plan.Nodes {
		left := len(n.Replies) - r.used[visitOf{node: id}]
		for v, vr := range n.Visits {
			left += len(vr.Replies) - r.used[visitOf{id, v}]
		}
		if left > 0 {
			out = append(out, Leftover{ID: id, Text: n.Text, Line: n.Line, Left: left})
		}
	}
	slices.SortFunc(out, func(a, b Leftover) int { return cmp.Or(a.Line-b.Line, strings.Compare(a.ID, b.ID)) })
	return out
}

// Gate is the answer to a visit of approval gate id (run.Approval's
// Answers): the next reply of the node's visit, as a decision's is taken.
// With none left it is an error that says what to add: a replay is not
// resumed, so it cannot wait at the gate.
func (r *Runner) Gate(id string, visit int) (string, error) {
	node, reply, err := r.next(id, visit, agent.PurposeRun)
	if err != nil {
		if err.End {
			return "", err
		}
		return "", fmt.Errorf("%s; a gate's reply is [approved] or [rejected] (a replay is not resumed, so it cannot wait at the gate)", err.Msg)
	}
	out, errText := Render(reply.Text, node.Decision, false)
	if errText != "" {
		return "", errors.New(errText)
	}
	if d, perr := response.ParseDecision(out); perr == nil {
		return d.Answer, nil
	}
	return strings.TrimSpace(out), nil
}
