package export

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dtree-dev/dtree/internal/export/layout"
	"github.com/dtree-dev/dtree/types"
)

// PictureOptions say what a picture shows.
type PictureOptions struct {
	// Page is the id of the one page to draw; "" draws every page.
	Page string
	// Trace marks the path a run took; nil draws the chart alone.
	Trace *Trace
	// Mask, when not nil, masks secrets in every text the picture shows,
	// before it is wrapped and escaped (a run's graph.svg).
	Mask func(string) string
	// Errors are the chart's errors: the nodes and lines they name are
	// drawn red with the class, so a broken chart can be seen.
	Errors []types.Diagnostic
}

// stepShapes are the shapes a step kind may have of its own
// (types.StepInfo.Shape), in each picture format: Mermaid's brackets,
// DOT's attributes, and SVG's outline of box b centred at c.
var stepShapes = map[string]struct {
	mermaid [2]string
	dot     string
	svg     func(w *bufio.Writer, b svgBox, c layout.Point, style string)
}{
	types.ShapeHexagon: {mermaid: [2]string{`{{"`, `"}}`}, dot: `shape=hexagon, style=filled`,
		svg: func(w *bufio.Writer, b svgBox, c layout.Point, style string) {
			x, y := c.X-b.w/2, c.Y-b.h/2
			fmt.Fprintf(w, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" %s/>\n",
				x+10, y, x+b.w-10, y, x+b.w, c.Y, x+b.w-10, y+b.h, x+10, y+b.h, x, c.Y, style)
		}},
	// A Manual operation: wide at the top, narrow at the bottom.
	types.ShapeTrapezoid: {mermaid: [2]string{`[\"`, `"/]`}, dot: `shape=invtrapezium, style=filled`,
		svg: func(w *bufio.Writer, b svgBox, c layout.Point, style string) {
			x, y := c.X-b.w/2, c.Y-b.h/2
			fmt.Fprintf(w, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" %s/>\n",
				x, y, x+b.w, y, x+b.w-12, y+b.h, x+12, y+b.h, style)
		}},
}

// picture is a chart laid out for drawing, the same for every format:
// nodes numbered across the document, wrapped text, and the run's marks.
type picture struct {
	title   string
	caption string // what the run did, when there is one
	pages   []picPage
	run     bool
	errors  bool // some node or edge is marked with an error
}

type picPage struct {
	id, title string
	nodes     []picNode
	edges     []picEdge
}

// States of a node in a run.
const (
	stateVisited     = "visited"
	stateFailed      = "failed"
	stateInterrupted = "interrupted"
	stateLimit       = "limit"
	stateError       = "error" // a chart error names the node
)

type picNode struct {
	n       int // number across the document: n0, n1, …
	id      string
	kind    string
	command bool     // a command step: its command is its first line
	shape   string   // its step kind's shape (stepShapes), "" for its kind's
	text    string   // the text, up to maxTooltip characters
	lines   []string // the text wrapped for a box
	note    string   // visits, retries, failure: "" without a run
	state   string
	stopped string // how the run stopped here: failed, interrupted, limit_reached, budget_reached, waiting_for_approval
	visits  int
	retries int
	errs    string // the classes of the errors that name it
}

// The lines a fork and a join get under their text.
const (
	forkMark = "‖ parallel"
	joinMark = "‖ join: "
)

type picEdge struct {
	id       string
	from, to int // indexes in the page's nodes
	label    string
	parallel bool   // a fork's line: it runs at once with the fork's others
	taken    int    // times the run went along it
	err      string // the classes of the errors that name it
}

// Text wrapping for boxes: lines of at most wrapWidth characters, at most
// wrapLines of them. A tooltip (SVG's <title>, DOT's tooltip) holds a
// node's text up to maxTooltip characters; titles and edge labels, drawn
// on one line, are cut at maxLabel. So a picture's size, and the time it
// takes, grows with the chart's nodes and lines, never with a text's
// length past these.
const (
	wrapWidth  = 28
	wrapLines  = 5
	maxTooltip = 2000
	maxLabel   = 200
)

