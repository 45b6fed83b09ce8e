package chart

import (
	"cmp"
	"slices"
)

// Match pairs the nodes of two outlines of one graph whose ids differ: a
// Lucid CSV export numbers its rows afresh each time (readme/charts.md),
// so the chart a run walked, exported again with one prompt mended, has
// new ids throughout. Nodes are paired by what they are, not their ids:
// first those whose kind and text are found once on each side, then,
// from each pair, the nodes their lines lead to and come from with the
// same label and kind, and again, until nothing more pairs. It returns
// the old id → new id of each pair, and whether the pairing is whole: every
// node paired, kinds alike and the lines the same under it, so the graph
// is the one the run walked, only renumbered (texts may differ). Linear
// in the outlines' size times the passes, a few in practice.
func Match(was, is Outline) (ids map[string]string, whole bool) {
	a, b := newSide(was), newSide(is)
	ids = map[string]string{}
	doneA, doneB := map[string]bool{}, map[string]bool{}
	var queue [][2]string
	pair := func(x, y string) {
		if doneA[x] || doneB[y] || a.kind[x] != b.kind[y] {
			return
		}
		ids[x], doneA[x], doneB[y] = y, true, true
		queue = append(queue, [2]string{x, y})
	}
	// A pass seeds and spreads; the next finds the nodes whose kind and
	// text became unique once others were paired. The passes are bounded,
	// so the whole stays linear: what they leave unpaired is a change.
	for pass := 0; pass < maxMatchPasses; pass++ {
		seeds := len(ids)
		ka, kb := a.unique(doneA), b.unique(doneB)
		for _, n := range was.Nodes {
			k := nodeKey{n.Kind, n.Text}
			if x, y := ka[k], kb[k]; x != "" && y != "" {
				pair(x, y)
			}
		}
		if len(ids) == seeds {
			break
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, m := range spread(a.out[p[0]], b.out[p[1]], true) {
				pair(m[0], m[1])
			}
			for _, m := range spread(a.in[p[0]], b.in[p[1]], false) {
				pair(m[0], m[1])
			}
		}
	}
	return ids, len(ids) == len(was.Nodes) && len(ids) == len(is.Nodes) && sameLines(was, is, ids) && sameKinds(a, b, ids)
}

// spread pairs the far ends of two nodes' lines that have the same label
// and are the only line with that label on each side.
func spread(ea, eb []OutlineEdge, out bool) [][2]string {
	far := func(e OutlineEdge) string {
		if out {
			return e.To
		}
		return e.From
	}
	var pairs [][2]string
	if len(ea) <= 8 && len(eb) <= 8 { // most nodes: no maps
		for _, e := range ea {
			if x, y := onlyOne(ea, e.Label, far), onlyOne(eb, e.Label, far); x != "" && y != "" {
				pairs = append(pairs, [2]string{x, y})
			}
		}
		return pairs
	}
	once := func(es []OutlineEdge) map[string]string {
		m := map[string]string{}
		for _, e := range es {
			if _, dup := m[e.Label]; dup {
				m[e.Label] = ""
			} else {
				m[e.Label] = far(e)
			}
		}
		return m
	}
	ma, mb := once(ea), once(eb)
	for _, e := range ea {
		if x, y := ma[e.Label], mb[e.Label]; x != "" && y != "" {
			pairs = append(pairs, [2]string{x, y})
		}
	}
	return pairs
}

// onlyOne is the far end of the one line of es labelled label, "" when
// there is none or more than one.
func onlyOne(es []OutlineEdge, label string, far func(OutlineEdge) string) string {
	found := ""
	for _, e := range es {
		if e.Label == label {
			if found != "" {
				return ""
			}
			found = far(e)
		}
	}
	return found
}

// maxMatchPasses bounds Match's passes.
const maxMatchPasses = 4

type nodeKey struct{ kind, text string }

// side is one outline, indexed.
type side struct {
	nodes   []OutlineNode
	kind    map[string]string
	out, in map[string][]OutlineEdge
}

func newSide(o Outline) *side {
	s := &side{nodes: o.Nodes, kind: make(map[string]string, len(o.Nodes)),
		out: map[string][]OutlineEdge{}, in: map[string][]OutlineEdge{}}
	for _, n := range o.Nodes {
		s.kind[n.ID] = n.Kind
	}
	for _, e := range o.Edges {
		s.out[e.From] = append(s.out[e.From], e)
		s.in[e.To] = append(s.in[e.To], e)
	}
	return s
}

// unique maps each kind and text of the nodes not done to its node, or
// to "" when several have it.
func (s *side) unique(done map[string]bool) map[nodeKey]string {
	m := map[nodeKey]string{}
	for _, n := range s.nodes {
		if done[n.ID] {
			continue
		}
		k := nodeKey{n.Kind, n.Text}
		if _, dup := m[k]; dup {
			m[k] = ""
		} else {
			m[k] = n.ID
		}
	}
	return m
}

func sameKinds(a, b *side, ids map[string]string) bool {
	for x, y := range ids {
		if a.kind[x] != b.kind[y] {
			return false
		}
	}
	return true
}

// sameLines says whether was's lines, renamed by ids, are is's.
func sameLines(was, is Outline, ids map[string]string) bool {
	if len(was.Edges) != len(is.Edges) {
		return false
	}
	renamed := make([]OutlineEdge, len(was.Edges))
	for i, e := range was.Edges {
		from, ok1 := ids[e.From]
		to, ok2 := ids[e.To]
		if !ok1 || !ok2 {
			return false
		}
		renamed[i] = OutlineEdge{From: from, To: to, Label: e.Label}
	}
	mine := slices.Clone(is.Edges)
	slices.SortFunc(renamed, compareEdges)
	slices.SortFunc(mine, compareEdges)
	return slices.EqualFunc(renamed, mine, func(x, y OutlineEdge) bool { return compareEdges(x, y) == 0 })
}

// Renamed is the outline with its node ids renamed by ids; an id ids does
// not have becomes prefix+id, so that it meets none of the new ones.
func (o Outline) Renamed(ids map[string]string, prefix string) Outline {
	name := func(id string) string {
		if n, ok := ids[id]; ok {
			return n
		}
		return prefix + id
	}
	r := Outline{Nodes: make([]OutlineNode, len(o.Nodes)), Edges: make([]OutlineEdge, len(o.Edges))}
	for i, n := range o.Nodes {
		r.Nodes[i] = OutlineNode{ID: name(n.ID), Kind: n.Kind, Text: n.Text}
	}
	for i, e := range o.Edges {
		r.Edges[i] = OutlineEdge{From: name(e.From), To: name(e.To), Label: e.Label}
	}
	slices.SortFunc(r.Nodes, func(a, b OutlineNode) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(r.Edges, compareEdges)
	return r
}
