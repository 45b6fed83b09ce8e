package export

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dtree-dev/dtree/internal/export/layout"
	"github.com/dtree-dev/dtree/types"
)

// Styles of the shapes Drawio writes: draw.io's Flowchart sidebar
// (Sidebar-Flowchart.js) without html=1, so that a label is plain text,
// kept exactly (readme/drawio.md#convert-to-drawio).
const (
	drawioTerminatorStyle = "strokeWidth=2;shape=mxgraph.flowchart.terminator;whiteSpace=wrap;"
	drawioDecisionStyle   = "strokeWidth=2;shape=mxgraph.flowchart.decision;whiteSpace=wrap;"
	drawioProcessStyle    = "rounded=1;whiteSpace=wrap;absoluteArcSize=1;arcSize=14;strokeWidth=2;"
	drawioSubprocessStyle = "strokeWidth=2;shape=mxgraph.flowchart.predefined_process;whiteSpace=wrap;"
	drawioEdgeStyle       = "rounded=0;orthogonalLoop=1;jettySize=auto;endArrow=classic;"
	drawioLabelStyle      = "edgeLabel;align=center;verticalAlign=middle;resizable=0;points=[];"
)

// drawioReserved are the wrapper attributes that are draw.io's own, not
// Edit Data properties: a metadata key of that name cannot be written.
var drawioReserved = map[string]bool{"id": true, "label": true, "placeholders": true, "tags": true,
	"link": true, "linkTarget": true, "tooltip": true}

