// Package lint holds the chart checks of SPEC §2 that go beyond import:
// unreachable nodes, loops with no way out, and Decision shapes with a
// single branch. The import rules live with the importers.
package lint

import (
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/types"
)

// Warnings returns the graph warnings for every page with a known root.
func Warnings(g *graph.Graph) []types.Diagnostic {
	var out []types.Diagnostic
	doc := g.Doc
	for _, p := range doc.Pages {
		root, ok := g.Index(p.Root)
		if !ok {
			continue
		}
		reach := g.Reachable(root)
		var ids []string
		for i, n := range doc.Nodes {
			if n.Page == p.ID && !reach[i] {
				ids = append(ids, n.ID)
			}
		}
		if len(ids) > 0 {
			out = append(out, types.Diagnostic{
				Class: "unreachable_node", ID: ids[0], IDs: ids, Page: p.ID, Line: nodeLine(g, ids[0]),
				Message: fmt.Sprintf("%s not reachable from the start %s: %s",
					plural(len(ids), "node is", "nodes are"), describe(g, p.Root), describeAll(g, ids)),
				Hint: "connect them to the flow, or delete them",
			})
		}
	}
	for _, loop := range g.TrappingLoops() {
		ids := make([]string, len(loop))
		for k, i := range loop {
			ids[k] = doc.Nodes[i].ID
		}
		out = append(out, types.Diagnostic{
			Class: "loop_without_exit", ID: ids[0], IDs: ids, Page: doc.Nodes[loop[0]].Page, Line: nodeLine(g, ids[0]),
			Message: fmt.Sprintf("a loop with no way out: %s; a run that enters it stops only at the visit limit", describeAll(g, ids)),
			Hint:    "add a decision in the loop with a labelled line that leaves it",
		})
	}
	for i, n := range doc.Nodes {
		if n.Kind == types.KindDecision && g.OutDegree(i) == 1 {
			out = append(out, types.Diagnostic{
				Class: "decision_one_branch", ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
				Message: fmt.Sprintf("Decision shape %s has one outgoing line, so it runs as a plain step", describe(g, n.ID)),
				Hint:    "add a labelled line for each other answer, or change the shape to a Process",
			})
		}
	}
	return out
}

func nodeLine(g *graph.Graph, id string) int {
	if n, ok := g.Node(id); ok {
		return n.Line
	}
	return 0
}

func describe(g *graph.Graph, id string) string {
	if n, ok := g.Node(id); ok {
		return n.Describe()
	}
	return id
}

func describeAll(g *graph.Graph, ids []string) string {
	const max = 5
	var parts []string
	for i, id := range ids {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(ids)-max))
			break
		}
		parts = append(parts, describe(g, id))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
