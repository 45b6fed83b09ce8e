package run

import (
	"fmt"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/prompts"
	"github.com/dtree-dev/dtree/types"
)

// meter is observe's "Metered" part: as a call's usage arrives, the run's
// spending so far, this call's included, is checked against the budget
// (readme/run.md#budgets), and a call past it is stopped with a
// *BudgetError, the overshoot at most the message that crossed it; a call
// that begins a turn past its node's max_turns is stopped with a
// *TurnsError, unless its CLI was given max_turns to stop itself
// (readme/run.md#max-turns).
func (w *walker) meter(n *types.ProcessedNode, attempt int, cli, purpose string, a agent.Activity) error {
	if a.Kind != agent.ActivityUsage {
		return nil
	}
	if n.MaxTurns > 0 && a.Turns > n.MaxTurns {
		// Looked up only past the bound: once for a call it stops; a CLI
		// given max_turns stops itself soon after.
		if def, err := w.o.Registry.Lookup(cli); err == nil && len(def.MaxTurnsArgs) == 0 {
			return &TurnsError{Max: n.MaxTurns, Turn: a.Turns}
		}
	}
	if !w.o.budgetOn() {
		return nil
	}
	u, _ := agent.CheckUsage(a.Usage) // the figures are checked, not warned of, until the call ends
	t := w.spent()                    // the calls before this one; Add makes new figures
	t.Add(u, 0)
	what, spent, limit := w.over(t.Usage)
	if what == "" {
		return nil
	}
	e := &BudgetError{What: what, Spent: spent, Limit: limit, Node: n.ID, Text: firstLine(n.Text),
		Unknown: w.sum.Budget.UnknownCount, Call: fmt.Sprintf("attempt %d %s (%s)", attempt, purpose, cli)}
	if what == "cost" {
		e.CallSpent = "$0"
		if u.CostUSD != nil {
			e.CallSpent = dollars(*u.CostUSD)
		}
	} else {
		e.CallSpent = types.Thousands(tokensOf(u)) + " tokens"
	}
	return e
}

// over says which bound the spending u has reached: what ("cost",
// "tokens"), what was spent and the bound, as the error says them; what
// is "" while u is within the budget.
func (w *walker) over(u types.Usage) (what, spent, limit string) {
	tokens := tokensOf(u)
	switch {
	case w.o.MaxTokens > 0 && tokens >= w.o.MaxTokens:
		return "tokens", types.Thousands(tokens) + " tokens", types.Thousands(w.o.MaxTokens) + " tokens (--max-tokens)"
	case w.o.MaxCost > 0 && u.CostUSD != nil && *u.CostUSD >= w.o.MaxCost:
		return "cost", dollars(*u.CostUSD), dollars(w.o.MaxCost) + " (--max-cost)"
	}
	return "", "", ""
}

// tokensOf is input and output tokens together, as far as they are known.
func tokensOf(u types.Usage) int64 {
	var tokens int64
	if u.InputTokens != nil {
		tokens = types.SatAdd(tokens, *u.InputTokens)
	}
	if u.OutputTokens != nil {
		tokens = types.SatAdd(tokens, *u.OutputTokens)
	}
	return tokens
}

// TurnsError stops an agent call that began a turn past its node's
// max_turns. The attempt fails as any agent call that fails, and is
// retried with this as its feedback.
type TurnsError struct {
	Max  int // the node's max_turns
	Turn int // the turn it began
}

func (e *TurnsError) Error() string {
	return fmt.Sprintf("it began turn %d, past max_turns %d: do the task in fewer turns", e.Turn, e.Max)
}

// budgetLine is the line a call's prompt leads with once the run has
// spent prompts.BudgetNearFraction of a bound: what is left of the bound
// most spent. "" before that, and with no budget.
func (w *walker) budgetLine() string {
	if !w.o.budgetOn() {
		return ""
	}
	u := w.spent().Usage
	most, line := prompts.BudgetNearFraction, ""
	if max := w.o.MaxTokens; max > 0 {
		t := tokensOf(u)
		if f := float64(t) / float64(max); f >= most {
			most = f
			line = prompts.BudgetLine(types.Thousands(t)+" tokens", types.Thousands(max)+" tokens", types.Thousands(max-min(t, max))+" tokens")
		}
	}
	if max := w.o.MaxCost; max > 0 && u.CostUSD != nil {
		if f := *u.CostUSD / max; f >= most {
			line = prompts.BudgetLine(dollars(*u.CostUSD), dollars(max), dollars(max-min(*u.CostUSD, max)))
		}
	}
	return line
}

// costless is the warning for a call that failed or was stopped after it
// reported tokens and before it reported a cost (a stream-json CLI reports
// its cost only in its last event), in a run with --max-cost: its spending
// is not counted there, and nothing else would say so; "" for any other.
// The warning says "CLI reported …: counted as unknown" (UsageWarner).
func (w *walker) costless(u types.Usage, err error) string {
	if w.o.MaxCost <= 0 || err == nil || u.CostUSD != nil || u.InputTokens == nil && u.OutputTokens == nil {
		return ""
	}
	return fmt.Sprintf("%s tokens and no cost before it ended (--max-cost cannot count them; --max-tokens can)", types.Thousands(tokensOf(u)))
}

// spent is what the budget counts: the run's calls, and, in a resumed
// run, those of the visits the earlier run did not finish
// (Carried.Unfinished), which are no step of this run's.
func (w *walker) spent() types.UsageTotal {
	t := w.sum.Usage
	if r := w.o.Resume; r != nil && r.Unfinished.Calls > 0 {
		t.Add(r.Unfinished.Usage, 0)
	}
	return t
}
