package document

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// shape is a source item before it is known to be a node: containers,
// groups and untouched annotations are dropped by the builder.
type shape struct {
	node types.Node
	// container is set for swim lanes, frames, containers and groups: items
	// that hold other items and are never steps.
	container bool
	// annotation is set for text-only shapes, dropped when no line touches
	// them (rule 9).
	annotation bool
}

// line is a source line before its direction and ends are resolved.
type line struct {
	id     string
	page   string
	ends   [2]string // endpoint1 (CSV Line Source), endpoint2 (Line Destination)
	styles [2]string
	labels []string // text areas in order, untrimmed
	srcLn  int
}

// builder turns the items an importer read into a types.Document. Both
// importers feed it, so every graph rule of lucid-formats.md §9 (10-15) is
// written once.
type builder struct {
	doc    *types.Document
	pages  map[string]int // page id -> index in doc.Pages
	shapes []shape
	lines  []line
	// items maps every id to what it names: index into shapes (>= 0) or
	// into lines (encoded as -1-i).
	items map[string]int
	// nodes maps node ids to their index in doc.Nodes, once known.
	nodes map[string]int
}

func newBuilder(format string) *builder {
	return &builder{
		doc: &types.Document{
			FormatVersion: types.FormatVersion,
			Format:        format,
			Pages:         []types.Page{},
			Nodes:         []types.Node{},
			Edges:         []types.Edge{},
			Errors:        []types.Diagnostic{},
			Warnings:      []types.Diagnostic{},
		},
		pages: map[string]int{},
		items: map[string]int{},
	}
}

func (b *builder) addPage(id, title string) {
	if _, ok := b.pages[id]; ok {
		return
	}
	b.pages[id] = len(b.doc.Pages)
	b.doc.Pages = append(b.doc.Pages, types.Page{ID: id, Title: title})
}

func (b *builder) addShape(s shape) {
	b.items[s.node.ID] = len(b.shapes)
	b.shapes = append(b.shapes, s)
}

func (b *builder) addLine(l line) {
	b.items[l.id] = -1 - len(b.lines)
	b.lines = append(b.lines, l)
}

// has reports whether an item with this id was already added.
func (b *builder) has(id string) bool {
	_, ok := b.items[id]
	return ok
}

func (b *builder) errorf(class string, ids []string, srcLine int, hint, format string, args ...any) {
	b.doc.Errors = append(b.doc.Errors, diag(class, ids, srcLine, hint, format, args...))
}

func (b *builder) warnf(class string, ids []string, srcLine int, hint, format string, args ...any) {
	b.doc.Warnings = append(b.doc.Warnings, diag(class, ids, srcLine, hint, format, args...))
}

func diag(class string, ids []string, srcLine int, hint, format string, args ...any) types.Diagnostic {
	if ids == nil {
		ids = []string{}
	}
	d := types.Diagnostic{Class: class, IDs: ids, Line: srcLine, Message: fmt.Sprintf(format, args...), Hint: hint}
	if len(ids) > 0 {
		d.ID = ids[0]
	}
	return d
}

// build resolves the items into nodes and edges and checks the graph.
func (b *builder) build() *types.Document {
	touched := make(map[string]bool, len(b.lines)*2)
	for _, l := range b.lines {
		touched[l.ends[0]] = true
		touched[l.ends[1]] = true
	}
	b.nodes = make(map[string]int, len(b.shapes))
	for _, s := range b.shapes {
		switch {
		case s.container:
			continue
		case s.annotation && !touched[s.node.ID]:
			b.warnf("ignored_annotation", []string{s.node.ID}, s.node.Line,
				"text that no line touches is a note, not a step; connect it with a line if it should run",
				"%s is text that no line touches, so it is read as a note and not run", s.node.Describe())
			continue
		}
		if _, ok := b.pages[s.node.Page]; !ok {
			b.addPage(s.node.Page, "")
		}
		b.nodes[s.node.ID] = len(b.doc.Nodes)
		b.doc.Nodes = append(b.doc.Nodes, s.node)
	}
	if len(b.doc.Nodes) == 0 {
		if len(b.doc.Errors) == 0 {
			b.errorf("empty_chart", nil, 0,
				"draw at least one shape (a Process with the task as its text), then export again",
				"the chart has no shapes to run")
		}
		return b.doc
	}
	b.buildEdges()
	b.checkBranches()
	b.findRoots()
	b.placeDiagnostics()
	return b.doc
}

// placeDiagnostics sets each finding's page from the first id it names.
func (b *builder) placeDiagnostics() {
	for _, list := range [][]types.Diagnostic{b.doc.Errors, b.doc.Warnings} {
		for i := range list {
			d := &list[i]
			if d.Page != "" || d.ID == "" {
				continue
			}
			if idx, ok := b.items[d.ID]; ok && idx >= 0 {
				d.Page = b.shapes[idx].node.Page
			} else if ok {
				d.Page = b.lines[-1-idx].page
			} else if _, ok := b.pages[d.ID]; ok {
				d.Page = d.ID
			}
		}
	}
}