// xmlName is an attribute name draw.io's Edit Data accepts (and XML).
var xmlName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// Drawio writes doc as an uncompressed draw.io file (readme/drawio.md):
// a <diagram> per page, terminators, decisions, predefined processes and
// process steps in the Flowchart sidebar's styles, custom data and tags as
// the attributes of an <object> wrapper, the chart's variables and context
// as the first page's root properties, laid out top to bottom by package
// layout. Every text is XML-escaped. It returns what draw.io drops.
func Drawio(w io.Writer, doc *types.Document) ([]string, error) {
	lost := losses{format: "draw.io"}
	// A draw.io chart's title is its file's name (readme/drawio.md): the
	// file written carries it as its name, not as a loss; nor is it lost
	// when a page has it as its name (a Mermaid chart's front matter
	// titles both).
	if doc.Title != "" && doc.Format != "drawio" && !slices.ContainsFunc(doc.Pages, func(p types.Page) bool { return p.Title == doc.Title }) {
		lost.note("draw.io has no chart title: %q is left out", types.Clip(doc.Title, 60))
	}
	starts := lucidStarts(doc, &lost)
	used := make(map[string]bool, len(doc.Nodes)+len(doc.Edges))
	for _, n := range doc.Nodes {
		used[n.ID] = true
	}
	for _, e := range doc.Edges {
		used[e.ID] = true
	}
	fresh := freshIDs(used, "-")
	rootID, layerID := fresh("0"), fresh("1")
	// emitted are the cell ids written: an edge whose id a node or an
	// earlier edge has gets a fresh one (the reader refuses an id twice).
	emitted := map[string]bool{rootID: true, layerID: true}

	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("<mxfile host=\"dtree\" type=\"device\" pages=\"" + strconv.Itoa(len(doc.Pages)) + "\">\n")
	lines := edgesByPage(doc)
	for k, p := range doc.Pages {
		name := p.Title
		if name == "" {
			name = "Page-" + strconv.Itoa(k+1)
		}
		bw.WriteString("  <diagram name=\"" + xmlAttr(name) + "\" id=\"" + xmlAttr(p.ID) + "\">\n")
		bw.WriteString("    <mxGraphModel grid=\"1\" gridSize=\"10\" guides=\"1\" tooltips=\"1\" connect=\"1\" arrows=\"1\" fold=\"1\" page=\"1\" pageScale=\"1\" pageWidth=\"827\" pageHeight=\"1169\" math=\"0\" shadow=\"0\">\n")
		bw.WriteString("      <root>\n")
		if k == 0 {
			drawioDocProps(bw, doc, rootID, &lost)
		} else {
			bw.WriteString("        <mxCell id=\"" + xmlAttr(rootID) + "\" />\n")
		}
		bw.WriteString("        <mxCell id=\"" + xmlAttr(layerID) + "\" parent=\"" + xmlAttr(rootID) + "\" />\n")

		// The page's cells: an added start, its nodes, its edges.
		nodes := nodesOn(doc, p.ID)
		type cell struct {
			id, text, style string
			n               *types.Node
			size            layout.Size
		}
		cells := make([]cell, 0, len(nodes)+1)
		index := make(map[string]int, len(nodes)+1)
		startID := ""
		if starts[p.ID] {
			startID = fresh("start-" + p.ID)
			index[startID] = 0
			cells = append(cells, cell{id: startID, text: "Start", style: drawioTerminatorStyle, size: layout.Size{W: 120, H: 60}})
		}
		for _, n := range nodes {
			lost.node(n, false)
			c := cell{id: n.ID, text: n.Text, n: n}
			lines := len(wrap(n.Text, wrapWidth, wrapLines))
			h := max(60, float64(lines)*lineH+2*padY)
			switch n.Kind {
			case types.KindTerminator:
				c.style, c.size = drawioTerminatorStyle, layout.Size{W: 120, H: h}
			case types.KindDecision:
				c.style, c.size = drawioDecisionStyle, layout.Size{W: 160, H: max(100, h*1.6)}
			case types.KindSubprocess:
				c.style, c.size = drawioSubprocessStyle, layout.Size{W: 200, H: h}
			default:
				if n.Kind == types.KindOther {
					lost.add("shapes other than flowchart steps (draw.io reads them back as process steps)")
				}
				c.style, c.size = drawioProcessStyle, layout.Size{W: 200, H: h}
			}
			index[n.ID] = len(cells)
			emitted[n.ID] = true
			cells = append(cells, c)
		}
		type edge struct {
			id, from, to, label string
			extra               []string
		}
		edges := make([]edge, 0, len(lines[p.ID])+1)
		if startID != "" {
			edges = append(edges, edge{id: fresh(startID + "-line"), from: startID, to: p.Root})
		}
		for _, e := range lines[p.ID] {
			id := e.ID
			if id == "" || emitted[id] {
				id = fresh("line")
			}
			emitted[id] = true
			edges = append(edges, edge{id: id, from: e.From, to: e.To, label: e.Label, extra: e.ExtraLabels})
		}
		g := layout.Graph{Nodes: make([]layout.Size, len(cells))}
		for i, c := range cells {
			g.Nodes[i] = c.size
		}
		routed := make([]int, len(edges)) // each edge's index in g.Edges, -1 when not laid out
		for i, e := range edges {
			f, okf := index[e.from]
			t, okt := index[e.to]
			routed[i] = -1
			if okf && okt {
				routed[i] = len(g.Edges)
				g.Edges = append(g.Edges, layout.Edge{From: f, To: t})
			}
		}
		l := layout.Layered(g, layout.DefaultOptions())
		for i, c := range cells {
			geo := fmt.Sprintf("<mxGeometry x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" as=\"geometry\" />",
				num(l.Nodes[i].X-c.size.W/2), num(l.Nodes[i].Y-c.size.H/2), num(c.size.W), num(c.size.H))
			attrs := drawioData(c.n, &lost)
			if attrs == "" {
				bw.WriteString("        <mxCell id=\"" + xmlAttr(c.id) + "\" value=\"" + xmlAttr(c.text) + "\" style=\"" + c.style +
					"\" vertex=\"1\" parent=\"" + xmlAttr(layerID) + "\">\n          " + geo + "\n        </mxCell>\n")
				continue
			}
			bw.WriteString("        <object label=\"" + xmlAttr(c.text) + "\"" + attrs + " id=\"" + xmlAttr(c.id) + "\">\n")
			bw.WriteString("          <mxCell style=\"" + c.style + "\" vertex=\"1\" parent=\"" + xmlAttr(layerID) + "\">\n            " +
				geo + "\n          </mxCell>\n        </object>\n")
		}
		for i, e := range edges {
			bw.WriteString("        <mxCell id=\"" + xmlAttr(e.id) + "\" value=\"" + xmlAttr(e.label) + "\" style=\"" + drawioEdgeStyle + "\" edge=\"1\" parent=\"" + xmlAttr(layerID) + "\"")
			if e.from != "" {
				bw.WriteString(" source=\"" + xmlAttr(e.from) + "\"")
			}
			if e.to != "" {
				bw.WriteString(" target=\"" + xmlAttr(e.to) + "\"")
			}
			bw.WriteString(">\n          <mxGeometry relative=\"1\" as=\"geometry\"")
			var bends []layout.Point
			if r := routed[i]; r >= 0 && len(l.Edges[r]) > 2 {
				bends = l.Edges[r][1 : len(l.Edges[r])-1]
			}
			if len(bends) == 0 {
				bw.WriteString(" />\n")
			} else {
				bw.WriteString(">\n            <Array as=\"points\">\n")
				for _, pt := range bends {
					bw.WriteString("              <mxPoint x=\"" + num(pt.X) + "\" y=\"" + num(pt.Y) + "\" />\n")
				}
				bw.WriteString("            </Array>\n          </mxGeometry>\n")
			}
			bw.WriteString("        </mxCell>\n")
			for j, x := range e.extra {
				bw.WriteString("        <mxCell id=\"" + xmlAttr(fresh(e.id+"-label-"+strconv.Itoa(j+1))) + "\" value=\"" + xmlAttr(x) + "\" style=\"" + drawioLabelStyle +
					"\" vertex=\"1\" connectable=\"0\" parent=\"" + xmlAttr(e.id) + "\">\n          <mxGeometry x=\"" + num(-0.5+float64(j+1)*0.3) +
					"\" relative=\"1\" as=\"geometry\">\n            <mxPoint as=\"offset\" />\n          </mxGeometry>\n        </mxCell>\n")
			}
		}
		bw.WriteString("      </root>\n    </mxGraphModel>\n  </diagram>\n")
	}
	bw.WriteString("</mxfile>\n")
	return lost.list(), bw.Flush()
}

