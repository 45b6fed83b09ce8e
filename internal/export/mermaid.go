package export

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/dtree-dev/dtree/types"
)

// mermaidShapes open and close a node of each kind: a stadium for
// terminators, a rhombus for decisions, a subroutine box for predefined
// processes, a box for the rest.
var mermaidShapes = map[string][2]string{
	types.KindTerminator: {`(["`, `"])`},
	types.KindDecision:   {`{"`, `"}`},
	types.KindSubprocess: {`[["`, `"]]`},
	types.KindProcess:    {`["`, `"]`},
	types.KindOther:      {`["`, `"]`},
}

// Colours of a run's marks, shared by every picture format.
const (
	colorVisited       = "#2e7d32"
	fillVisited        = "#e6f4ea"
	colorFailed        = "#c62828"
	fillFailed         = "#fde7e9"
	colorLimit         = "#ef6c00"
	fillLimit          = "#fff3e0"
	colorPlain         = "#555555"
	colorUnvisited     = "#9e9e9e"
	colorUnvisitedText = "#757575"
)

// Mermaid writes doc as a Mermaid flowchart (flowchart TD). Nodes are
// named n0, n1, … whatever their ids; every label is a quoted string in
// which anything but letters, digits, spaces and plain punctuation is a
// Mermaid entity code (#34; for "), so no text can close a label, start an
// edge or a directive. Pages are subgraphs when there are several. With a
// trace, visited nodes and taken edges are green, the node the run
// stopped at red (orange for a limit), with visit and retry counts. It
// stops with ctx's error when ctx ends.
func Mermaid(ctx context.Context, w io.Writer, doc *types.Document, o PictureOptions) error {
	p, err := newPicture(ctx, doc, o)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if title := p.headline(); title != "" {
		// A JSON string is a YAML one; %% is broken up so that no title
		// reads as a %%{init: …}%% directive.
		t, _ := json.Marshal(strings.ReplaceAll(oneLine(title), "%%", "% %"))
		fmt.Fprintf(bw, "---\ntitle: %s\n---\n", t)
	}
	bw.WriteString("flowchart TD\n")
	indent := "  "
	for k, pg := range p.pages {
		if len(p.pages) > 1 {
			fmt.Fprintf(bw, "  subgraph p%d[\"%s\"]\n", k, mermaidText(pageName(pg)))
			indent = "    "
		}
		for _, nd := range pg.nodes {
			if err := ctx.Err(); err != nil {
				return err
			}
			s := mermaidShapes[nd.kind]
			if st, ok := stepShapes[nd.shape]; ok {
				s = st.mermaid
			}
			label := strings.Join(mapStrings(nd.lines, mermaidText), "<br/>")
			if nd.note != "" {
				label += "<br/>" + mermaidText(nd.note)
			}
			if strings.TrimSpace(label) == "" {
				label = " " // Mermaid 11 does not parse an empty label, [""]
			}
			fmt.Fprintf(bw, "%sn%d%s%s%s\n", indent, nd.n, s[0], label, s[1])
		}
		if len(p.pages) > 1 {
			bw.WriteString("  end\n")
		}
	}
	var taken, broken []string
	link := 0
	classes := map[string][]string{}
	for _, pg := range p.pages {
		for _, e := range pg.edges {
			from, to := pg.nodes[e.from].n, pg.nodes[e.to].n
			arrow := "-->"
			if e.parallel {
				arrow = "==>" // a fork's lines, thick (readme/parallel.md#pictures)
			}
			if l := e.edgeLabel(); l != "" {
				fmt.Fprintf(bw, "  n%d %s|\"%s\"| n%d\n", from, arrow, mermaidText(l), to)
			} else {
				fmt.Fprintf(bw, "  n%d %s n%d\n", from, arrow, to)
			}
			if e.taken > 0 {
				taken = append(taken, fmt.Sprint(link))
			}
			if e.err != "" {
				broken = append(broken, fmt.Sprint(link))
			}
			link++
		}
		for _, nd := range pg.nodes {
			if nd.state != "" {
				classes[nd.state] = append(classes[nd.state], fmt.Sprintf("n%d", nd.n))
			}
		}
	}
	if p.run {
		fmt.Fprintf(bw, "  classDef visited fill:%s,stroke:%s,stroke-width:2px\n", fillVisited, colorVisited)
		fmt.Fprintf(bw, "  classDef failed fill:%s,stroke:%s,stroke-width:3px\n", fillFailed, colorFailed)
		fmt.Fprintf(bw, "  classDef interrupted fill:%s,stroke:%s,stroke-width:3px\n", fillFailed, colorFailed)
		fmt.Fprintf(bw, "  classDef limit fill:%s,stroke:%s,stroke-width:3px\n", fillLimit, colorLimit)
		for _, state := range []string{stateVisited, stateFailed, stateInterrupted, stateLimit} {
			if ids := classes[state]; len(ids) > 0 {
				fmt.Fprintf(bw, "  class %s %s\n", strings.Join(ids, ","), state)
			}
		}
		if len(taken) > 0 {
			fmt.Fprintf(bw, "  linkStyle %s stroke:%s,stroke-width:3px\n", strings.Join(taken, ","), colorVisited)
		}
	}
	if p.errors {
		fmt.Fprintf(bw, "  classDef error fill:%s,stroke:%s,stroke-width:3px,stroke-dasharray: 6 3\n", fillFailed, colorFailed)
		if ids := classes[stateError]; len(ids) > 0 {
			fmt.Fprintf(bw, "  class %s error\n", strings.Join(ids, ","))
		}
		if len(broken) > 0 {
			fmt.Fprintf(bw, "  linkStyle %s stroke:%s,stroke-width:3px,stroke-dasharray: 6 3\n", strings.Join(broken, ","), colorFailed)
		}
	}
	return bw.Flush()
}

// headline is the picture's title, with the run's outcome.
func (p *picture) headline() string {
	switch {
	case p.caption == "":
		return p.title
	case p.title == "":
		return p.caption
	}
	return p.title + " — " + p.caption
}

func pageName(pg picPage) string {
	if pg.title != "" {
		return pg.title
	}
	return "page " + types.Clip(pg.id, maxLabel)
}

// mermaidText escapes text for a quoted Mermaid label: letters, digits,
// spaces and . , : ! ? ' ( ) [ ] / + - * = _ @ $ ^ ~ stay; everything
// else, the quote, #, ;, %, braces, <, >, & and | among them, becomes an
// entity code (#34;), and line breaks become spaces.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range oneLine(strings.ToValidUTF8(s, "\uFFFD")) {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" .,:!?'()[]/+-*=_@$^~", r)):
			b.WriteRune(r)
		case r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '…' || r == '✓' || r == '✗' || r == '×' || r == '·'):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "#%d;", r)
		}
	}
	return b.String()
}

func mapStrings(s []string, f func(string) string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}
