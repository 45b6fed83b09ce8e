package document

import (
	"cmp"
	"fmt"
	"github.com/dtree-dev/dtree/internal/vars"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/types"
)

// shapeFlags say what a source shape is besides a node candidate.
type shapeFlags struct {
	// container is set for swim lanes, frames, containers and groups: items
	// that hold other items and are never steps.
	container bool
	// annotation is set for text-only shapes, dropped when no line touches
	// them (rule 9).
	annotation bool
}

// shape is a source item before it is known to be a node: containers,
// groups and untouched annotations are dropped by the builder.
type shape struct {
	node types.Node
	shapeFlags
}

// line is a source line before its direction and ends are resolved.
type line struct {
	id     string
	page   string
	ends   [2]string // endpoint1 (CSV Line Source), endpoint2 (Line Destination)
	heads  [2]bool   // whether each end's style draws an arrowhead
	labels []string  // text areas in order, untrimmed
	srcLn  int
	// Set by build, so that no id is looked up twice: the item at each
	// end (as in builder.items, or noItem) and the index of the line's
	// page in doc.Pages (-1 when no node is on it).
	at     [2]int32
	pageAt int32
}

// noItem is line.at for an end that names no item.
const noItem = math.MinInt32

// pageNumber returns the index in doc.Pages of page id, or -1.
func (b *builder) pageNumber(id string) int32 {
	if p, ok := b.pages[id]; ok {
		return int32(p)
	}
	return -1
}

// samePage reports whether kept shape i is on line l's page. The page
// numbers decide without touching the shape, unless one is on no page
// of doc.Pages.
func (b *builder) samePage(i int, l line) bool {
	if p := b.pageAt[i]; p >= 0 && l.pageAt >= 0 {
		return p == l.pageAt
	}
	return b.shapes[i].Page == l.page
}

// builder turns the items an importer read into a types.Document. Both
// importers feed it, so every graph rule (line direction, line ends,
// labels, duplicate lines, branches, roots: readme/charts.md#lines,
// readme/lint.md#classes) is written once.
//
// Shapes are stored once, in shapes, and compacted in place into doc.Nodes
// when the containers and notes among them are dropped: a 100,000-node chart
// is not copied node by node.
type builder struct {
	doc    *types.Document
	pages  map[string]int // page id -> index in doc.Pages
	shapes []types.Node
	flags  []shapeFlags // parallel to shapes
	lines  []line
	// items maps every id to what it names: index into shapes (>= 0) or
	// into lines (encoded as -1-i).
	items *graph.IDs
	// keep marks the shapes that are nodes; nodeAt gives their index in
	// doc.Nodes once compacted.
	keep   []bool
	nodeAt []int32
	// libraries maps a CSV shape name to the Shape Library it came from,
	// to name what a chart that is not a flowchart holds.
	libraries map[string]string
	// pageAt gives the index in doc.Pages of each kept shape's page, and
	// edgeAt the items at the ends of each edge of doc.Edges: build
	// compares and follows these rather than page strings and ids.
	pageAt []int32
	edgeAt [][2]int32
	// starts, when not nil, picks each page's start the YAML way
	// (readme/yaml-charts.md): the page's one node marked kind: start,
	// else the only node with no incoming edge, else its first node. It
	// lists the marked nodes per page.
	starts map[string][]string
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
		items: graph.NewIDs(0),
	}
}

// reserve sizes the builder's tables for about n rows.
func (b *builder) reserve(n int) {
	if n <= 0 {
		return
	}
	b.items = graph.NewIDs(n)
	b.shapes = make([]types.Node, 0, n/2)
	b.flags = make([]shapeFlags, 0, n/2)
	b.lines = make([]line, 0, n/2)
}

func (b *builder) addPage(id, title string) {
	if _, ok := b.pages[id]; ok {
		return
	}
	b.pages[id] = len(b.doc.Pages)
	b.doc.Pages = append(b.doc.Pages, types.Page{ID: id, Title: title})
}

func (b *builder) addShape(s shape) {
	b.items.Set(s.node.ID, len(b.shapes))
	b.shapes = append(b.shapes, s.node)
	b.flags = append(b.flags, s.shapeFlags)
}

// addLine adds a line whose ends have the given styles (endpoint1 first).
func (b *builder) addLine(l line, styles [2]string) {
	l.heads = [2]bool{isArrowhead(styles[0]), isArrowhead(styles[1])}
	b.items.Set(l.id, -1-len(b.lines))
	b.lines = append(b.lines, l)
}

