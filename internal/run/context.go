package run

import (
	"slices"

	"github.com/dtree-dev/dtree/prompts"
	"github.com/dtree-dev/dtree/types"
)

// narrowest is the narrowest of the context modes given; "" or a value
// that is no mode counts as path.
func narrowest(modes ...string) string {
	rank := len(types.ContextModes) - 1
	for _, m := range modes {
		if m, ok := types.ContextMode(m); ok {
			rank = min(rank, slices.Index(types.ContextModes, m))
		}
	}
	return types.ContextModes[rank]
}

// runSoFar is the run-so-far section of the step's prompts: the narrowest
// of the run's --context, the chart's context and the node's.
func (s *step) runSoFar() string {
	w, b := s.w, s.b
	n := b.steps()
	from := 0
	switch narrowest(w.o.Context, w.o.Chart.Doc.Metadata["context"], s.n.Context) {
	case types.ContextNone:
		return ""
	case types.ContextPrevious:
		from = max(n-1, 0)
	}
	step := func(i int) prompts.Step { p := b.past(from + i); return p.prompt() }
	if from > 0 { // numbered from the previous step, not from the run's first
		return prompts.RunSoFar(n-from, step, prompts.RunSoFarBytes)
	}
	return b.soFar.RunSoFar(n, step, prompts.RunSoFarBytes)
}

// prompt is the step as the run so far shows it: as its kind says.
func (p *pastStep) prompt() prompts.Step { return p.kind().soFar(p) }