// orientation gives a line's flow as (from end, to end) indexes, and ok false
// when both ends carry arrowheads (rule 10).
func orientation(l line) (from, to int, ok bool) {
	h1, h2 := isArrowhead(l.styles[0]), isArrowhead(l.styles[1])
	switch {
	case h1 && h2:
		return 0, 0, false
	case h1:
		return 1, 0, true
	default:
		return 0, 1, true
	}
}

func (b *builder) buildEdges() {
	seen := make(map[string]int, len(b.lines))
	for _, l := range b.lines {
		fromEnd, toEnd, ok := orientation(l)
		if !ok {
			b.errorf("bidirectional_line", []string{l.id}, l.srcLn,
				"remove one of the arrowheads (select the line, then Line options > arrows) so the line points one way",
				"line %s %s has arrowheads at both ends, so its direction is unknown", l.id, b.between(l))
			continue
		}
		if !isArrowhead(l.styles[0]) && !isArrowhead(l.styles[1]) {
			b.warnf("line_without_arrowheads", []string{l.id}, l.srcLn,
				"add an arrowhead at the end the flow goes to",
				"line %s %s has no arrowhead; read as going from its first end (%s) to its second",
				l.id, b.between(l), b.describeRef(l.ends[0]))
		}
		from, ferr := b.resolveEnd(l, fromEnd, false, 0)
		to, terr := b.resolveEnd(l, toEnd, true, 0)
		if ferr != nil || terr != nil {
			for _, e := range []*endError{ferr, terr} {
				if e != nil {
					b.errorf(e.class, e.ids, l.srcLn, e.hint, "%s", e.msg)
				}
			}
			continue
		}
		label, extra := "", []string{}
		for _, t := range l.labels {
			t = cleanText(t)
			if t == "" {
				continue
			}
			if label == "" {
				label = t
			} else {
				extra = append(extra, t)
			}
		}
		if len(extra) > 0 {
			b.warnf("multiple_line_labels", []string{l.id}, l.srcLn,
				"keep one label on the line; dtree routes by the first",
				"line %s %s has %d labels; %q is used, %s kept as extra labels",
				l.id, b.between(l), len(extra)+1, label, quoteList(extra))
		}
		key := from + "\x00" + to + "\x00" + normLabel(label)
		if first, dup := seen[key]; dup {
			b.warnf("duplicate_line", []string{l.id, b.doc.Edges[first].ID}, l.srcLn,
				"delete one of the two lines in Lucid",
				"line %s repeats line %s (same ends and label); the copy is ignored", l.id, b.doc.Edges[first].ID)
			continue
		}
		seen[key] = len(b.doc.Edges)
		b.doc.Edges = append(b.doc.Edges, types.Edge{
			ID: l.id, Page: b.doc.Nodes[b.nodes[from]].Page, From: from, To: to,
			Label: label, ExtraLabels: extra, Line: l.srcLn,
		})
	}
}

// endError is why one end of a line names no node.
type endError struct {
	class, msg, hint string
	ids              []string
}

// maxLineHops bounds line-to-line resolution, so lines attached to each other
// in a ring cannot loop.
const maxLineHops = 64

// resolveEnd finds the node at end i of line l. entering says whether the
// flow enters the item at that end (the line's target) or leaves it (its
// source). An end on another line resolves through that line (rule 11).
func (b *builder) resolveEnd(l line, i int, entering bool, hops int) (string, *endError) {
	ref := strings.TrimSpace(l.ends[i])
	which := "source"
	if entering {
		which = "destination"
	}
	dangling := func(what string) *endError {
		return &endError{class: "dangling_line", ids: []string{l.id}, msg: fmt.Sprintf("line %s %s: its %s end %s", l.id, b.between(l), which, what),
			hint: "drag the line's end onto a shape until the shape's outline highlights, then export again"}
	}
	if ref == "" {
		return "", dangling("is attached to nothing")
	}
	if _, ok := b.nodes[ref]; ok {
		n := b.doc.Nodes[b.nodes[ref]]
		if n.Page != l.page {
			return "", dangling(fmt.Sprintf("is on %s on another page", ref))
		}
		return ref, nil
	}
	idx, ok := b.items[ref]
	if !ok {
		return "", dangling(fmt.Sprintf("names %q, which is not in the chart", ref))
	}
	if idx >= 0 {
		s := b.shapes[idx]
		if s.container {
			return "", &endError{class: "line_to_container", ids: []string{l.id, ref},
				msg:  fmt.Sprintf("line %s ends on %s %s at its %s end, not on a step inside it", l.id, strings.ToLower(s.node.Shape), ref, which),
				hint: "attach the line to a shape inside the container, not to the container's border"}
		}
		return "", dangling(fmt.Sprintf("is on %s, which is not a step", ref))
	}
	other := b.lines[-1-idx]
	if hops >= maxLineHops || other.id == l.id {
		return "", dangling(fmt.Sprintf("is on line %s, and the lines attached to each other never reach a shape", ref))
	}
	from, to, ok := orientation(other)
	if !ok {
		return "", dangling(fmt.Sprintf("is on line %s, which points both ways", ref))
	}
	next := from
	if entering {
		next = to
	}
	id, err := b.resolveEnd(other, next, entering, hops+1)
	if err != nil {
		err.ids = append([]string{l.id}, err.ids...)
		err.msg = fmt.Sprintf("line %s %s: its %s end is on line %s, which cannot be followed: %s", l.id, b.between(l), which, ref, err.msg)
	}
	return id, err
}

