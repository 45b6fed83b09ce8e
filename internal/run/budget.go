package run

import (
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// StatusBudget: the run stopped at its budget (--max-cost, --max-tokens),
// before an agent call (readme/run.md#budgets). Exit 4, as for the other
// limits.
const StatusBudget = "budget_reached"

// Budget is a run's spending bound and what it knows of its spending:
// the --json summary's budget.
type Budget struct {
	MaxCostUSD float64 `json:"max_cost_usd"` // 0: none
	MaxTokens  int64   `json:"max_tokens"`   // 0: none
	Reached    bool    `json:"reached"`
	// UnknownCalls are the agent calls whose CLI reported no figure for
	// a bound that is set: their spending is not counted. The first
	// maxUnknownNamed are named; UnknownCount counts them all.
	UnknownCalls []string `json:"unknown_calls"`
	UnknownCount int      `json:"unknown_count"`
}

const maxUnknownNamed = 50

// BudgetError is a run stopped by its budget: before an agent call, or
// in the middle of one (Call is set), which was stopped.
type BudgetError struct {
	What  string // "cost" or "tokens"
	Spent string // "$2.61", "12,400 tokens"
	Limit string // "$2.50 (--max-cost)"
	Node  string // the node whose call was not made, or was stopped
	Text  string
	// Unknown counts the calls whose spending is not known.
	Unknown int
	// Call is the call stopped as it crossed the budget ("attempt 1 run
	// (claude)"), "" when the budget stopped the run between calls;
	// CallSpent is what that call had spent when it was stopped.
	Call      string
	CallSpent string
}

func (e *BudgetError) Error() string {
	msg := fmt.Sprintf("the run reached its budget before node %s %s: it spent %s of %s", e.Node, types.Quote(types.Excerpt(e.Text, errorTextRunes)), e.Spent, e.Limit)
	if e.Call != "" {
		msg = fmt.Sprintf("the run reached its budget during node %s %s, which was stopped: it spent %s of %s, %s of it by %s", e.Node,
			types.Quote(types.Excerpt(e.Text, errorTextRunes)), e.Spent, e.Limit, e.CallSpent, e.Call)
	}
	if e.Unknown > 0 {
		msg += fmt.Sprintf(", not counting %s whose CLI reported no figures", types.Plural(e.Unknown, "call"))
	}
	return msg
}

// budgetOn says whether the run has a budget.
func (o *Options) budgetOn() bool { return o.MaxCost > 0 || o.MaxTokens > 0 }

// noteSpending records a finished agent call's usage for the budget: a
// call that reported no figure for a bound that is set is named.
func (w *walker) noteSpending(node string, a Attempt) {
	if !w.o.budgetOn() {
		return
	}
	u := a.Usage
	unknown := w.o.MaxTokens > 0 && u.InputTokens == nil && u.OutputTokens == nil ||
		w.o.MaxCost > 0 && u.CostUSD == nil
	if !unknown {
		return
	}
	b := w.sum.Budget
	b.UnknownCount++
	if len(b.UnknownCalls) < maxUnknownNamed {
		b.UnknownCalls = append(b.UnknownCalls, fmt.Sprintf("node %s attempt %d %s (%s)", node, a.N, a.Purpose, a.CLI))
	}
}

// overBudget is the error that stops the run before node n's next agent
// call, nil while the run is within its budget.
func (w *walker) overBudget(n *types.ProcessedNode) error {
	if !w.o.budgetOn() {
		return nil
	}
	what, spent, limit := w.over(w.spent().Usage)
	if what == "" {
		return nil
	}
	w.sum.Budget.Reached = true
	return &BudgetError{What: what, Spent: spent, Limit: limit, Node: n.ID, Text: firstLine(n.Text), Unknown: w.sum.Budget.UnknownCount}
}

func dollars(f float64) string {
	return "$" + strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", f), "0"), ".")
}
