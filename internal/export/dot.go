package export

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// dotShapes are the Graphviz shapes and styles for each kind.
var dotShapes = map[string]string{
	types.KindTerminator: `shape=box, style="rounded,filled"`,
	types.KindProcess:    `shape=box, style=filled`,
	types.KindDecision:   `shape=diamond, style=filled`,
	types.KindSubprocess: `shape=box, style=filled, peripheries=2`,
	types.KindOther:      `shape=parallelogram, style=filled`,
}

// dotShape is the node's shape: its step kind's (a hexagon for a command
// step that is not a diamond), else its kind's.
func dotShape(nd picNode) string {
	if s, ok := stepShapes[nd.shape]; ok {
		return s.dot
	}
	return dotShapes[nd.kind]
}

// DOT writes doc as a Graphviz digraph. Nodes are named n0, n1, …; every
// string is quoted, with backslashes, quotes and line breaks escaped, so
// no text can end a label or add an attribute. The node's id and text (up
// to maxTooltip characters) are its tooltip. Pages are clusters when there are several. A trace
// marks the run as Mermaid does. It stops with ctx's error when ctx ends.
func DOT(ctx context.Context, w io.Writer, doc *types.Document, o PictureOptions) error {
	p, err := newPicture(ctx, doc, o)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph chart {\n")
	if title := p.headline(); title != "" {
		fmt.Fprintf(bw, "  graph [label=%s, labelloc=t, fontsize=16];\n", dotString(oneLine(title)))
	}
	bw.WriteString("  graph [fontname=\"Helvetica\", rankdir=TB];\n")
	fmt.Fprintf(bw, "  node [fontname=\"Helvetica\", fontsize=11, color=%q, fillcolor=\"#ffffff\"];\n", colorPlain)
	fmt.Fprintf(bw, "  edge [fontname=\"Helvetica\", fontsize=10, color=%q];\n", colorPlain)
	indent := "  "
	for k, pg := range p.pages {
		if len(p.pages) > 1 {
			fmt.Fprintf(bw, "  subgraph cluster_%d {\n    label=%s;\n", k, dotString(pageName(pg)))
			indent = "    "
		}
		for _, nd := range pg.nodes {
			if err := ctx.Err(); err != nil {
				return err
			}
			label := strings.Join(nd.lines, "\n")
			if nd.note != "" {
				label += "\n" + nd.note
			}
			fmt.Fprintf(bw, "%sn%d [label=%s, tooltip=%s, %s%s];\n", indent, nd.n, dotString(label),
				dotString(nd.id+": "+nd.text), dotShape(nd), dotMarks(nd, p.run))
		}
		if len(p.pages) > 1 {
			bw.WriteString("  }\n")
		}
	}
	for _, pg := range p.pages {
		for _, e := range pg.edges {
			var attrs []string
			if l := e.edgeLabel(); l != "" {
				attrs = append(attrs, "label="+dotString(l))
			}
			switch {
			case e.err != "":
				attrs = append(attrs, fmt.Sprintf("color=%q, fontcolor=%q, penwidth=2.5, style=dashed", colorFailed, colorFailed))
			case e.taken > 0:
				attrs = append(attrs, fmt.Sprintf("color=%q, fontcolor=%q, penwidth=2.5", colorVisited, colorVisited))
			case p.run:
				attrs = append(attrs, fmt.Sprintf("color=%q, fontcolor=%q", colorUnvisited, colorUnvisited))
			}
			if e.parallel && e.err == "" {
				attrs = append(attrs, "style=bold") // a fork's lines (readme/parallel.md#pictures)
			}
			fmt.Fprintf(bw, "  n%d -> n%d", pg.nodes[e.from].n, pg.nodes[e.to].n)
			if len(attrs) > 0 {
				fmt.Fprintf(bw, " [%s]", strings.Join(attrs, ", "))
			}
			bw.WriteString(";\n")
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// dotMarks are a node's attributes for the run: "" without one.
func dotMarks(nd picNode, run bool) string {
	switch {
	case nd.state == stateError:
		return fmt.Sprintf(", color=%q, fillcolor=%q, penwidth=3, style=\"filled,dashed\"", colorFailed, fillFailed)
	case !run:
		return ""
	case nd.state == stateFailed || nd.state == stateInterrupted:
		return fmt.Sprintf(", color=%q, fillcolor=%q, penwidth=3", colorFailed, fillFailed)
	case nd.state == stateLimit:
		return fmt.Sprintf(", color=%q, fillcolor=%q, penwidth=3", colorLimit, fillLimit)
	case nd.state == stateVisited:
		return fmt.Sprintf(", color=%q, fillcolor=%q, penwidth=2", colorVisited, fillVisited)
	}
	return fmt.Sprintf(", color=%q, fontcolor=%q", colorUnvisited, colorUnvisitedText)
}

// dotString quotes s as a DOT string: backslash and quote escaped, line
// breaks as \n (a centred line in a label), other control characters as
// spaces.
func dotString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
