package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// Carried is what a resumed run takes from the run before it
// (readme/resume.md): that run's start, and the steps it finished, each
// with its lines of events.jsonl. No agent is called for them.
type Carried struct {
	// Start is the earlier run's run_start: its chart, page, start node,
	// settings and variables.
	Start runlog.RunStart
	// Status is how the earlier run ended, its run_end's status; "" when
	// it has none: it was killed, or is still going.
	Status string
	// Steps are the visits it finished, in order; a visit that failed,
	// was interrupted, or had not ended when the run stopped is not among
	// them.
	Steps []CarriedStep
	// At is the node the resumed run goes on at: where the last carried
	// step led, or the --from node. "" is the run's start.
	At string
	// Ended says the earlier run got to its end: there is no step to go
	// on at (unless From picks one).
	Ended bool
	// Torn says the earlier log ended in a line cut short (a run killed
	// while writing it), which was skipped.
	Torn bool
}

// CarriedStep is one finished visit of the earlier run.
type CarriedStep struct {
	Start   runlog.NodeStart
	Calls   []runlog.AgentCall
	Retries []runlog.Retry
	End     runlog.NodeEnd
	lines   [][]byte
	dur     time.Duration
}

// ReadCarried reads the events.jsonl of the run to resume. A line that is
// not an event is skipped, as is a torn last line; an event of a newer
// dtree inside a step is carried with it.
func ReadCarried(r io.Reader) (*Carried, error) {
	rd := runlog.NewEventReader(r)
	c := &Carried{}
	started := false
	var cur *CarriedStep // the visit being read
	var curStart time.Time
	for {
		ev, err := rd.NextEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !started {
			rs, ok := ev.(runlog.RunStart)
			if !ok {
				return nil, errors.New("its events.jsonl does not start with run_start: not the log of a dtree run")
			}
			c.Start, started = rs, true
			continue
		}
		line := append([]byte(nil), rd.Raw()...)
		switch e := ev.(type) {
		case runlog.NodeStart:
			cur, curStart = &CarriedStep{Start: e}, rd.Time()
			cur.lines = append(cur.lines, line)
		case runlog.NodeEnd:
			if cur == nil || cur.Start.Node != e.Node {
				cur = nil
				continue
			}
			if e.Status == StatusSucceeded {
				cur.End, cur.dur = e, rd.Time().Sub(curStart)
				cur.lines = append(cur.lines, line)
				c.Steps = append(c.Steps, *cur)
				c.Ended = e.Next == ""
			}
			cur = nil
		case runlog.End:
			c.Ended = true
		case runlog.RunEnd:
			c.Status = e.Status
			if e.Status == StatusSucceeded {
				c.Ended = true
			}
		case runlog.RunStart:
			// a second run in one log: not dtree's
			return nil, errors.New("its events.jsonl holds two run_start events: not the log of one dtree run")
		default:
			if cur == nil {
				continue // the lines copied from the run before it, say, are in their steps
			}
			cur.lines = append(cur.lines, line)
			switch e := ev.(type) {
			case runlog.AgentCall:
				cur.Calls = append(cur.Calls, e)
			case runlog.Retry:
				cur.Retries = append(cur.Retries, e)
			}
		}
	}
	if !started {
		return nil, errors.New("its events.jsonl has no run_start event: the run stopped before it began")
	}
	c.Torn = rd.Torn()
	if n := len(c.Steps); n > 0 && !c.Ended {
		c.At = c.Steps[n-1].End.Next
	}
	return c, nil
}

// From has the resumed run go on at the latest visit of node id on the
// path instead: that visit and the steps after it run again. The node may
// be the one the run would go on at anyway.
func (c *Carried) From(id string) error {
	for i := len(c.Steps) - 1; i >= 0; i-- {
		if c.Steps[i].Start.Node == id {
			c.Steps, c.At, c.Ended = c.Steps[:i], id, false
			return nil
		}
	}
	if c.At == id && !c.Ended {
		return nil
	}
	return &FromError{Node: id, Path: c.Path()}
}

// FromError is a --from node that is not on the earlier run's path.
type FromError struct {
	Node string
	Path []string
}

func (e *FromError) Error() string {
	if len(e.Path) == 0 {
		return fmt.Sprintf("--from %s: the run finished no step to go back to", e.Node)
	}
	return fmt.Sprintf("--from %s: node %s is not on the run's path (%s)", e.Node, e.Node, strings.Join(e.Path, " → "))
}

// Path is the node ids of the carried steps, in order.
func (c *Carried) Path() []string {
	p := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		p[i] = s.Start.Node
	}
	return p
}

