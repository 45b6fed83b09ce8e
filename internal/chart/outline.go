package chart

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
)

// Outline is a page's graph as Digest sees it: each node's id and kind,
// each line's ends and label; and each node's text, which Digest leaves
// out. A run keeps its chart's
// outline beside its logs (outline.json), so that dtree resume can say
// what changed since (readme/resume.md).
type Outline struct {
	Nodes []OutlineNode `json:"nodes"`
	Edges []OutlineEdge `json:"edges"`
}

// OutlineNode is a node of an Outline. Its text is not part of the
// graph's digest: it is there to match the nodes of a chart exported
// again, whose ids are new (Match).
type OutlineNode struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Text string `json:"text,omitempty"`
}

// OutlineEdge is a line of an Outline.
type OutlineEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label"`
}

// Outline is the outline of a page, nodes and lines sorted.
func (c *Chart) Outline(page string) Outline {
	o := Outline{Nodes: []OutlineNode{}, Edges: []OutlineEdge{}}
	for i := range c.Doc.Nodes {
		if n := &c.Doc.Nodes[i]; n.Page == page {
			o.Nodes = append(o.Nodes, OutlineNode{ID: n.ID, Kind: n.Kind, Text: n.Text})
		}
	}
	for _, e := range c.Doc.Edges {
		if e.Page == page {
			o.Edges = append(o.Edges, OutlineEdge{From: e.From, To: e.To, Label: e.Label})
		}
	}
	slices.SortFunc(o.Nodes, func(a, b OutlineNode) int { return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Kind, b.Kind)) })
	slices.SortFunc(o.Edges, compareEdges)
	return o
}

func compareEdges(a, b OutlineEdge) int {
	return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Label, b.Label))
}

// Digest identifies the shape of a page's graph: its node ids and kinds
// and its edges with their labels, not its texts or settings. A run
// records it (run_start's graph_digest), so that a picture of the run is
// drawn only on the graph it walked (Lucid CSV ids are 1, 2, 3… in every
// chart, and another chart's run would otherwise mark nodes it never
// saw), and dtree resume refuses a chart whose graph changed.
func (c *Chart) Digest(page string) string {
	var lines []string
	o := c.Outline(page)
	for _, n := range o.Nodes {
		lines = append(lines, "node\x00"+n.ID+"\x00"+n.Kind)
	}
	for _, e := range o.Edges {
		lines = append(lines, "edge\x00"+e.From+"\x00"+e.To+"\x00"+e.Label)
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// maxChanges bounds the changes Changes names; the rest are counted.
const maxChanges = 10

// Changes says what differs from the outline was to the outline is, one
// line each: nodes added, removed or of another kind, lines added or
// removed. At most maxChanges are named, then how many more there are.
// Linear in the outlines (after sorting).
func Changes(was, is Outline) []string {
	var out []string
	more := 0
	add := func(format string, args ...any) {
		if len(out) < maxChanges {
			out = append(out, fmt.Sprintf(format, args...))
		} else {
			more++
		}
	}
	kinds := make(map[string]string, len(was.Nodes))
	for _, n := range was.Nodes {
		kinds[n.ID] = n.Kind
	}
	now := make(map[string]bool, len(is.Nodes))
	for _, n := range is.Nodes {
		now[n.ID] = true
		k, ok := kinds[n.ID]
		switch {
		case !ok:
			add("node %s (%s) was added", n.ID, n.Kind)
		case k != n.Kind:
			add("node %s was a %s and is a %s", n.ID, k, n.Kind)
		}
	}
	for _, n := range was.Nodes {
		if !now[n.ID] {
			add("node %s (%s) was removed", n.ID, n.Kind)
		}
	}
	a, b := slices.Clone(was.Edges), slices.Clone(is.Edges)
	slices.SortFunc(a, compareEdges)
	slices.SortFunc(b, compareEdges)
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case j == len(b) || i < len(a) && compareEdges(a[i], b[j]) < 0:
			add("the line %s was removed", edgeName(a[i]))
			i++
		case i == len(a) || compareEdges(a[i], b[j]) > 0:
			add("the line %s was added", edgeName(b[j]))
			j++
		default:
			i++
			j++
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more", more))
	}
	return out
}

func edgeName(e OutlineEdge) string {
	s := e.From + " → " + e.To
	if e.Label != "" {
		s += " labelled " + strconv.Quote(e.Label)
	}
	return s
}
