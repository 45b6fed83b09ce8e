package run

import (
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// Renumber renames the node ids of what is carried, old id → new id: the
// chart was exported again, its ids new, its nodes matched to the old ones
// (chart.Match). The steps' events, the lines copied into the new log, the
// node the run goes on at and the run's start then name the new ids; an id
// ids does not have is left as it is.
func (c *Carried) Renumber(ids map[string]string) {
	re := func(id *string) {
		if n, ok := ids[*id]; ok {
			*id = n
		}
	}
	re(&c.Start.Start)
	re(&c.At)
	for i := range c.path {
		re(&c.path[i])
	}
	for i := range c.steps {
		re(&c.steps[i].next)
	}
	for i := range c.Steps {
		c.Steps[i].renumber(ids)
	}
	c.ids = ids // for the steps read again from the file (Each)
}

// renumber renames the node ids of one carried step (Renumber).
func (s *CarriedStep) renumber(ids map[string]string) {
	re := func(id *string) {
		if n, ok := ids[*id]; ok {
			*id = n
		}
	}
	re(&s.Start.Node)
	re(&s.End.Node)
	re(&s.End.Next)
	for j := range s.Calls {
		re(&s.Calls[j].Node)
	}
	for j := range s.Retries {
		re(&s.Retries[j].Node)
	}
	for j, l := range s.lines {
		s.lines[j] = runlog.Renumber(l, ids)
	}
}

// PathError is a carried step that is not a step of the chart resumed:
// a node it does not have, a next node no line of it leads to, or a step
// that is not where the one before it led. The log was edited, or it is
// another chart's.
type PathError struct {
	Line int    // the line of events.jsonl that says so
	Node string // the step's node: --from it runs it again
	Why  string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("events.jsonl line %d: %s", e.Line, e.Why)
}

// Check says whether the carried steps are a path of ch, the chart the
// run goes on with, from start: the first step at start (or, for a start
// terminator, where its line leads), each next one where the step before
// it led, and each led on by a line of the chart, or to the end where
// the node has none. A resume never follows a recorded next that is not
// a line of the chart.
func (c *Carried) Check(ch *chart.Chart, start string) error {
	g := ch.Graph
	want := start
	if i, ok := g.Index(start); ok && ch.Nodes[i].Role == types.RoleTerminator {
		if out := g.Out(i); len(out) > 0 {
			want = out[0].To
		}
	}
	var bad *PathError
	k, prev := 0, ""
	err := c.Each(func(s *CarriedStep) bool {
		bad = checkStep(g, s, k, want, prev)
		k, prev, want = k+1, s.Start.Node, s.End.Next
		return bad == nil
	})
	if err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	return nil
}

// checkStep is Check of the k-th step, s, which the step before it, of
// node prev, led to want; nil when it is a step of g.
func checkStep(g *graph.Graph, s *CarriedStep, k int, want, prev string) *PathError {
	id, end := s.Start.Node, s.End
	{
		i, ok := g.Index(id)
		switch {
		case !ok:
			return &PathError{Line: s.startLine, Node: id, Why: fmt.Sprintf("the run took node %s, which the chart does not have", id)}
		case id != want && k == 0:
			return &PathError{Line: s.startLine, Node: id, Why: fmt.Sprintf("the run's first step is node %s, not its start %s", id, want)}
		case id != want:
			return &PathError{Line: s.startLine, Node: prev,
				Why: fmt.Sprintf("the run went on at node %s, but the step before it led to %s", id, want)}
		}
		out := g.Out(i)
		if end.Next == "" {
			if len(out) > 0 {
				return &PathError{Line: s.endLine, Node: id, Why: fmt.Sprintf("node %s led to the end, but the chart has lines from it (to %s)", id, targets(out))}
			}
		} else if f := g.Doc.Nodes[i].Fork; !hasLine(out, end.Next, end.Label) && (f == nil || end.Next != f.Join) {
			// A fork leads to its join: its lines are its branches'.
			why := fmt.Sprintf("node %s led to %s, but the chart has no line %s → %s", id, end.Next, id, end.Next)
			if end.Label != "" {
				why = fmt.Sprintf("node %s led to %s by %q, but the chart has no line %s → %s labelled %q", id, end.Next, end.Label, id, end.Next, end.Label)
			}
			if len(out) > 0 {
				why += fmt.Sprintf(" (its lines go to %s)", targets(out))
			} else {
				why += " (it has no line out)"
			}
			return &PathError{Line: s.endLine, Node: id, Why: why}
		}
	}
	return nil
}

// hasLine says whether one of the lines out goes to next, with the label
// taken when there is one.
func hasLine(out []types.Edge, next, label string) bool {
	for _, e := range out {
		if e.To == next && (label == "" || e.Label == label) {
			return true
		}
	}
	return false
}

// targets names where lines go: "5, 7".
func targets(out []types.Edge) string {
	ids := make([]string, len(out))
	for i, e := range out {
		ids[i] = e.To
	}
	return strings.Join(ids, ", ")
}