// carry makes the steps of the earlier run this run's own, as if it had
// taken them: their lines in events.jsonl, the summary's path, nodes and
// usage, the visit counts, the run so far and answers.yaml. It returns
// the node to go on at and the steps taken; ok is false when the run is
// to start at its start.
func (w *walker) carry() (cur, steps int, ok bool, err error) {
	r := w.o.Resume
	g := w.o.Chart.Graph
	if r.At == "" {
		return 0, 0, false, nil
	}
	cur, found := g.Index(r.At)
	if !found {
		return 0, 0, false, fmt.Errorf("node %s, where the run goes on, is not in the chart", r.At)
	}
	if i, ok := g.Index(w.o.Start); ok && w.node(i).Role == types.RoleTerminator {
		w.sum.Path = append(w.sum.Path, w.o.Start) // skipped to its successor
	}
	for i := range r.Steps {
		s := &r.Steps[i]
		if w.o.Log != nil {
			for _, l := range s.lines {
				w.o.Log.Carry(l)
			}
		}
		w.carryStep(s)
	}
	w.queueShort()
	return cur, len(r.Steps), true, nil
}

// carryStep adds one carried visit to the run's state.
func (w *walker) carryStep(s *CarriedStep) {
	id, end := s.Start.Node, s.End
	n := &types.ProcessedNode{}
	if i, ok := w.o.Chart.Graph.Index(id); ok {
		n = w.node(i)
	}
	command := end.Command != ""
	res := &NodeResult{ID: id, Text: n.Text, Role: s.Start.Role, CLI: s.Start.CLI, Visit: s.Start.Visit,
		Status: StatusSucceeded, Retries: len(s.Retries), Attempts: []Attempt{}, Next: end.Next, Label: end.Label,
		Validation: end.Validation, Usage: end.Usage, DurationMS: s.dur.Milliseconds(), Output: end.Output}
	res.Response = decodeResponse(s.Start.Role, command, end.Response)
	for _, c := range s.Calls {
		// The log is a file anyone, an agent too, may have edited: its
		// figures are checked as a CLI's are (SPEC §12), so that a
		// negative cost in it is unknown, not a credit to the budget.
		usage, warnings := agent.CheckUsage(c.Usage)
		if ws, ok := w.o.Progress.(UsageWarner); ok {
			for _, m := range warnings {
				ws.UsageWarning(&types.ProcessedNode{Node: &types.Node{ID: id}}, c.Attempt, c.CLI, m+" in the run's log")
			}
		}
		a := Attempt{N: c.Attempt, Purpose: c.Purpose, CLI: c.CLI, ExitCode: c.ExitCode, TimedOut: c.TimedOut,
			StoppedAfterAnswer: c.StoppedAfterAnswer, DurationMS: c.DurationMS, StdoutBytes: c.StdoutBytes,
			StderrBytes: c.StderrBytes, Usage: usage, StderrTail: c.StderrTail, Error: c.Error}
		res.Attempts = append(res.Attempts, a)
		if c.Purpose != agent.PurposeCommand {
			w.sum.Usage.Add(a.Usage, a.DurationMS)
			w.noteSpending(id, a)
		}
	}
	for _, rt := range s.Retries { // why each failed attempt failed, as runNode notes it
		for j := len(res.Attempts) - 1; j >= 0; j-- {
			if res.Attempts[j].N == rt.Attempt {
				if res.Attempts[j].Error == "" {
					res.Attempts[j].Error = rt.Reason
				}
				break
			}
		}
	}
	w.sum.add(res)
	w.sum.Path = append(w.sum.Path, id)
	w.visits[id] = max(w.visits[id], s.Start.Visit)

	p := pastStep{ID: id, Text: n.Text, Role: s.Start.Role, Status: StatusSucceeded, Response: res.Response,
		Label: end.Label, Command: command, CommandText: end.Command, ExitCode: -1, Output: end.Output}
	if cr, ok := res.Response.(types.CommandResponse); ok {
		p.ExitCode = cr.ExitCode
	}
	w.addHistory(p)

	if command {
		return // a command has no reply to replay
	}
	decision := s.Start.Role == types.RoleDecision
	var labels []string
	if decision {
		for _, e := range w.o.Chart.Graph.Out(w.index(id)) {
			labels = append(labels, e.Label)
		}
	}
	w.replies.Add(id, n.Text, decision, false, string(end.Response), nil, labels)
	if end.Validation != nil {
		v, _ := json.Marshal(end.Validation)
		w.replies.Add(id, n.Text, false, true, string(v), nil, nil)
	}
}

// decodeResponse reads a node_end's response back into the type the run
// gave it; nil when it has none or it does not read.
func decodeResponse(role string, command bool, raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	switch {
	case command:
		return decodeAs[types.CommandResponse](raw)
	case role == types.RoleDecision:
		return decodeAs[types.DecisionResponse](raw)
	}
	return decodeAs[types.ProcessResponse](raw)
}

func decodeAs[T any](raw json.RawMessage) any {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return v
}