// addEdge adds an edge written as from and to ids (YAML's next: and
// branches:). Unlike a Lucid line its id names nothing an end can point
// at, so it is not entered in items.
func (b *builder) addEdge(l line) {
	l.heads = [2]bool{false, true}
	b.lines = append(b.lines, l)
}

// has reports whether an item with this id was already added.
func (b *builder) has(id string) bool {
	_, ok := b.items.Get(id)
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
	b.lucidVars()
	b.keep = make([]bool, len(b.shapes))
	touched := make([]bool, len(b.shapes))
	for k := range b.lines {
		l := &b.lines[k]
		for e, end := range l.ends {
			l.at[e] = noItem
			if i, ok := b.items.Get(strings.TrimSpace(end)); ok {
				l.at[e] = int32(i)
				if i >= 0 {
					touched[i] = true
				}
			}
		}
	}
	b.pageAt = make([]int32, len(b.shapes))
	kept, lastPage := 0, "\x00"
	typed := written(b.doc.Format) // a YAML node is written on purpose
	pageName, page, havePage := "", int32(0), false
	for i, f := range b.flags {
		n := &b.shapes[i]
		switch {
		case f.container:
			continue
		case f.annotation && !touched[i]:
			b.warnf("ignored_annotation", []string{n.ID}, n.Line,
				"text that no line touches is a note, not a step; connect it with a line if it should run",
				"%s is text that no line touches, so it is read as a note and not run", n.Describe())
			continue
		case !touched[i] && blank(n) && !typed:
			b.warnf("ignored_empty_shape", []string{n.ID}, n.Line,
				"delete the shape in Lucid if it is a leftover; if it is a step, type its task in it and connect it with lines",
				"the %s %s has no text and no line touches it, so it is read as a leftover and not run", shapeName(n), n.ID)
			continue
		}
		if n.Page != lastPage {
			if _, ok := b.pages[n.Page]; !ok {
				b.addPage(n.Page, "")
			}
			lastPage = n.Page
		}
		if !havePage || n.Page != pageName {
			pageName, page, havePage = n.Page, b.pageNumber(n.Page), true
		}
		b.pageAt[i] = page
		b.keep[i] = true
		kept++
	}
	if kept > 0 && !typed && !b.hasFlowchartShape() {
		b.notAFlowchart()
		return b.doc
	}
	if kept == 0 {
		if len(b.doc.Errors) == 0 {
			b.errorf("empty_chart", nil, 0,
				"draw at least one shape (a Process with the task as its text), then export again",
				"the chart has no shapes to run")
		}
		return b.doc
	}
	b.buildEdges()
	b.placeDiagnostics()
	b.compact(kept)
	b.checkEdges()
	b.findRoots()
	b.placeDiagnostics()
	return b.doc
}

// placeDiagnostics sets each finding's page from the first id it names. It
// runs before compact, while every shape is at hand, and again after it for
// the findings about nodes and pages.
func (b *builder) placeDiagnostics() {
	for _, list := range [][]types.Diagnostic{b.doc.Errors, b.doc.Warnings} {
		for i := range list {
			d := &list[i]
			if d.Page != "" || d.ID == "" {
				continue
			}
			idx, ok := b.items.Get(d.ID)
			switch {
			case ok && idx >= 0 && b.nodeAt == nil:
				d.Page = b.shapes[idx].Page
			case ok && idx >= 0 && b.nodeAt[idx] >= 0:
				d.Page = b.doc.Nodes[b.nodeAt[idx]].Page
			case ok && idx < 0:
				d.Page = b.lines[-1-idx].page
			case !ok:
				if _, isPage := b.pages[d.ID]; isPage {
					d.Page = d.ID
				}
			}
		}
	}
}

// compact moves the kept shapes to the front of b.shapes, which becomes
// doc.Nodes, and records where each went.
func (b *builder) compact(kept int) {
	b.nodeAt = make([]int32, len(b.shapes))
	k := 0
	for i := range b.shapes {
		b.nodeAt[i] = -1
		if b.keep[i] {
			if k != i {
				b.shapes[k] = b.shapes[i]
			}
			b.nodeAt[i] = int32(k)
			k++
		}
	}
	clear(b.shapes[k:])
	b.doc.Nodes = b.shapes[:kept:kept]
	b.shapes = nil
}

// node returns the index in doc.Nodes of node id, after compact.
func (b *builder) node(id string) int {
	i, _ := b.items.Get(id)
	return int(b.nodeAt[i])
}

