// Package render draws a loaded chart for people: the flow from a page's
// start as an indented outline, branch labels shown, a merge or a loop
// printed as a reference back to a node already shown.
package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/types"
)

// maxIndent caps the outline's nesting: past it, lines carry their depth
// instead of more indentation, so a chart with thousands of nested decisions
// still prints in linear space.
const maxIndent = 24

// Flow writes the outline of each page (or only the given page).
func Flow(w io.Writer, c *chart.Chart, page *types.Page, d types.Defaults) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	doc := c.Doc
	title := doc.Title
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(bw, "%s: %q, %s, %s, %s\n", doc.Source, title, doc.Format,
		types.Plural(len(doc.Pages), "page"), types.Plural(len(doc.Nodes), "node"))
	if len(doc.Vars) > 0 {
		list := make([]string, len(doc.Vars))
		for i, v := range doc.Vars {
			list[i] = v.Name + "=" + types.Excerpt(v.Default, 40)
			if !v.HasDefault {
				list[i] = v.Name + " (no default: --var " + v.Name + "=VALUE)"
			}
		}
		fmt.Fprintf(bw, "variables: %s\n", strings.Join(list, ", "))
	}
	roots := map[string]bool{}
	for _, p := range doc.Pages {
		roots[p.Root] = true
	}
	pages := doc.Pages
	if page != nil {
		pages = []types.Page{*page}
	}
	// A chart with errors is drawn all the same: each node and line an
	// error names says so.
	errs := types.ClassesByID(c.Errors)
	for _, p := range pages {
		o := outliner{w: bw, c: c, d: d, printed: make([]bool, len(doc.Nodes)), onPath: make([]bool, len(doc.Nodes)), roots: roots, errs: errs}
		o.page(p)
	}
	return bw.Flush()
}

type outliner struct {
	w       *bufio.Writer
	c       *chart.Chart
	d       types.Defaults
	printed []bool
	onPath  []bool
	roots   map[string]bool   // page starts
	errs    map[string]string // node or line id -> the classes of its errors
}

func (o *outliner) page(p types.Page) {
	fmt.Fprintf(o.w, "\npage %s", p.ID)
	if p.Title != "" {
		fmt.Fprintf(o.w, " %q", p.Title)
	}
	root, ok := o.c.Graph.Index(p.Root)
	if !ok {
		// No start (no_root, ambiguous_root): each node that no line
		// enters starts a flow, and the rest follow.
		fmt.Fprintln(o.w, ": no start node")
		for pass := 0; pass < 2; pass++ {
			for i := range o.c.Doc.Nodes {
				n := &o.c.Doc.Nodes[i]
				if n.Page == p.ID && !o.printed[i] && (pass == 1 || o.c.Graph.InDegree(i) == 0) {
					o.sequence(i, "  ", "  ", 0)
				}
			}
		}
		return
	}
	fmt.Fprintf(o.w, ", start %s\n", p.Root)
	o.sequence(root, "  ", "  ", 0)
	var rest []string
	for i := range o.c.Doc.Nodes {
		n := &o.c.Doc.Nodes[i]
		if n.Page == p.ID && !o.printed[i] {
			rest = append(rest, n.Describe())
		}
	}
	if len(rest) > 0 {
		fmt.Fprintf(o.w, "  not reachable from the start: %s\n", strings.Join(rest, ", "))
	}
}

// sequence prints node i and the nodes that follow it one after another at
// the same indentation, then each branch of the decision that ends the
// sequence one level deeper. The first line starts with first (a branch's
// label), the rest with indent, which stops growing at maxIndent: deeper
// lines say their depth instead.
func (o *outliner) sequence(i int, first, indent string, depth int) {
	prefix := indent
	if depth >= maxIndent {
		prefix = fmt.Sprintf("%s[depth %d] ", indent, depth+1)
	}
	var chain []int
	defer func() {
		for _, k := range chain {
			o.onPath[k] = false
		}
	}()
	lead := first
	for {
		if o.printed[i] {
			o.reference(lead, i)
			return
		}
		o.printed[i], o.onPath[i] = true, true
		chain = append(chain, i)
		fmt.Fprintf(o.w, "%s%s\n", lead, o.line(i))
		out := o.c.Graph.Out(i)
		if o.isEnd(i) && len(out) > 0 {
			// A run ends at an end terminator; its lines are not followed.
			fmt.Fprintf(o.w, "%s(the run ends here; %s leaving it not followed)\n", prefix, types.Plural(len(out), "line"))
			return
		}
		switch len(out) {
		case 0:
			return
		case 1:
			i, _ = o.c.Graph.Index(out[0].To)
			lead = prefix
			if label := shownLabel(out[0].Label) + o.edgeErr(out[0]); label != "" {
				lead = prefix + strings.TrimSpace(label) + ": "
			}
			continue
		}
		for k, e := range out {
			branch, next := "├─ ", "│  "
			if k == len(out)-1 {
				branch, next = "└─ ", "   "
			}
			j, _ := o.c.Graph.Index(e.To)
			label := shownLabel(e.Label)
			switch fork := o.c.Doc.Nodes[i].Fork; {
			case fork != nil && k < len(fork.Branches):
				// A fork's branches run at once (readme/parallel.md).
				label = "‖ " + shownLabel(fork.Branches[k].Name)
			case label == "":
				label = "(no label)"
			}
			label += o.edgeErr(e)
			inner := indent + next
			if depth+1 >= maxIndent {
				inner = indent
			}
			o.sequence(j, prefix+branch+label+": ", inner, depth+1)
		}
		return
	}
}