// checkBranches applies rule 14 to every node with two or more outgoing
// edges: each must be labelled, and the labels must differ.
func (b *builder) checkBranches() {
	out := make([][]int, len(b.doc.Nodes))
	for i, e := range b.doc.Edges {
		n := b.nodes[e.From]
		out[n] = append(out[n], i)
	}
	for n, edges := range out {
		if len(edges) < 2 {
			continue
		}
		node := b.doc.Nodes[n]
		labels := map[string]int{}
		for _, i := range edges {
			e := b.doc.Edges[i]
			if e.Label == "" {
				b.errorf("unlabeled_branch", []string{node.ID, e.ID}, e.Line,
					"double-click the line and type the answer that leads this way (for example Yes or No)",
					"%s has %d outgoing lines, so it is a decision, but line %s to %s has no label",
					node.Describe(), len(edges), e.ID, b.describeRef(e.To))
				continue
			}
			norm := normLabel(e.Label)
			if first, dup := labels[norm]; dup {
				fe := b.doc.Edges[first]
				b.errorf("duplicate_branch_label", []string{node.ID, fe.ID, e.ID}, e.Line,
					"give each outgoing line of a decision a different label",
					"%s has two branches labelled %q (lines %s and %s), so an answer cannot pick one",
					node.Describe(), e.Label, fe.ID, e.ID)
				continue
			}
			labels[norm] = i
		}
	}
}

// findRoots sets each page's root: its only node with no incoming edge,
// self-loops ignored (rule 15).
func (b *builder) findRoots() {
	hasIn := make([]bool, len(b.doc.Nodes))
	for _, e := range b.doc.Edges {
		if e.From != e.To {
			hasIn[b.nodes[e.To]] = true
		}
	}
	roots := make(map[string][]string, len(b.doc.Pages))
	counts := make(map[string]int, len(b.doc.Pages))
	for i, n := range b.doc.Nodes {
		counts[n.Page]++
		if !hasIn[i] {
			roots[n.Page] = append(roots[n.Page], n.ID)
		}
	}
	for i := range b.doc.Pages {
		p := &b.doc.Pages[i]
		if counts[p.ID] == 0 {
			continue
		}
		switch r := roots[p.ID]; len(r) {
		case 1:
			p.Root = r[0]
		case 0:
			b.errorf("no_root", []string{p.ID}, 0,
				"add a Terminator with the text Start and a line from it to the first step, or pass --start",
				"%s has no start: every node has an incoming line", b.describePage(*p))
		default:
			b.errorf("ambiguous_root", slices.Clone(r), b.doc.Nodes[b.nodes[r[0]]].Line,
				"connect or delete the extra nodes so that only the start has no incoming line, or pass --start",
				"%s has %d nodes with no incoming line, so its start is ambiguous: %s",
				b.describePage(*p), len(r), b.describeIDs(r, 5))
		}
	}
}

func (b *builder) describePage(p types.Page) string {
	if p.Title != "" {
		return fmt.Sprintf("page %q", p.Title)
	}
	return fmt.Sprintf("page %s", p.ID)
}

// describeRef names an item for a message: a node by its text, anything else
// by its id.
func (b *builder) describeRef(id string) string {
	if i, ok := b.nodes[id]; ok {
		return b.doc.Nodes[i].Describe()
	}
	if i, ok := b.items[id]; ok && i >= 0 {
		return b.shapes[i].node.Describe()
	}
	if id == "" {
		return "nothing"
	}
	return id
}

func (b *builder) describeIDs(ids []string, max int) string {
	var parts []string
	for i, id := range ids {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(ids)-max))
			break
		}
		parts = append(parts, b.describeRef(id))
	}
	return strings.Join(parts, ", ")
}

// between describes a line by the items at its two ends, in drawing order.
func (b *builder) between(l line) string {
	return fmt.Sprintf("(between %s and %s)", b.describeRef(l.ends[0]), b.describeRef(l.ends[1]))
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// normLabel folds a label for comparison: trimmed, whitespace collapsed,
// case-folded (rules 13 and 14).
func normLabel(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// cleanText is rule 5's text: CRLF to LF, trimmed at both ends, otherwise
// unchanged.
func cleanText(s string) string {
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return strings.TrimSpace(s)
}