// orientation gives a line's flow as (from end, to end) indexes, and ok false
// when both ends carry arrowheads (rule 10).
func orientation(l line) (from, to int, ok bool) {
	h1, h2 := l.heads[0], l.heads[1]
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
	for k := range b.lines {
		l := &b.lines[k]
		if k > 0 && l.page == b.lines[k-1].page {
			l.pageAt = b.lines[k-1].pageAt
		} else {
			l.pageAt = b.pageNumber(l.page)
		}
	}
	b.doc.Edges = make([]types.Edge, 0, len(b.lines))
	b.edgeAt = make([][2]int32, 0, len(b.lines))
	for _, l := range b.lines {
		fromEnd, toEnd, ok := orientation(l)
		if !ok {
			// The steps at its ends, when they are on steps: a picture of
			// the chart marks them (export.PictureOptions).
			ids := []string{l.id}
			for i := range l.ends {
				if id, _, err := b.resolveEnd(l, i, i == 1, 0); err == nil {
					ids = append(ids, id)
				}
			}
			b.errorf("bidirectional_line", ids, l.srcLn,
				"remove one of the arrowheads (select the line, then Line options > arrows) so the line points one way",
				"line %s %s has arrowheads at both ends, so its direction is unknown", l.id, b.between(l))
			continue
		}
		if !l.heads[0] && !l.heads[1] {
			b.warnf("line_without_arrowheads", []string{l.id}, l.srcLn,
				"add an arrowhead at the end the flow goes to",
				"line %s %s has no arrowhead; read as going from its first end (%s) to its second",
				l.id, b.between(l), b.describeRef(l.ends[0]))
		}
		from, fi, ferr := b.resolveEnd(l, fromEnd, false, 0)
		to, ti, terr := b.resolveEnd(l, toEnd, true, 0)
		if ferr != nil || terr != nil {
			for _, e := range []*endError{ferr, terr} {
				if e == nil {
					continue
				}
				// The step at the line's other end, when it is on one:
				// a picture of the chart marks it (export.PictureOptions).
				ids := e.ids
				if good := cmp.Or(from, to); good != "" && ferr != terr && (ferr == nil || terr == nil) {
					ids = append(slices.Clip(ids), good)
				}
				b.errorf(e.class, ids, l.srcLn, e.hint, "%s", e.msg)
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
				l.id, b.between(l), len(extra)+1, types.Excerpt(label, maxQuoted), quoteList(extra))
		}
		b.doc.Edges = append(b.doc.Edges, types.Edge{
			ID: l.id, Page: l.page, From: from, To: to,
			Label: label, ExtraLabels: extra, Line: l.srcLn,
		})
		b.edgeAt = append(b.edgeAt, [2]int32{fi, ti})
	}
}

// endError is why one end of a line names no node.
type endError struct {
	class, msg, hint string
	ids              []string
	// via are the lines followed to reach the end at fault, the line
	// whose message msg is last. resolveEnd says them once, capped, in
	// the message of the line it started from: each line of a chain
	// quoting the whole message of the next made lint print 658 MB for a
	// 3.9 MB CSV of lines chained to lines.
	via []string
}

// maxListed bounds the ids, labels and lines one message lists.
const maxListed = 5

// maxQuoted bounds the characters of a label or id one message quotes.
const maxQuoted = 60

// maxLineHops bounds line-to-line resolution, so lines attached to each other
// in a ring cannot loop.
const maxLineHops = 64