// newPicture gathers what a picture of doc shows. Each node is drawn as
// its step kind says (types.Node.Step, which chart.Check resolves): a
// document only imported has its shapes alone. It stops with ctx's error
// when ctx ends. Texts are masked whole, before they are cut, so a cut
// cannot leave part of a secret unmasked.
func newPicture(ctx context.Context, doc *types.Document, o PictureOptions) (*picture, error) {
	mask := o.Mask
	if mask == nil {
		mask = func(s string) string { return s }
	}
	p := &picture{title: types.Clip(mask(doc.Title), maxLabel), run: o.Trace != nil}
	byPage := map[string]int{}
	for _, pg := range doc.Pages {
		if o.Page == "" || o.Page == pg.ID {
			byPage[pg.ID] = len(p.pages)
			p.pages = append(p.pages, picPage{id: mask(pg.ID), title: types.Clip(mask(pg.Title), maxLabel)})
		}
	}
	if len(p.pages) == 0 {
		return nil, fmt.Errorf("no page %q in the chart", o.Page)
	}
	where := make(map[string][2]int, len(doc.Nodes)) // id -> page, index
	var forks map[string]bool                        // the ids of the forks
	count := 0
	for i := range doc.Nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nd := &doc.Nodes[i]
		k, ok := byPage[nd.Page]
		if !ok {
			continue
		}
		pg := &p.pages[k]
		where[nd.ID] = [2]int{k, len(pg.nodes)}
		text := mask(nd.Text)
		pn := picNode{n: count, id: mask(nd.ID), kind: nd.Kind, text: types.Clip(text, maxTooltip), lines: wrap(text, wrapWidth, wrapLines)}
		if nd.Kind != types.KindDecision { // a diamond stays one: its branches route
			pn.shape = nd.Step.Info().Shape
		}
		if nd.Step == types.StepCommand {
			cmd := "$ " + mask(strings.TrimSpace(types.NodeCommand(nd)))
			pn.command, pn.text = true, types.Clip(cmd+"\n"+text, maxTooltip)
			pn.lines = append([]string{types.Excerpt(cmd, wrapWidth)}, wrap(text, wrapWidth, wrapLines-1)...)
		}
		// A fork and its join say so under their text; the fork's lines
		// are drawn bold (readme/parallel.md#pictures).
		if types.IsFork(nd) {
			pn.lines = append(pn.lines, forkMark)
			if forks == nil {
				forks = map[string]bool{}
			}
			forks[nd.ID] = true
		}
		if nd.Join != "" {
			pn.lines = append(pn.lines, joinMark+nd.Join)
		}
		pg.nodes = append(pg.nodes, pn)
		count++
	}
	for _, e := range doc.Edges {
		f, okf := where[e.From]
		t, okt := where[e.To]
		if okf && okt && f[0] == t[0] {
			pg := &p.pages[f[0]]
			pg.edges = append(pg.edges, picEdge{id: e.ID, from: f[1], to: t[1], label: mask(e.Label),
				parallel: forks[e.From]})
		}
	}
	if o.Trace != nil {
		p.mark(o.Trace, where)
		p.caption = mask(p.caption)
	}
	if len(o.Errors) > 0 {
		p.markErrors(o.Errors, where)
	}
	return p, nil
}

// markErrors draws the chart's errors: each node and line an error names
// is red, with the error's class under its text or on its label, and the
// caption counts them.
func (p *picture) markErrors(diags []types.Diagnostic, where map[string][2]int) {
	classes := types.ClassesByID(diags)
	edges := map[string][2]int{} // edge id -> page, index
	for k, pg := range p.pages {
		for i, e := range pg.edges {
			if e.id != "" {
				edges[e.id] = [2]int{k, i}
			}
		}
	}
	marked := func(id string) bool {
		_, node := where[id]
		_, edge := edges[id]
		return node || edge
	}
	count := 0
	for _, d := range diags {
		if slices.ContainsFunc(d.IDs, marked) {
			count++
		}
	}
	if count == 0 {
		return
	}
	p.errors = true
	for id, list := range classes {
		if w, ok := where[id]; ok {
			nd := &p.pages[w[0]].nodes[w[1]]
			if nd.state != stateFailed && nd.state != stateInterrupted && nd.state != stateLimit {
				nd.state = stateError
			}
			nd.errs = list
			nd.note = strings.TrimPrefix(nd.note+" · ✗ "+list, " · ")
		} else if w, ok := edges[id]; ok {
			p.pages[w[0]].edges[w[1]].err = list
		}
	}
	what := fmt.Sprintf("%s marked", types.Plural(count, "error"))
	if p.caption == "" {
		p.caption = what
	} else {
		p.caption += "; " + what
	}
}

