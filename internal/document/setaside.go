package document

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// What the builder sets aside besides containers and notes: shapes that are
// invisible leftovers (rule 9), and whole charts that are not flowcharts
// (rule 8).

// blank reports whether a shape has no text in any text area: with no line
// either, it is an invisible leftover (a box emptied, a shape dropped by
// mistake), not a second start.
func blank(n *types.Node) bool {
	if n.Text != "" {
		return false
	}
	for _, t := range n.TextAreas {
		if t != "" {
			return false
		}
	}
	return true
}

// shapeName is a node's shape for a message, "shape" when it has none.
func shapeName(n *types.Node) string {
	if n.Shape == "" {
		return "shape"
	}
	return n.Shape
}

// hasFlowchartShape reports whether a kept shape is of a flowchart kind:
// a Terminator, Process, Decision or Predefined process.
func (b *builder) hasFlowchartShape() bool {
	for i, k := range b.keep {
		if k && b.shapes[i].Kind != types.KindOther {
			return true
		}
	}
	return false
}

// notAFlowchart reports a Lucid chart with shapes but none of a flowchart
// kind (a UML class diagram, an ERD) as one error, not as the dozens of
// branch, line and start errors its lines would give as a flowchart. The
// warnings are dropped with the nodes: they are about reading it as one.
func (b *builder) notAFlowchart() {
	type count struct {
		what string
		n    int
	}
	var counts []count
	at := map[string]int{}
	kinds := map[string]bool{}
	for i, k := range b.keep {
		if !k {
			continue
		}
		what := readableShape(shapeName(&b.shapes[i]))
		// "UML Class", "Entity Relationship Entity"; a Data shape from the
		// flowchart library is just "Data".
		if lib := b.libraries[what]; lib != "" && !strings.HasPrefix(lib, "Flowchart") &&
			!strings.Contains(strings.ToLower(what), strings.ToLower(lib)) {
			what = lib + " " + what
		}
		if kind := diagramKind(what); kind != "" {
			kinds[kind] = true
		}
		if j, ok := at[what]; ok {
			counts[j].n++
			continue
		}
		at[what] = len(counts)
		counts = append(counts, count{what, 1})
	}
	slices.SortStableFunc(counts, func(x, y count) int { return y.n - x.n })
	const shown = 3
	var parts []string
	for i, c := range counts {
		if i == shown {
			rest := 0
			for _, c := range counts[shown:] {
				rest += c.n
			}
			parts = append(parts, fmt.Sprintf("%d other %s", rest, types.Choose(rest, "shape", "shapes")))
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", c.n, c.what, types.Choose(c.n, "shape", "shapes")))
	}
	// Named by its kind when its shapes say one ("the chart is a mind
	// map"), else by what it has.
	head := "the chart has"
	if len(kinds) == 1 {
		for kind := range kinds {
			head = "the chart is " + kind + ": it has"
		}
	}
	b.doc.Warnings = []types.Diagnostic{}
	b.errorf("not_a_flowchart", nil, 0,
		"dtree runs flowcharts: draw the workflow with Lucid's flowchart shapes (a Terminator to start, Process steps, Decision branches with labelled lines) and export that document",
		"%s %s, so it is not a flowchart dtree can run",
		head, joinAnd(append(parts, "no flowchart shapes (Terminator, Process, Decision, Predefined process)")))
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
