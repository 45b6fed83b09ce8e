package export

import (
	"fmt"
	"strings"
	"unicode/utf8"

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
}

// picture is a chart laid out for drawing, the same for every format:
// nodes numbered across the document, wrapped text, and the run's marks.
type picture struct {
	title   string
	caption string // what the run did, when there is one
	pages   []picPage
	run     bool
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
)

type picNode struct {
	n       int // number across the document: n0, n1, …
	id      string
	kind    string
	text    string   // the whole text
	lines   []string // the text wrapped for a box
	note    string   // visits, retries, failure: "" without a run
	state   string
	visits  int
	retries int
}

type picEdge struct {
	from, to int // indexes in the page's nodes
	label    string
	taken    int // times the run went along it
}

// Text wrapping for boxes: lines of at most wrapWidth characters, at most
// wrapLines of them.
const (
	wrapWidth = 28
	wrapLines = 5
)

// newPicture gathers what a picture of doc shows.
func newPicture(doc *types.Document, o PictureOptions) (*picture, error) {
	mask := o.Mask
	if mask == nil {
		mask = func(s string) string { return s }
	}
	p := &picture{title: mask(doc.Title), run: o.Trace != nil}
	byPage := map[string]int{}
	for _, pg := range doc.Pages {
		if o.Page == "" || o.Page == pg.ID {
			byPage[pg.ID] = len(p.pages)
			p.pages = append(p.pages, picPage{id: mask(pg.ID), title: mask(pg.Title)})
		}
	}
	if len(p.pages) == 0 {
		return nil, fmt.Errorf("no page %q in the chart", o.Page)
	}
	where := make(map[string][2]int, len(doc.Nodes)) // id -> page, index
	count := 0
	for i := range doc.Nodes {
		nd := &doc.Nodes[i]
		k, ok := byPage[nd.Page]
		if !ok {
			continue
		}
		pg := &p.pages[k]
		where[nd.ID] = [2]int{k, len(pg.nodes)}
		text := mask(nd.Text)
		pg.nodes = append(pg.nodes, picNode{n: count, id: mask(nd.ID), kind: nd.Kind, text: text, lines: wrap(text, wrapWidth, wrapLines)})
		count++
	}
	for _, e := range doc.Edges {
		f, okf := where[e.From]
		t, okt := where[e.To]
		if okf && okt && f[0] == t[0] {
			pg := &p.pages[f[0]]
			pg.edges = append(pg.edges, picEdge{from: f[1], to: t[1], label: mask(e.Label)})
		}
	}
	if o.Trace != nil {
		p.mark(o.Trace, where)
		p.caption = mask(p.caption)
	}
	return p, nil
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
	if w, ok := where[t.Stopped]; ok {
		p.pages[w[0]].nodes[w[1]].state = map[string]string{"failed": stateFailed, "interrupted": stateInterrupted,
			"limit_reached": stateLimit}[t.StoppedHow]
	}
	for _, s := range t.Steps {
		f, okf := where[s.From]
		to, okt := where[s.To]
		if !okf || !okt || f[0] != to[0] {
			continue
		}
		pg := &p.pages[f[0]]
		best := -1
		for i, e := range pg.edges {
			if e.from == f[1] && e.to == to[1] && (best < 0 || e.label == s.Label) {
				best = i
			}
		}
		if best >= 0 {
			pg.edges[best].taken++
		}
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

// note says what the run did at a node, for a line under its text.
func note(nd *picNode) string {
	var parts []string
	switch {
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
		parts = append(parts, "✗ limit reached")
	}
	return strings.Join(parts, " · ")
}

// edgeLabel is the label drawn on an edge: its own, and how often the run
// took it when more than once.
func (e picEdge) edgeLabel() string {
	if e.taken > 1 {
		if e.label == "" {
			return fmt.Sprintf("×%d", e.taken)
		}
		return fmt.Sprintf("%s ×%d", e.label, e.taken)
	}
	return e.label
}

// wrap breaks text into lines of at most width characters at spaces
// (a longer word is cut), keeping the text's own line breaks, and keeps
// at most max lines, the last ending in … when text was left out.
func wrap(text string, width, max int) []string {
	var out []string
	cut := false
	for _, para := range strings.Split(oneLineBreaks(text), "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			for utf8.RuneCountInString(word) > width {
				if line != "" {
					out = append(out, line)
					line = ""
				}
				r := []rune(word)
				out = append(out, string(r[:width]))
				word = string(r[width:])
			}
			switch {
			case line == "":
				line = word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
		if len(out) > max {
			cut = true
			break
		}
	}
	if len(out) > max {
		out, cut = out[:max], true
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

// oneLineBreaks keeps line breaks and turns every other control character
// into a space.
func oneLineBreaks(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
