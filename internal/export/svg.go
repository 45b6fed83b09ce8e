package export

import (
	"bufio"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/dtree-dev/dtree/internal/export/layout"
	"github.com/dtree-dev/dtree/types"
)

// MaxSVGNodes is the most nodes an SVG picture draws. The layout would
// manage more in seconds, but a picture of thousands of boxes is not one
// anybody reads, and browsers slow down on it; Graphviz (from the DOT
// output) and --page do better there.
const MaxSVGNodes = 5000

// TooLargeError is a chart with more nodes than an SVG picture draws.
type TooLargeError struct {
	Nodes int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the picture would have %d nodes; SVG is drawn for up to %d", e.Nodes, MaxSVGNodes)
}

// Sizes, in pixels, of the SVG drawing: 12px text is about 7px a column
// on average in Helvetica or Arial, a wide character (CJK, emoji) two
// columns (see columns).
const (
	charW      = 7.0
	lineH      = 16.0
	padX       = 12.0
	padY       = 10.0
	labelCharW = 6.5
	headH      = 28.0
)

// svgBox is a node's drawn size and what it shows.
type svgBox struct {
	w, h  float64 // the shape
	lines []string
}

func box(nd picNode) svgBox {
	lines := nd.lines
	if nd.note != "" {
		lines = append(append([]string{}, lines...), nd.note)
	}
	width := 0
	for _, l := range lines {
		width = max(width, columns(l))
	}
	w := max(float64(width)*charW+2*padX, 80)
	h := float64(len(lines))*lineH + 2*padY
	if nd.kind == types.KindDecision {
		// A diamond around the text: its corners stay near the edges.
		w, h = w+h*1.6, h*1.8
	}
	return svgBox{w: w, h: h, lines: lines}
}