// resolveEnd finds the node at end i of line l, and its index in shapes.
// entering says whether the flow enters the item at that end (the line's
// target) or leaves it (its source). An end on another line resolves
// through that line (rule 11).
func (b *builder) resolveEnd(l line, i int, entering bool, hops int) (string, int32, *endError) {
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
		return "", 0, dangling("is attached to nothing")
	}
	idx := int(l.at[i])
	if l.at[i] == noItem {
		return "", 0, dangling(fmt.Sprintf("names %q, which is not in the chart", types.Excerpt(ref, maxQuoted)))
	}
	if idx >= 0 {
		switch {
		case b.keep[idx] && !b.samePage(idx, l):
			return "", 0, dangling(fmt.Sprintf("is on %s on another page", ref))
		case b.keep[idx]:
			return ref, int32(idx), nil
		case b.flags[idx].container:
			s := &b.shapes[idx]
			return "", 0, &endError{class: "line_to_container", ids: []string{l.id, ref},
				msg: fmt.Sprintf("line %s %s: its %s end is on %s, not on a step inside it",
					l.id, b.between(l), which, describeHolder(s)),
				hint: "drag the line's end onto a step, not onto a container, swim lane or group around it"}
		}
		return "", 0, dangling(fmt.Sprintf("is on %s, which is not a step", ref))
	}
	other := b.lines[-1-idx]
	// Lines never cross pages (rule 15), not even through another line.
	if other.page != l.page {
		return "", 0, dangling(fmt.Sprintf("is on line %s on another page", ref))
	}
	if hops >= maxLineHops || other.id == l.id {
		return "", 0, dangling(fmt.Sprintf("is on line %s, and the lines attached to each other never reach a shape", ref))
	}
	from, to, ok := orientation(other)
	if !ok {
		return "", 0, dangling(fmt.Sprintf("is on line %s, which points both ways", ref))
	}
	next := from
	if entering {
		next = to
	}
	id, at, err := b.resolveEnd(other, next, entering, hops+1)
	if err != nil {
		err.via = append(err.via, ref) // innermost first; reversed below
		if hops == 0 {
			slices.Reverse(err.via)
			// ids: this line, the lines followed (capped), and those the
			// end at fault names.
			ids := append([]string{l.id}, err.via[:min(len(err.via), maxListed)]...)
			err.ids = append(ids, err.ids[1:]...)
			on := ""
			switch k := len(err.via); { // msg names the last; list those between ref and it
			case k == 2:
				on = "it leads on to "
			case k > 2:
				on = fmt.Sprintf("it leads on through %s to ", listIDs("line", err.via[1:k-1], maxListed))
			}
			err.msg = fmt.Sprintf("line %s %s: its %s end is on line %s, which cannot be followed: %s%s",
				l.id, b.between(l), which, ref, on, err.msg)
		}
	}
	return id, at, err
}

// listIDs names ids for a message: "line 7", "lines 7, 8 and 9", or the
// first max and "and N more".
func listIDs(what string, ids []string, max int) string {
	switch len(ids) {
	case 1:
		return what + " " + ids[0]
	case 0:
		return "no " + what + "s"
	}
	if len(ids) <= max {
		return fmt.Sprintf("%ss %s and %s", what, strings.Join(ids[:len(ids)-1], ", "), ids[len(ids)-1])
	}
	return fmt.Sprintf("%ss %s and %d more", what, strings.Join(ids[:max], ", "), len(ids)-max)
}

// pairwiseMax is the group size up to which edges are compared pairwise;
// past it a map keeps the check linear, so no chart makes it quadratic.
const pairwiseMax = 32

// checkEdges groups the edges by source node and, per node, drops
// duplicate lines (rule 13) and checks the branches of a node with two or
// more outgoing edges: each labelled, no two labels alike (rule 14).
func (b *builder) checkEdges() {
	edges := b.doc.Edges
	from := make([]int32, len(edges))
	start := make([]int32, len(b.doc.Nodes)+1)
	for i := range edges {
		from[i] = b.nodeAt[b.edgeAt[i][0]]
		start[from[i]+1]++
	}
	for i := range b.doc.Nodes {
		start[i+1] += start[i]
	}
	order := make([]int32, len(edges))
	fill := append([]int32(nil), start[:len(b.doc.Nodes)]...)
	for i, f := range from {
		order[fill[f]] = int32(i)
		fill[f]++
	}
	var dups [][2]int32 // duplicate edge, the edge it repeats
	kept := make([]int32, 0, 16)
	for n := range b.doc.Nodes {
		group := order[start[n]:start[n+1]]
		if len(group) < 2 {
			continue
		}
		kept = kept[:0]
		var seen map[[2]string]int32 // (to, folded label) -> edge, for large groups
		if len(group) > pairwiseMax {
			seen = make(map[[2]string]int32, len(group))
		}
		for _, i := range group {
			e := &edges[i]
			first := int32(-1)
			if seen != nil {
				key := [2]string{e.To, foldLabel(e.Label)}
				if j, ok := seen[key]; ok {
					first = j
				} else {
					seen[key] = i
				}
			} else {
				for _, j := range kept {
					if edges[j].To == e.To && sameLabel(edges[j].Label, e.Label) {
						first = j
						break
					}
				}
			}
			if first >= 0 {
				dups = append(dups, [2]int32{i, first})
				continue
			}
			kept = append(kept, i)
		}
		// A terminator never chooses a branch; lint reports one with
		// several lines. A fork's lines all run at once: they need no
		// labels, and lint checks its branches (readme/parallel.md).
		if len(kept) >= 2 && b.doc.Nodes[n].Kind != types.KindTerminator && !types.IsFork(&b.doc.Nodes[n]) {
			b.checkBranches(&b.doc.Nodes[n], kept)
		}
	}
	if len(dups) == 0 {
		return
	}
	slices.SortFunc(dups, func(x, y [2]int32) int { return int(x[0] - y[0]) })
	drop := make([]bool, len(edges))
	for _, d := range dups {
		e, first := edges[d[0]], edges[d[1]]
		drop[d[0]] = true
		b.warnf("duplicate_line", []string{e.ID, first.ID}, e.Line,
			"delete one of the two lines in Lucid",
			"line %s repeats line %s (same ends and label); the copy is ignored", e.ID, first.ID)
	}
	k := 0
	for i := range edges {
		if !drop[i] {
			edges[k], b.edgeAt[k] = edges[i], b.edgeAt[i]
			k++
		}
	}
	clear(edges[k:])
	b.doc.Edges, b.edgeAt = edges[:k], b.edgeAt[:k]
}

