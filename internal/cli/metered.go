package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/types"
)

// unmetered names the CLIs the run's nodes can use (a node's CLI list, its
// retry CLI when it retries, its validation CLI when it validates) that
// cannot report a figure the budget bounds, with the figure: "cursor
// (cost_usd)". A budget would let their calls through uncounted
// (readme/run.md#budgets). A CLI answered in process (replay) costs
// nothing and is never named.
func unmetered(c *chart.Chart, start string, reg *agent.Registry, noValidate bool, usd float64, tokens int64, getenv func(string) string) []string {
	if usd <= 0 && tokens <= 0 {
		return nil
	}
	entries := map[string]agent.Entry{}
	for _, e := range reg.Entries() {
		entries[e.Def.Name] = e
	}
	g := c.Graph
	root, _ := g.Index(start)
	reach := g.ReachableUntil(root, func(i int) bool {
		return c.Nodes[i].Role == types.RoleTerminator && i != root
	})
	var out []string
	seen := map[string]bool{}
	note := func(name string) {
		def, err := reg.Lookup(name)
		if err != nil || def.InProcess || seen[def.Name] {
			return // a CLI that cannot run is preflight's to say
		}
		seen[def.Name] = true
		has := agent.TraitsOf(entries[def.Name], getenv).Usage
		var lacks []string
		if usd > 0 && !slices.Contains(has, "cost_usd") {
			lacks = append(lacks, "cost_usd")
		}
		for _, f := range []string{"input_tokens", "output_tokens"} {
			if tokens > 0 && !slices.Contains(has, f) {
				lacks = append(lacks, f)
			}
		}
		if len(lacks) > 0 {
			out = append(out, fmt.Sprintf("%s (%s)", def.Name, strings.Join(lacks, ", ")))
		}
	}
	for i, ok := range reach {
		n := &c.Nodes[i]
		if !ok || !n.Step.Agent() {
			continue
		}
		for _, name := range n.CLIChain() {
			note(name)
		}
		if n.Retries > 0 {
			note(n.RetryCLI)
		}
		if n.Validate && !noValidate {
			note(n.ValidateCLI)
		}
	}
	return out
}

// unmeteredError refuses a run with a budget whose CLIs cannot report
// what it bounds.
func unmeteredError(clis []string) error {
	return &UsageError{Err: fmt.Errorf("the budget could not count the calls of %s, which cannot report what it bounds: %s",
		types.Plural(len(clis), "CLI"), strings.Join(clis, ", ")),
		Hint: "use CLIs that report it ('dtree clis' lists what each reports), or let their calls go uncounted with --allow-unmetered (allow_unmetered: true)"}
}
