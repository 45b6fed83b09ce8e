// Package lint holds the chart checks of readme/lint.md#classes that go
// beyond import: terminators with branches, unreachable nodes, loops with
// no way out, Decision shapes with a single branch, and NUL bytes no agent
// can be given. The import rules live with the
// importers; the checks of tags and metadata with nodeconf.
package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/types"
)

// Check returns the graph errors and warnings of every page.
func Check(g *graph.Graph) (errs, warns []types.Diagnostic) {
	errs, warns = terminators(g)
	errs = append(errs, nulBytes(g)...)
	return errs, append(warns, warnings(g)...)
}

// nulBytes finds NUL bytes in what a node hands its agent: the text and
// the labels of its lines go into the prompt, which may be a command-line
// argument, and the id, tags and custom data into arguments and the
// environment. The kernel takes neither with a NUL in it, so every attempt
// of the node would fail with "fork/exec: invalid argument". No other
// character is refused there: tabs, escapes and the rest pass as they are.
func nulBytes(g *graph.Graph) []types.Diagnostic {
	var out []types.Diagnostic
	var labels map[string]string // node -> its first line whose label has a NUL
	for _, e := range g.Doc.Edges {
		if hasNUL(e.Label) {
			if labels == nil {
				labels = map[string]string{}
			}
			if _, ok := labels[e.From]; !ok {
				labels[e.From] = e.ID
			}
		}
	}
	for i := range g.Doc.Nodes {
		n := &g.Doc.Nodes[i]
		where := ""
		switch {
		case hasNUL(n.Text):
			where = "its text"
		case hasNUL(n.ID):
			where = "its id"
		case slices.ContainsFunc(n.Tags, hasNUL):
			where = "a tag"
		}
		if where == "" {
			where = metadataNUL(n.Metadata)
		}
		if e, ok := labels[n.ID]; ok && where == "" {
			where = "the label of its line " + e
		}
		if where == "" {
			continue
		}
		out = append(out, types.Diagnostic{
			Class: "nul_in_text", ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
			Message: fmt.Sprintf("node %s has a NUL byte (\\0) in %s; no agent can be started with it, so every attempt would fail", n.Describe(), where),
			Hint:    "delete the invisible character (it often comes with text pasted from a PDF or a binary file)",
		})
	}
	return out
}

func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// metadataNUL names the first custom data key, in sorted order, whose key
// or value holds a NUL byte; "" when none does. Keys are sorted only for a
// node that has one, so lint of a large chart sorts nothing.
func metadataNUL(md map[string]string) string {
	found := false
	for k, v := range md {
		if hasNUL(k) || hasNUL(v) {
			found = true
			break
		}
	}
	if !found {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(md)) {
		if hasNUL(k) || hasNUL(md[k]) {
			return fmt.Sprintf("custom data %q", k)
		}
	}
	return ""
}

// terminators checks the Start and End shapes. A run starts after the page's
// root terminator, so it cannot branch there; it ends at any other
// terminator, so lines leaving one are never followed
// (readme/charts.md#start-and-end-terminators).
func terminators(g *graph.Graph) (errs, warns []types.Diagnostic) {
	roots := map[string]bool{}
	rootless := map[string]bool{} // pages with no single start: already an error
	for _, p := range g.Doc.Pages {
		roots[p.Root] = true
		rootless[p.ID] = p.Root == ""
	}
	for i := range g.Doc.Nodes {
		n := &g.Doc.Nodes[i]
		if n.Kind != types.KindTerminator || g.OutDegree(i) == 0 {
			continue
		}
		start := isStart(g, i, roots)
		switch {
		case start && g.OutDegree(i) >= 2 && !types.IsFork(n):
			errs = append(errs, types.Diagnostic{
				Class: "branching_terminator", ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
				Message: fmt.Sprintf("start %s has %d outgoing lines, but a Terminator is never asked to choose", n.Describe(), g.OutDegree(i)),
				Hint:    "draw one line from the start to a Decision shape, and branch there",
			})
		case !start && !rootless[n.Page]:
			warns = append(warns, types.Diagnostic{
				Class: "end_with_outgoing_line", ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
				Message: fmt.Sprintf("%s is a Terminator that is not the start, so a run ends there and its outgoing line is never followed", n.Describe()),
				Hint:    "delete the line, or change the shape to a Process if the run should go on",
			})
		}
	}
	return errs, warns
}

// isStart reports whether node i is where a run starts: its page's root, or
// (when the page has no single root) a node no line enters.
func isStart(g *graph.Graph, i int, roots map[string]bool) bool {
	return roots[g.Doc.Nodes[i].ID] || g.InDegree(i) == 0
}

// isEnd reports whether node i ends a run: a terminator that is not a start.
func isEnd(g *graph.Graph, i int, roots map[string]bool) bool {
	return g.Doc.Nodes[i].Kind == types.KindTerminator && !isStart(g, i, roots)
}

func warnings(g *graph.Graph) []types.Diagnostic {
	var out []types.Diagnostic
	doc := g.Doc
	roots := map[string]bool{}
	for _, p := range doc.Pages {
		roots[p.Root] = true
	}
	for _, p := range doc.Pages {
		root, ok := g.Index(p.Root)
		if !ok {
			continue
		}
		reach := g.ReachableUntil(root, func(i int) bool { return isEnd(g, i, roots) })
		var ids []string
		for i := range doc.Nodes {
			n := &doc.Nodes[i]
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
loops:
	for _, loop := range g.TrappingLoops() {
		for _, i := range loop {
			if isEnd(g, i, roots) {
				continue loops // the run ends at the terminator in it
			}
		}
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
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
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