// checkBranches applies rule 14 to one node's outgoing edges.
func (b *builder) checkBranches(node *types.Node, group []int32) {
	edges := b.doc.Edges
	var seen map[string]int32 // branchKey -> edge, for large groups
	var keys []string         // branchKey of each edge, for small ones
	if len(group) > pairwiseMax {
		seen = make(map[string]int32, len(group))
	} else {
		keys = make([]string, len(group))
	}
	for k, i := range group {
		e := &edges[i]
		if e.Label == "" {
			b.errorf("unlabeled_branch", []string{node.ID, e.ID}, e.Line,
				"double-click the line and type the answer that leads this way (for example Yes or No); or, if the lines should all run at once, give the node the custom data parallel: true ('dtree docs parallel')",
				"%s has %d outgoing lines, so it is a decision, but line %s to %s has no label",
				node.Describe(), len(group), e.ID, b.describeRef(e.To))
			continue
		}
		// Labels are compared as the answer matcher compares them, so
		// "No" and "no." are the same label: an answer "no" would match
		// both and pick neither.
		key := branchKey(e.Label)
		first := int32(-1)
		if seen != nil {
			if j, ok := seen[key]; ok {
				first = j
			} else {
				seen[key] = i
			}
		} else {
			keys[k] = key
			for m, j := range group[:k] {
				if edges[j].Label != "" && keys[m] == key {
					first = j
					break
				}
			}
		}
		if first >= 0 {
			fe := &edges[first]
			why := "so an answer cannot pick one"
			labels := fmt.Sprintf("labelled %q", types.Excerpt(e.Label, maxQuoted))
			if !sameLabel(fe.Label, e.Label) {
				labels = fmt.Sprintf("labelled %q and %q", types.Excerpt(fe.Label, maxQuoted), types.Excerpt(e.Label, maxQuoted))
				why = "which an answer cannot tell apart: case, spaces, quotes and the punctuation around a label are not compared"
			}
			b.errorf("duplicate_branch_label", []string{node.ID, fe.ID, e.ID}, e.Line,
				"give each outgoing line of a decision a different label",
				"%s has two branches %s (lines %s and %s), %s",
				node.Describe(), labels, fe.ID, e.ID, why)
		}
	}
}