// mark sets the run's visits, retries, stop and steps on the picture.
func (p *picture) mark(t *Trace, where map[string][2]int) {
	for id, v := range t.Visits {
		if w, ok := where[id]; ok {
			nd := &p.pages[w[0]].nodes[w[1]]
			nd.visits, nd.state = v, stateVisited
		}
	}
	for id, r := range t.Retries {
		if w, ok := where[id]; ok {
			p.pages[w[0]].nodes[w[1]].retries = r
		}
	}
	for id := range t.Interrupted {
		if w, ok := where[id]; ok {
			p.pages[w[0]].nodes[w[1]].stop("interrupted")
		}
	}
	if w, ok := where[t.Stopped]; ok {
		p.pages[w[0]].nodes[w[1]].stop(t.StoppedHow)
	}
	// The edges of every page, by page and ends, for takenEdges.
	var keys [][3]int
	var labels []string
	var refs [][2]int // page, index
	for k := range p.pages {
		for i, e := range p.pages[k].edges {
			keys = append(keys, [3]int{k, e.from, e.to})
			labels = append(labels, e.label)
			refs = append(refs, [2]int{k, i})
		}
	}
	taken := takenEdges(keys, labels, t.Steps, func(s Step) ([3]int, bool) {
		f, okf := where[s.From]
		to, okt := where[s.To]
		return [3]int{f[0], f[1], to[1]}, okf && okt && f[0] == to[0]
	})
	for j, n := range taken {
		p.pages[refs[j][0]].edges[refs[j][1]].taken = n
	}
	for k := range p.pages {
		for i := range p.pages[k].nodes {
			nd := &p.pages[k].nodes[i]
			nd.note = note(nd)
		}
	}
	p.caption = fmt.Sprintf("run %s: %s", t.RunID, strings.ReplaceAll(t.Status, "_", " "))
	if w, ok := where[t.Stopped]; ok {
		p.caption += fmt.Sprintf(" at %s", p.pages[w[0]].nodes[w[1]].id)
	}
}

// takenEdges counts how often a run took each edge, keys[i] and
// labels[i] being edge i's ends and label: a step, whose ends stepKey
// gives (false: no edge can be it), went along the last of the edges
// between them with its label, else the first of them. The edges are
// indexed by their ends once, so a run of n steps on n edges is marked in
// linear time. Every drawing of a run (the pictures, draw.io's) counts
// the edges with it.
func takenEdges[K comparable](keys []K, labels []string, steps []Step, stepKey func(Step) (K, bool)) []int {
	taken := make([]int, len(keys))
	if len(steps) == 0 {
		return taken
	}
	between := make(map[K][]int, len(keys))
	for i, k := range keys {
		between[k] = append(between[k], i)
	}
	for _, s := range steps {
		k, ok := stepKey(s)
		if !ok {
			continue
		}
		best := -1
		for _, i := range between[k] {
			if best < 0 || labels[i] == s.Label {
				best = i
			}
		}
		if best >= 0 {
			taken[best]++
		}
	}
	return taken
}

// stop marks the node where the run stopped, how it did (a Trace's
// StoppedHow), or a visit an interrupt cut short.
func (nd *picNode) stop(how string) {
	nd.stopped = how
	nd.state = map[string]string{"failed": stateFailed, "interrupted": stateInterrupted,
		"limit_reached": stateLimit, "budget_reached": stateLimit, "waiting_for_approval": stateLimit}[how]
}

