// Package export writes an imported chart in other formats: dtree's YAML,
// a CSV in the layout of Lucid's export and Lucid API JSON (both of which
// dtree reads back), and pictures — Mermaid, Graphviz DOT and SVG —
// optionally marked with the path a run took (readme/convert.md,
// readme/graph.md).
//
// The chart formats keep the graph, texts, tags and metadata; what a format
// cannot hold is named in the Dropped list each writer returns, so that
// the command can say so. The pictures escape node text for their syntax:
// text is data, and no text can end a label or start a statement.
package export

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// Formats are the values of convert --to: the chart formats (Writers)
// in the order of document's table, and the DOT picture.
var Formats = []string{"yaml", "json", "csv", "drawio", "mermaid", "dot"}

// Writers write a chart in a format dtree reads back as the same chart,
// by the format's name in document's table (document.Format.Output names
// its files); each returns what the format cannot hold.
var Writers = map[string]func(io.Writer, *types.Document) ([]string, error){
	"yaml":    YAML,
	"json":    JSON,
	"csv":     CSV,
	"drawio":  Drawio,
	"mermaid": MermaidChart,
}

// PictureFormats are the values of graph --format.
var PictureFormats = []string{"mermaid", "dot", "svg"}

// outEdges returns each node's outgoing edges, in chart order, by node id.
func outEdges(doc *types.Document) map[string][]*types.Edge {
	out := make(map[string][]*types.Edge, len(doc.Nodes))
	for i := range doc.Edges {
		e := &doc.Edges[i]
		out[e.From] = append(out[e.From], e)
	}
	return out
}

// edgesByPage returns each page's edges, in chart order.
func edgesByPage(doc *types.Document) map[string][]*types.Edge {
	out := make(map[string][]*types.Edge, len(doc.Pages))
	for i := range doc.Edges {
		e := &doc.Edges[i]
		out[e.Page] = append(out[e.Page], e)
	}
	return out
}

// roots returns the ids of the pages' start nodes.
func roots(doc *types.Document) map[string]bool {
	r := make(map[string]bool, len(doc.Pages))
	for _, p := range doc.Pages {
		if p.Root != "" {
			r[p.Root] = true
		}
	}
	return r
}

// nodesOn returns the nodes of page id, in chart order.
func nodesOn(doc *types.Document, page string) []*types.Node {
	var out []*types.Node
	for i := range doc.Nodes {
		if doc.Nodes[i].Page == page {
			out = append(out, &doc.Nodes[i])
		}
	}
	return out
}

// losses counts what a format drops, to report it once per kind, and
// keeps the other notes a writer has for the user.
type losses struct {
	format string // YAML, CSV, JSON: for the notes
	counts map[string]int
	order  []string
	notes  []string
	spaced bool // draw.io: the note on keys with spaces is made
}

func (l *losses) add(what string) {
	if l.counts == nil {
		l.counts = map[string]int{}
	}
	if l.counts[what] == 0 {
		l.order = append(l.order, what)
	}
	l.counts[what]++
}

func (l *losses) note(format string, args ...any) {
	l.notes = append(l.notes, fmt.Sprintf(format, args...))
}

// node notes what node n has that a format keeping only its text, tags
// (unless noTags) and metadata drops.
func (l *losses) node(n *types.Node, noTags bool) {
	if len(n.TextAreas) > 1 {
		l.add("text areas after the first")
	}
	if n.Lane != "" || n.Container != "" || n.Group != "" {
		l.add(containersLost)
	}
	if len(n.Comments) > 0 {
		l.add("comments")
	}
	if noTags && len(n.Tags) > 0 {
		l.add("tags that name no CLI and are not NoValidation (Lucid's API JSON has no tags)")
	}
}

// containersLost is the loss of a node's lane, container or group.
const containersLost = "swim lanes, containers and groups"

// list is what the writer has to say: a sentence each.
func (l *losses) list() []string {
	out := []string{}
	for _, what := range l.order {
		if what == containersLost {
			// Every format has them (Mermaid's subgraphs, draw.io's
			// containers, Lucid's): it is dtree's writer that has not.
			verb := "are"
			if l.counts[what] == 1 {
				verb = "is"
			}
			out = append(out, fmt.Sprintf("dtree writes %s with no swim lanes, containers or groups: the %s in them %s written outside any", l.format, types.Plural(l.counts[what], "step"), verb))
			continue
		}
		out = append(out, fmt.Sprintf("%s cannot hold %s (%s); they are left out", l.format, what, types.Plural(l.counts[what], "item")))
	}
	return append(out, l.notes...)
}

// lucidStarts finds the pages that Lucid's rule — a page starts at its
// one node with no incoming line — would not start where the chart does:
// a YAML page that starts at its first node, which a loop leads back to.
// A Lucid writer adds a Start terminator before such a page's start. It
// notes a page whose start is marked kind: start while other nodes have
// no incoming line too, which Lucid will read as ambiguous.
func lucidStarts(doc *types.Document, lost *losses) map[string]bool {
	in := make(map[string]bool, len(doc.Nodes))
	for _, e := range doc.Edges {
		if e.From != e.To {
			in[e.To] = true
		}
	}
	need := map[string]bool{}
	for _, p := range doc.Pages {
		if p.Root == "" {
			continue
		}
		need[p.ID] = in[p.Root]
		var others []string
		for i := range doc.Nodes {
			n := &doc.Nodes[i]
			if n.Page == p.ID && n.ID != p.Root && !in[n.ID] {
				others = append(others, n.ID)
			}
		}
		switch {
		case need[p.ID]:
			l := fmt.Sprintf("page %s: a Start terminator is added before %s, since a Lucid page starts at its one node with no incoming line", p.ID, p.Root)
			lost.note("%s", l)
		case len(others) > 0:
			lost.note("page %s starts at %s, but it is not the only node without an incoming line (also: %s), so Lucid's rule finds its start ambiguous",
				p.ID, p.Root, strings.Join(others, ", "))
		}
	}
	return need
}

// sortedKeys returns a node's metadata keys in order.
func sortedKeys(m types.Metadata) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// oneLine replaces line breaks and other control characters by spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// PictureLosses is what convert --to dot, or a Mermaid picture, drops: those are
// dtree's pictures of the chart (readme/convert.md), numbered n0, n1, …,
// without a step's custom data (its command, approval, cli, retries, …),
// the chart's variables or its pages after the first as separate charts.
// Read back, such a file is another chart: a command step or an approval
// gate of the original would be an agent's step.
func PictureLosses(doc *types.Document, format string) []string {
	name := map[string]string{"mermaid": "Mermaid", "dot": "DOT"}[format]
	if name == "" {
		name = format
	}
	lost := losses{format: name + " as dtree draws it"}
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		if len(n.Metadata) > 0 {
			lost.add("custom data (command, approval, cli, retries, …)")
		}
		if len(n.Tags) > 0 {
			lost.add("tags")
		}
	}
	if len(doc.Vars) > 0 {
		lost.add("variables")
	}
	out := lost.list()
	if len(out) > 0 {
		out = append(out, fmt.Sprintf("%s is a picture of the chart, with ids n0, n1, …: to keep the chart, convert to yaml, csv, json, drawio or mermaid", name))
	}
	return out
}