// findRoots sets each page's root: its only node with no incoming edge,
// self-loops ignored (rule 15).
func (b *builder) findRoots() {
	hasIn := make([]bool, len(b.doc.Nodes))
	for i := range b.doc.Edges {
		if at := b.edgeAt[i]; at[0] != at[1] {
			hasIn[b.nodeAt[at[1]]] = true
		}
	}
	roots := make(map[string][]string, len(b.doc.Pages))
	counts := make(map[string]int, len(b.doc.Pages))
	firsts := make(map[string]string, len(b.doc.Pages))
	page, count := "", 0 // nodes come page by page: count runs, not map hits
	for i := range b.doc.Nodes {
		n := &b.doc.Nodes[i]
		if n.Page != page {
			counts[page] += count
			page, count = n.Page, 0
			if _, ok := firsts[page]; !ok {
				firsts[page] = n.ID
			}
		}
		count++
		if !hasIn[i] {
			roots[n.Page] = append(roots[n.Page], n.ID)
		}
	}
	counts[page] += count
	for i := range b.doc.Pages {
		p := &b.doc.Pages[i]
		if counts[p.ID] == 0 {
			continue
		}
		if b.starts != nil {
			switch s := b.starts[p.ID]; {
			case len(s) == 1:
				p.Root = s[0]
				continue
			case len(s) > 1:
				b.errorf("ambiguous_root", slices.Clone(s), b.doc.Nodes[b.node(s[1])].Line,
					"mark one node of the page kind: start, and make the others kind: end",
					"%s has %d nodes marked kind: start: %s", b.describePage(*p), len(s), b.describeIDs(s, 5))
				continue
			case len(roots[p.ID]) == 0:
				p.Root = firsts[p.ID] // every node has a way in: the first listed starts
				continue
			}
		}
		switch r := roots[p.ID]; len(r) {
		case 1:
			p.Root = r[0]
		case 0:
			b.errorf("no_root", []string{p.ID}, 0,
				"add a Terminator with the text Start and a line from it to the first step",
				"%s has no start: every node has an incoming line", b.describePage(*p))
		default:
			b.errorf("ambiguous_root", slices.Clone(r), b.doc.Nodes[b.node(r[0])].Line,
				"connect or delete the extra nodes so that only the start has no incoming line",
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
	if i, ok := b.items.Get(id); ok && i >= 0 {
		if b.nodeAt != nil {
			if k := b.nodeAt[i]; k >= 0 {
				return b.doc.Nodes[k].Describe()
			}
			return id
		}
		return b.shapes[i].Describe()
	}
	if id == "" {
		return "nothing"
	}
	return types.Excerpt(id, maxQuoted)
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

// describeHolder names a container or group for a message.
func describeHolder(n *types.Node) string {
	if strings.EqualFold(n.Shape, "group") || isGroupName(strings.ToLower(n.Shape)) {
		return "group " + n.ID
	}
	return fmt.Sprintf("the %s %s", n.Shape, n.Describe())
}

// quoteList quotes the first maxListed of s, each cut at maxQuoted
// characters, and counts the rest.
func quoteList(s []string) string {
	q := make([]string, 0, min(len(s), maxListed)+1)
	for i, v := range s {
		if i == maxListed {
			q = append(q, fmt.Sprintf("and %d more", len(s)-maxListed))
			break
		}
		q = append(q, types.Quote(types.Excerpt(v, maxQuoted)))
	}
	return strings.Join(q, ", ")
}

// sameLabel compares labels trimmed, with whitespace collapsed and
// case-folded (rules 13 and 14), without allocating.
func sameLabel(a, c string) bool {
	if a == c {
		return true
	}
	for {
		wa, ra := nextWord(a)
		wc, rc := nextWord(c)
		if wa == "" || wc == "" {
			return wa == wc
		}
		if !strings.EqualFold(wa, wc) {
			return false
		}
		a, c = ra, rc
	}
}

// branchKey is equal for two branch labels exactly when the answer
// matcher cannot tell them apart (response.CleanLabel, then case-folded);
// a label that cleans to nothing, which matches only exactly, keeps its
// own words.
func branchKey(label string) string {
	if c := response.CleanLabel(label); c != "" {
		return foldLabel(c)
	}
	return "\x00" + foldLabel(label)
}

// foldLabel is a key that is equal for two labels exactly when sameLabel
// says they are alike: words joined by one space, each rune replaced by the
// smallest rune it case-folds with.
func foldLabel(s string) string {
	var b strings.Builder
	for {
		w, rest := nextWord(s)
		if w == "" {
			return b.String()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		for _, r := range w {
			m := r
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				m = min(m, f)
			}
			b.WriteRune(m)
		}
		s = rest
	}
}

// nextWord splits the first whitespace-separated word off s.
func nextWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	end := strings.IndexFunc(s, unicode.IsSpace)
	if end < 0 {
		return s, ""
	}
	return s[:end], s[end:]
}

// cleanText is rule 5's text: CRLF to LF, trimmed at both ends, otherwise
// unchanged.
func cleanText(s string) string {
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return strings.TrimSpace(s)
}

// lucidVars makes a Lucid chart's document custom data its variables
// (readme/context.md#variables), each value its default; context is a
// setting, not a variable. A YAML chart lists its own (vars:).
func (b *builder) lucidVars() {
	if written(b.doc.Format) || len(b.doc.Metadata) == 0 {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(b.doc.Metadata)) {
		if k == "context" || !vars.ValidName(k) {
			continue
		}
		b.doc.Vars = append(b.doc.Vars, types.Var{Name: k, Default: b.doc.Metadata[k], HasDefault: true})
	}
}