// drawioDocProps writes the first page's root cell with the chart's
// context and variables as its properties (Edit Data on the canvas).
func drawioDocProps(bw *bufio.Writer, doc *types.Document, rootID string, lost *losses) {
	var attrs strings.Builder
	if c, ok := doc.Metadata["context"]; ok && c != "" {
		attrs.WriteString(" context=\"" + xmlAttr(c) + "\"")
	}
	for _, v := range doc.Vars {
		switch {
		case !v.HasDefault || v.Default == "":
			lost.note("draw.io properties have a value: variable %s, which has no default, is left out; pass it with --var", v.Name)
		case v.Name == "context" || drawioReserved[v.Name] || !xmlName.MatchString(v.Name):
			lost.note("variable %q cannot be a draw.io property name: it is left out", v.Name)
		default:
			attrs.WriteString(" " + v.Name + "=\"" + xmlAttr(v.Default) + "\"")
		}
	}
	if attrs.Len() == 0 {
		bw.WriteString("        <mxCell id=\"" + xmlAttr(rootID) + "\" />\n")
		return
	}
	bw.WriteString("        <object label=\"\"" + attrs.String() + " id=\"" + xmlAttr(rootID) + "\">\n          <mxCell />\n        </object>\n")
}

// drawioData is a node's tags and custom data as wrapper attributes, " k=\"v\"…",
// keys in order; "" when it has none.
func drawioData(n *types.Node, lost *losses) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var tags []string
	for _, t := range n.Tags {
		if t == "" || strings.IndexFunc(t, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }) >= 0 {
			lost.add("tags with spaces (draw.io's tags are space separated)")
			continue
		}
		tags = append(tags, t)
	}
	if len(tags) > 0 {
		b.WriteString(" tags=\"" + xmlAttr(strings.Join(tags, " ")) + "\"")
	}
	spaced := false
	for _, k := range sortedKeys(n.Metadata) {
		key := strings.TrimSpace(k)
		if under := strings.ReplaceAll(key, " ", "_"); under != key && xmlName.MatchString(under) && n.Metadata[under] == "" {
			// "Validate Prompt" is validate_prompt to dtree
			// (readme/charts.md#custom-data-metadata); draw.io's names
			// have no spaces.
			key, spaced = under, true
		}
		if drawioReserved[key] || !xmlName.MatchString(key) {
			lost.add("custom data keys that are not draw.io property names (letters, digits, _ . -)")
			continue
		}
		b.WriteString(" " + key + "=\"" + xmlAttr(n.Metadata[k]) + "\"")
	}
	if spaced && !lost.spaced {
		lost.spaced = true
		lost.note("custom data keys with spaces are written with _ for them (draw.io property names have no spaces); dtree reads both alike")
	}
	return b.String()
}

// num is a coordinate as draw.io writes it: an integer when it is one.
func num(f float64) string {
	return strconv.FormatFloat(float64(int64(f*100))/100, 'f', -1, 64)
}

// xmlAttr escapes s for a double-quoted XML attribute: the markup
// characters and the quotes as entities, tab, line feed and carriage return
// as character references (so that they survive attribute normalization),
// invalid UTF-8 and the characters XML 1.0 forbids as U+FFFD.
func xmlAttr(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		case '\t':
			b.WriteString("&#9;")
		case '\n':
			b.WriteString("&#10;")
		case '\r':
			b.WriteString("&#13;")
		default:
			if r < 0x20 || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r <= 0xDFFF) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// freshIDs makes ids that none in used has: base itself, else base, sep
// and 2, 3…; each id it makes is used from then on.
func freshIDs(used map[string]bool, sep string) func(base string) string {
	return func(base string) string {
		id := base
		for k := 2; used[id]; k++ {
			id = base + sep + strconv.Itoa(k)
		}
		used[id] = true
		return id
	}
}