// note says what the run did at a node, for a line under its text. A
// node whose last visit did not finish (failed, interrupted, stopped by
// the budget) gets no ✓, and says how many visits it had only when it
// had more than that one; a limit kept the run out of its node, whose
// visits all finished.
func note(nd *picNode) string {
	var parts []string
	stopped := nd.state == stateFailed || nd.state == stateInterrupted || nd.stopped == "budget_reached" || nd.stopped == "waiting_for_approval"
	switch {
	case stopped && nd.visits > 1:
		parts = append(parts, types.Plural(nd.visits, "visit"))
	case stopped:
	case nd.visits == 1 && nd.kind == types.KindTerminator:
		parts = append(parts, "✓ reached")
	case nd.visits > 0:
		parts = append(parts, "✓ "+types.Plural(nd.visits, "visit"))
	}
	if nd.retries > 0 {
		parts = append(parts, types.Plural(nd.retries, "retry"))
	}
	switch nd.state {
	case stateFailed:
		parts = append(parts, "✗ failed")
	case stateInterrupted:
		parts = append(parts, "✗ interrupted")
	case stateLimit:
		mark := "✗ "
		if nd.stopped == "waiting_for_approval" { // no failure: it waits for its answer
			mark = "… "
		}
		parts = append(parts, mark+strings.ReplaceAll(nd.stopped, "_", " "))
	}
	return strings.Join(parts, " · ")
}

// edgeLabel is the label drawn on an edge: its own, and how often the run
// took it when more than once.
func (e picEdge) edgeLabel() string {
	label := types.Clip(e.label, maxLabel)
	if e.taken > 1 {
		if label == "" {
			label = fmt.Sprintf("×%d", e.taken)
		} else {
			label = fmt.Sprintf("%s ×%d", label, e.taken)
		}
	}
	if e.err != "" {
		label = strings.TrimPrefix(label+" ✗ "+e.err, " ")
	}
	return label
}

// wrap breaks text into lines of at most width characters at spaces
// (a longer word is cut), keeping the text's own line breaks, and keeps
// at most max lines, the last ending in … when text was left out.
//
// It reads text once, a rune at a time, and stops as soon as it has more
// lines than it keeps, so a node text of megabytes, even one unbroken
// token, costs what its first few boxes' worth does: cutting a long word
// by re-slicing its rest was quadratic and hung a run's last picture.
func wrap(text string, width, max int) []string {
	w := wrapper{width: width, max: max}
	invalid := false // the last byte was invalid UTF-8: one U+FFFD for a run of them
	for i, r := range text {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(text[i:]); size == 1 {
				if invalid {
					continue
				}
				invalid = true
				w.rune('\uFFFD')
				if w.full() {
					break
				}
				continue
			}
		}
		invalid = false
		switch {
		case r == '\n':
			w.endWord()
			w.emit()
		case r < 0x20 || r == 0x7f || unicode.IsSpace(r):
			w.endWord()
		default:
			w.rune(r)
		}
		if w.full() {
			break
		}
	}
	if !w.full() {
		w.endWord()
		w.emit()
	}
	out, cut := w.out, w.full()
	if len(out) > max {
		out = out[:max]
	}
	for len(out) > 1 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if cut {
		last := []rune(out[len(out)-1])
		if len(last) >= width {
			last = last[:width-1]
		}
		out[len(out)-1] = string(last) + "…"
	}
	return out
}

// wrapper is wrap's state: the lines so far, the line being filled and
// the word being read, with their lengths in runes.
type wrapper struct {
	width, max int
	out        []string
	line       []rune
	word       []rune
}

// full reports whether more lines were made than are kept.
func (w *wrapper) full() bool { return len(w.out) > w.max }

// rune adds r to the word; a word as long as a line becomes one.
func (w *wrapper) rune(r rune) {
	if len(w.word) == w.width {
		if len(w.line) > 0 {
			w.emit()
		}
		w.out = append(w.out, string(w.word))
		w.word = w.word[:0]
	}
	w.word = append(w.word, r)
}

// endWord puts the word read on the line, or on a new one when it does
// not fit.
func (w *wrapper) endWord() {
	if len(w.word) == 0 {
		return
	}
	if len(w.line) > 0 && len(w.line)+1+len(w.word) > w.width {
		w.emit()
	}
	if len(w.line) > 0 {
		w.line = append(w.line, ' ')
	}
	w.line = append(w.line, w.word...)
	w.word = w.word[:0]
}

// emit ends the line, empty or not.
func (w *wrapper) emit() {
	w.out = append(w.out, string(w.line))
	w.line = w.line[:0]
}