// shownLabel is a line's label as the outline shows it: its first line,
// bounded, as a node's text is; a label's line break would start a line
// of the outline that is none.
func shownLabel(label string) string {
	return types.Excerpt(label, maxLabel)
}

// maxLabel bounds a label in the outline, in runes.
const maxLabel = 100

// isEnd reports whether node i is an end terminator: a terminator no run
// starts at.
func (o *outliner) isEnd(i int) bool {
	n := o.c.Doc.Nodes[i]
	return n.Kind == types.KindTerminator && o.c.Graph.InDegree(i) > 0 && !o.roots[n.ID]
}

// reference prints a node that was already shown: a loop when the node is on
// the way here, a merge otherwise.
func (o *outliner) reference(prefix string, i int) {
	what := "joins"
	if o.onPath[i] {
		what = "loops back to"
	}
	fmt.Fprintf(o.w, "%s↩ %s %s\n", prefix, what, o.c.Doc.Nodes[i].Describe())
}

// line is one node: id, first line of text, and how it runs.
func (o *outliner) line(i int) string {
	n := o.c.Nodes[i]
	text := types.Excerpt(n.Text, 60)
	facts := []string{n.Role}
	if n.Role != types.RoleProcess && n.Role != n.Kind && n.Kind != types.KindOther {
		facts[0] += " (" + n.Shape + " shape)"
	}
	switch {
	case n.Step == types.StepCommand:
		if n.Retries > 0 {
			facts = append(facts, fmt.Sprintf("retries %d", n.Retries))
		}
		if n.Timeout != o.d.Timeout {
			facts = append(facts, "timeout "+types.ShortDuration(n.Timeout))
		}
		facts = append(facts, guardFacts(n)...)
		// Last, unquoted: the closing bracket ends it, and quotes in a
		// command read as they are.
		facts = append(facts, "command: "+oneLineCommand(n.Command))
	case n.Step.Agent():
		facts = append(facts, strings.Join(n.CLIChain(), " or "))
		if n.Role == types.RoleProcess && !n.Validate {
			facts = append(facts, "no validation")
		}
		if n.Validate && n.ValidateCLI != n.CLI {
			facts = append(facts, "validated by "+n.ValidateCLI)
		}
		if n.RetryCLI != n.CLI {
			facts = append(facts, "retried by "+n.RetryCLI)
		}
		if n.Retries != o.d.Retries {
			facts = append(facts, fmt.Sprintf("retries %d", n.Retries))
		}
		if n.Timeout != o.d.Timeout {
			facts = append(facts, "timeout "+types.ShortDuration(n.Timeout))
		}
		if n.MaxVisits != o.d.MaxVisits {
			facts = append(facts, fmt.Sprintf("max visits %d", n.MaxVisits))
		}
		facts = append(facts, guardFacts(n)...)
	case n.Step != types.RoleStep(n.Role): // a kind of its own, with no facts of its own yet
		facts = append(facts, string(n.Step))
	}
	if f := n.Fork; f != nil {
		join := "branches never meet"
		if f.Join != "" {
			join = "joins at " + f.Join
		}
		facts = append(facts, fmt.Sprintf("fork of %d, %s", len(f.Branches), join))
	}
	if n.Join != "" {
		facts = append(facts, "join "+n.Join)
	}
	line := fmt.Sprintf("%s %s  [%s]", n.ID, text, strings.Join(facts, ", "))
	if errs := o.errs[n.ID]; errs != "" {
		line += "  ✗ " + errs
	}
	return line
}

// guardFacts are what a node's custom data says of the working tree
// (readme/workspace.md): its paths and its rollback.
func guardFacts(n types.ProcessedNode) []string {
	var facts []string
	if len(n.Paths) > 0 {
		facts = append(facts, "paths "+types.Quote(types.Excerpt(strings.Join(n.Paths, ", "), 60)))
	}
	if n.Rollback != "" {
		facts = append(facts, "rollback "+n.Rollback)
	}
	return facts
}

// edgeErr is " ✗ CLASS" for a line an error names, else "".
func (o *outliner) edgeErr(e types.Edge) string {
	if errs := o.errs[e.ID]; errs != "" && e.ID != "" {
		return " ✗ " + errs
	}
	return ""
}

// oneLineCommand is a command on one line for the outline: its first
// line, cut at 40 characters, control characters spelt.
func oneLineCommand(cmd string) string {
	q := types.Quote(types.Excerpt(cmd, 40))
	return q[1 : len(q)-1]
}
