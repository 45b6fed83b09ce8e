package run

import (
	"strings"

	"github.com/dtree-dev/dtree/prompts"
	"github.com/dtree-dev/dtree/types"
)

// How much of the run so far a step's prompts get
// (readme/context.md#the-run-so-far), widest last.
const (
	ContextNone     = "none"     // no section
	ContextPrevious = "previous" // the step just before
	ContextPath     = "path"     // every step so far (the default)
)

// ContextModes are the modes, narrowest first.
var ContextModes = []string{ContextNone, ContextPrevious, ContextPath}

// narrowest is the narrowest of the modes given; "" counts as path.
func narrowest(modes ...string) string {
	rank := len(ContextModes) - 1
	for _, m := range modes {
		for i, c := range ContextModes {
			if strings.EqualFold(strings.TrimSpace(m), c) && i < rank {
				rank = i
			}
		}
	}
	return ContextModes[rank]
}

// runSoFar is the run-so-far section of the step's prompts: the narrowest
// of the run's --context, the chart's context and the node's.
func (s *step) runSoFar() string {
	w := s.w
	n := len(w.history)
	from := 0
	switch narrowest(w.o.Context, w.o.Chart.Doc.Metadata["context"], s.n.Context) {
	case ContextNone:
		return ""
	case ContextPrevious:
		from = max(n-1, 0)
	}
	return prompts.RunSoFar(n-from, func(i int) prompts.Step { return w.history[from+i].prompt() }, prompts.RunSoFarBytes)
}

// prompt is the step as the run so far shows it.
func (p *pastStep) prompt() prompts.Step {
	s := prompts.Step{Node: p.ID, Text: p.Text, Kind: p.Role, Status: p.Status, Output: p.Output}
	if p.Command {
		s.Kind, s.Command, s.ExitCode = "command", p.CommandText, p.ExitCode
		return s
	}
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
