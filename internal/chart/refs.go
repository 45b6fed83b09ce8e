package chart

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/internal/vars"
	"github.com/dtree-dev/dtree/types"
)

// maxReachChecks bounds how many referenced nodes get a reachability
// check, each a walk of the graph and a table of its nodes: a chart of
// 100,000 nodes that each name another would otherwise cost 100,000 walks
// and their tables.
const maxReachChecks = 64

// checkRefs checks the {{…}} references in each node's text, validation
// prompt and command (readme/context.md#variables): a variable the chart
// does not declare and the run is not given (known), a node that does not
// exist or cannot have run before the node naming it, a field no step
// has, a reference in a command where no quoting keeps its value from
// being read as code (readme/context.md#in-a-command). Each is an error
// that names the node and the reference.
func checkRefs(doc *types.Document, g *graph.Graph, given []string) []types.Diagnostic {
	known := map[string]bool{}
	for _, v := range doc.Vars {
		known[v.Name] = true
	}
	for _, n := range given {
		known[n] = true
	}
	var diags []types.Diagnostic
	reach := map[int][]bool{} // a referenced node → the nodes it reaches
	// reachable is what node j reaches, nil once maxReachChecks walks are
	// spent (then the reference is not checked).
	reachable := func(j int) []bool {
		seen, done := reach[j]
		if !done && len(reach) < maxReachChecks {
			seen = g.Reachable(j)
			reach[j] = seen
		}
		return seen
	}
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		if n.Kind == types.KindTerminator {
			continue
		}
		bad := func(class, hint, format string, args ...any) {
			diags = append(diags, types.Diagnostic{Class: class, ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
				Message: fmt.Sprintf("node %s: ", n.ID) + fmt.Sprintf(format, args...), Hint: hint})
		}
		check := func(r vars.Ref) {
			raw := types.Excerpt(r.Raw, 80)
			switch r.NS {
			case vars.NSVar:
				if !known[r.Name] {
					bad("unknown_variable", knownVars(known),
						"%s names variable %q, which the chart does not declare and the run is not given", raw, r.Name)
				}
			case vars.NSRun:
				if !slices.Contains(vars.RunFields, r.Name) {
					bad("unknown_variable", "the run's fields are {{run.id}} and {{run.workdir}}", "%s: the run has no %q", raw, r.Name)
				}
			case vars.NSNode:
				j, ok := g.Index(r.Name)
				switch {
				case !ok:
					bad("unknown_node_reference", "name a node by its id ('dtree inspect CHART' lists them)",
						"%s names node %q, which is not in the chart", raw, types.Excerpt(r.Name, 60))
				case !slices.Contains(vars.NodeFields, r.Field):
					bad("unknown_field", "use comments, answer, output, exit_code or reason",
						"%s asks for %q, which no step has", raw, types.Excerpt(r.Field, 40))
				case j == i:
					// Its own earlier visit, which only a loop gives.
					again := false
					for _, e := range g.Out(i) {
						t, _ := g.Index(e.To)
						if seen := reachable(t); seen == nil || seen[i] {
							again = true
							break
						}
					}
					if !again {
						bad("unreachable_reference", "a step sees the steps before it; its own result is known only to a later visit, in a loop",
							"%s names the node itself, and no loop brings the run back to it", raw)
					}
				default:
					if seen := reachable(j); seen != nil && !seen[i] {
						bad("unreachable_reference", "reference a node on a path that leads to this one",
							"%s names node %s, which no path leads from to this node, so it never runs before it", raw, r.Name)
					}
				}
			}
		}
		vars.Scan(n.Text, check)
		for k, v := range n.Metadata {
			if f := types.FoldName(k); f == "validateprompt" || f == "command" {
				vars.Scan(v, check)
			}
			if types.FoldName(k) == "command" {
				_, probs := vars.ParseCommand(v)
				for _, p := range probs {
					bad("unsafe_reference", p.Hint, "command: %s %s", types.Excerpt(p.Ref.Raw, 80), p.Why)
				}
			}
		}
	}
	return diags
}

// knownVars is the hint for an unknown variable: the names there are, or
// how to declare one.
func knownVars(known map[string]bool) string {
	const howTo = "declare it (YAML vars:, or custom data on the Lucid document) or pass --var NAME=VALUE"
	if len(known) == 0 {
		return howTo
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	return "known: " + strings.Join(names, ", ") + "; or " + howTo
}