// SVG draws doc as an SVG picture, laid out in layers by package layout,
// with no outside program: boxes for steps, diamonds for decisions,
// rounded boxes for terminators, edges as polylines with their labels.
// All text is XML-escaped. A trace marks the run as Mermaid does. A chart
// with more than MaxSVGNodes nodes is a *TooLargeError. It stops with
// ctx's error when ctx ends.
func SVG(ctx context.Context, w io.Writer, doc *types.Document, o PictureOptions) error {
	p, err := newPicture(ctx, doc, o)
	if err != nil {
		return err
	}
	count := 0
	for _, pg := range p.pages {
		count += len(pg.nodes)
	}
	if count > MaxSVGNodes {
		return &TooLargeError{Nodes: count}
	}
	type laidPage struct {
		boxes []svgBox
		l     layout.Layout
		top   float64
	}
	laid := make([]laidPage, len(p.pages))
	width, top := 400.0, 0.0
	if h := p.headline(); h != "" {
		top += headH + 8
		width = max(width, float64(columns(h))*10.5+40) // 16px bold
	}
	for k, pg := range p.pages {
		g := layout.Graph{Nodes: make([]layout.Size, len(pg.nodes))}
		boxes := make([]svgBox, len(pg.nodes))
		for i, nd := range pg.nodes {
			boxes[i] = box(nd)
			g.Nodes[i] = layout.Size{W: boxes[i].w, H: boxes[i].h}
		}
		for _, e := range pg.edges {
			g.Edges = append(g.Edges, layout.Edge{From: e.from, To: e.to})
		}
		if len(p.pages) > 1 {
			top += headH
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		l := layout.Layered(g, layout.DefaultOptions())
		laid[k] = laidPage{boxes: boxes, l: l, top: top}
		top += l.Height
		width = max(width, l.Width)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(bw, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n",
		width, top, width, top)
	fmt.Fprintf(bw, "<title>%s</title>\n", esc(p.headline()))
	bw.WriteString("<defs>\n")
	markers := [][2]string{{"arrow", colorPlain}, {"arrow-taken", colorVisited}, {"arrow-dim", colorUnvisited}}
	if p.errors {
		markers = append(markers, [2]string{"arrow-error", colorFailed})
	}
	for _, m := range markers {
		fmt.Fprintf(bw, "<marker id=\"%s\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"10\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"%s\"/></marker>\n", m[0], m[1])
	}
	bw.WriteString("</defs>\n")
	fmt.Fprintf(bw, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n")
	if h := p.headline(); h != "" {
		fmt.Fprintf(bw, "<text x=\"20\" y=\"%.0f\" font-size=\"16\" font-weight=\"bold\">%s</text>\n", headH, esc(oneLine(h)))
	}
	for k, pg := range p.pages {
		lp := laid[k]
		fmt.Fprintf(bw, "<g class=\"page\" data-page=\"%s\" transform=\"translate(0 %.1f)\">\n", esc(pg.id), lp.top)
		if len(p.pages) > 1 {
			fmt.Fprintf(bw, "<text x=\"20\" y=\"-8\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", esc(oneLine(pageName(pg))))
		}
		pairs := map[[2]int]int{} // edges so far between two nodes, either way
		labels := newLabelGrid()
		for i, e := range pg.edges {
			key := [2]int{min(e.from, e.to), max(e.from, e.to)}
			nth := pairs[key]
			pairs[key]++
			svgEdge(bw, e, lp.l.Edges[i], lp.boxes[e.from], lp.boxes[e.to], pg.nodes[e.from].kind, pg.nodes[e.to].kind, nth, p.run, labels)
		}
		for i, nd := range pg.nodes {
			if err := ctx.Err(); err != nil {
				return err
			}
			svgNode(bw, nd, lp.boxes[i], lp.l.Nodes[i], p.run)
		}
		bw.WriteString("</g>\n")
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// svgNode draws one node: its shape, its text lines centred, and its id
// and whole text as a tooltip.
func svgNode(w *bufio.Writer, nd picNode, b svgBox, c layout.Point, run bool) {
	stroke, fill, width, textColor := colorPlain, "#ffffff", 1.2, "#000000"
	switch {
	case nd.state == stateFailed || nd.state == stateInterrupted || nd.state == stateError:
		stroke, fill, width = colorFailed, fillFailed, 3
	case nd.state == stateLimit:
		stroke, fill, width = colorLimit, fillLimit, 3
	case nd.state == stateVisited:
		stroke, fill, width = colorVisited, fillVisited, 2
	case run:
		stroke, textColor = colorUnvisited, colorUnvisitedText
	}
	style := fmt.Sprintf(`fill="%s" stroke="%s" stroke-width="%.1f"`, fill, stroke, width)
	class := nd.kind
	if nd.command {
		class += " command"
	}
	fmt.Fprintf(w, "<g class=\"node %s\" id=\"n%d\" data-id=\"%s\">\n<title>%s</title>\n", class, nd.n, esc(nd.id), esc(nd.id+": "+nd.text))
	x, y := c.X-b.w/2, c.Y-b.h/2
	switch {
	case stepShapes[nd.shape].svg != nil: // its step kind's: a command's hexagon
		stepShapes[nd.shape].svg(w, b, c, style)
	case nd.kind == types.KindDecision:
		fmt.Fprintf(w, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" %s/>\n",
			c.X, y, x+b.w, c.Y, c.X, y+b.h, x, c.Y, style)
	case nd.kind == types.KindTerminator:
		fmt.Fprintf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"%.1f\" %s/>\n", x, y, b.w, b.h, min(b.h/2, 24), style)
	case nd.kind == types.KindSubprocess:
		fmt.Fprintf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" %s/>\n", x, y, b.w, b.h, style)
		fmt.Fprintf(w, "<path d=\"M%.1f,%.1fv%.1fM%.1f,%.1fv%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"/>\n", x+6, y, b.h, x+b.w-6, y, b.h, stroke, width)
	case nd.kind == types.KindOther:
		fmt.Fprintf(w, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" %s/>\n",
			x+8, y, x+b.w, y, x+b.w-8, y+b.h, x, y+b.h, style)
	default:
		fmt.Fprintf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"3\" %s/>\n", x, y, b.w, b.h, style)
	}
	first := c.Y - float64(len(b.lines)-1)*lineH/2 + 4
	fmt.Fprintf(w, "<text text-anchor=\"middle\" fill=\"%s\">", textColor)
	for i, l := range b.lines {
		attrs := ""
		if nd.note != "" && i == len(b.lines)-1 {
			attrs = ` font-size="11" font-style="italic"`
		}
		fmt.Fprintf(w, "<tspan x=\"%.1f\" y=\"%.1f\"%s>%s</tspan>", c.X, first+float64(i)*lineH, attrs, esc(l))
	}
	w.WriteString("</text>\n</g>\n")
}

// svgEdge draws one edge: a polyline from the border of its source to the
// border of its target through the layout's bends, an arrowhead, and its
// label on a white ground in the middle. A loop on one node is an arc on
// its right.
func svgEdge(w *bufio.Writer, e picEdge, pts []layout.Point, from, to svgBox, fromKind, toKind string, nth int, run bool, labels *labelGrid) {
	color, width, marker := colorPlain, 1.2, "arrow"
	dash := ""
	switch {
	case e.err != "":
		color, width, marker, dash = colorFailed, 2.5, "arrow-error", ` stroke-dasharray="6 3"`
	case e.taken > 0:
		color, width, marker = colorVisited, 2.5, "arrow-taken"
	case run:
		color, marker = colorUnvisited, "arrow-dim"
	}
	if e.parallel && e.err == "" {
		width = max(width, 2.5) // a fork's lines, bold (readme/parallel.md#pictures)
	}
	fmt.Fprintf(w, "<g class=\"edge\">\n")
	var lx, ly float64
	if e.from == e.to {
		c := pts[0]
		x := c.X + from.w/2
		if fromKind == types.KindDecision {
			x = c.X + from.w/4
		}
		fmt.Fprintf(w, "<path d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s marker-end=\"url(#%s)\"/>\n",
			x, c.Y-8, x+50, c.Y-40, x+50, c.Y+40, x, c.Y+8, color, width, dash, marker)
		lx, ly = x+44, c.Y
	} else {
		pts = append([]layout.Point{}, pts...)
		if nth > 0 && len(pts) == 2 {
			// another edge between the same two nodes: bend this one aside
			mid := layout.Point{X: (pts[0].X+pts[1].X)/2 + 36*float64(nth), Y: (pts[0].Y + pts[1].Y) / 2}
			pts = []layout.Point{pts[0], mid, pts[1]}
			nth = 0
		}
		pts[0] = clip(pts[0], pts[1], from, fromKind)
		n := len(pts) - 1
		pts[n] = clip(pts[n], pts[n-1], to, toKind)
		var b strings.Builder
		for i, p := range pts {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", p.X, p.Y)
		}
		fmt.Fprintf(w, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s marker-end=\"url(#%s)\"/>\n", b.String(), color, width, dash, marker)
		k := (len(pts) - 1) / 2
		lx, ly = (pts[k].X+pts[k+1].X)/2, (pts[k].Y+pts[k+1].Y)/2+float64(nth)*14
	}
	if l := oneLine(e.edgeLabel()); l != "" {
		lw := float64(columns(l))*labelCharW + 8
		ly = labels.place(lx-lw/2, ly-9, lw) + 9
		fmt.Fprintf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"#ffffff\" fill-opacity=\"0.9\"/>\n", lx-lw/2, ly-9, lw)
		fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"%s\">%s</text>\n", lx, ly+3, color, esc(l))
	}
	w.WriteString("</g>\n")
}

// clip moves c, a node's centre, to where the segment towards p leaves
// the node's shape.
func clip(c, p layout.Point, b svgBox, kind string) layout.Point {
	dx, dy := p.X-c.X, p.Y-c.Y
	if dx == 0 && dy == 0 {
		return c
	}
	hw, hh := b.w/2, b.h/2
	var t float64
	if kind == types.KindDecision {
		t = 1 / (math.Abs(dx)/hw + math.Abs(dy)/hh)
	} else {
		t = math.Inf(1)
		if dx != 0 {
			t = hw / math.Abs(dx)
		}
		if dy != 0 {
			t = min(t, hh/math.Abs(dy))
		}
	}
	t = min(t, 1)
	return layout.Point{X: c.X + t*dx, Y: c.Y + t*dy}
}

// esc escapes text for XML character data and attribute values; a
// character XML cannot hold becomes U+FFFD.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
