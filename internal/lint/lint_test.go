package lint_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/internal/lint"
	"github.com/dtree-dev/dtree/types"
)

// chart builds a document. nodes is a space-separated list of
// "id[:t|:d][@page]" (t a terminator, d a Decision shape, page "p1" when
// not given); edges are "from->to" or "from->to:Label". Each page's root is
// found as the importer does: its one node with no incoming line,
// self-loops aside.
func chart(t *testing.T, nodes string, edges ...string) *types.Document {
	t.Helper()
	doc := &types.Document{}
	for i, spec := range strings.Fields(nodes) {
		spec, page, ok := strings.Cut(spec, "@")
		if !ok {
			page = "p1"
		}
		id, k, _ := strings.Cut(spec, ":")
		kind, shape := types.KindProcess, "Process"
		switch k {
		case "t":
			kind, shape = types.KindTerminator, "Terminator"
		case "d":
			kind, shape = types.KindDecision, "Decision"
		case "":
		default:
			require.FailNow(t, "bad node spec", spec)
		}
		if !slices.ContainsFunc(doc.Pages, func(p types.Page) bool { return p.ID == page }) {
			doc.Pages = append(doc.Pages, types.Page{ID: page, Title: "Page " + page})
		}
		doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: page, Kind: kind, Shape: shape, Text: "step " + id, Line: i + 2})
	}
	pageOf := map[string]string{}
	for _, n := range doc.Nodes {
		pageOf[n.ID] = n.Page
	}
	entered := map[string]bool{}
	for i, spec := range edges {
		ends, label, _ := strings.Cut(spec, ":")
		from, to, ok := strings.Cut(ends, "->")
		require.True(t, ok, "bad edge spec %q", spec)
		require.Equal(t, pageOf[from], pageOf[to], "edge %q crosses pages", spec)
		doc.Edges = append(doc.Edges, types.Edge{ID: "e" + strconv.Itoa(i+1), Page: pageOf[from], From: from, To: to, Label: label})
		if from != to {
			entered[to] = true
		}
	}
	for i := range doc.Pages {
		var roots []string
		for _, n := range doc.Nodes {
			if n.Page == doc.Pages[i].ID && !entered[n.ID] {
				roots = append(roots, n.ID)
			}
		}
		if len(roots) == 1 {
			doc.Pages[i].Root = roots[0]
		}
	}
	return doc
}

// summary writes each finding as "class ids…@page", in order.
func summary(ds []types.Diagnostic) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Class+" "+strings.Join(d.IDs, ",")+"@"+d.Page)
	}
	return out
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes string
		edges []string
		errs  []string
		warns []string
	}{
		{
			name:  "clean chart with a loop that has an exit",
			nodes: "S:t a q:d E:t",
			edges: []string{"S->a", "a->q", "q->E:Yes", "q->a:No"},
		},
		{
			name:  "single node",
			nodes: "a",
		},
		{
			name:  "start that branches",
			nodes: "S:t a b",
			edges: []string{"S->a:one", "S->b:two"},
			errs:  []string{"branching_terminator S@p1"},
		},
		{
			name:  "start with one line is fine",
			nodes: "S:t a E:t",
			edges: []string{"S->a", "a->E"},
		},
		{
			name:  "start that branches on a page with two starts",
			nodes: "S:t T:t a b",
			edges: []string{"S->a:one", "S->b:two", "T->a"},
			errs:  []string{"branching_terminator S@p1"},
		},
		{
			name:  "end with an outgoing line",
			nodes: "S:t a E:t b",
			edges: []string{"S->a", "a->E", "E->b"},
			// A run stops at E, so b, behind it, never runs.
			warns: []string{"end_with_outgoing_line E@p1", "unreachable_node b@p1"},
		},
		{
			name:  "end with two outgoing lines is a warning, not a branching start",
			nodes: "S:t a E:t b c",
			edges: []string{"S->a", "a->E", "E->b:x", "E->c:y"},
			warns: []string{"end_with_outgoing_line E@p1", "unreachable_node b,c@p1"},
		},
		{
			name:  "second start on a page without a single root is not an end",
			nodes: "S:t T:t a",
			edges: []string{"S->a", "T->a"},
		},
		{
			name:  "end with only incoming lines",
			nodes: "S:t a E1:t E2:t",
			edges: []string{"S->a", "a->E1:ok", "a->E2:fail"},
		},
		{
			name:  "unreachable nodes in chart order",
			nodes: "S:t x a y E:t",
			edges: []string{"S->a", "a->E", "x->y", "y->x:again", "y->a:done"},
			warns: []string{"unreachable_node x,y@p1"},
		},
		{
			name:  "unreachable island that loops",
			nodes: "S:t a x y",
			edges: []string{"S->a", "x->y", "y->x"},
			warns: []string{"unreachable_node x,y@p1", "loop_without_exit x,y@p1"},
		},
		{
			name:  "one unreachable warning per page",
			nodes: "S:t a x u@p2 v@p2 w@p2 y@p2",
			edges: []string{"S->a", "x->a", "u->v", "w->y", "y->w"},
			// p1 has two nodes without incoming lines (S, x): no single
			// start, so nothing there can be called unreachable.
			warns: []string{"unreachable_node w,y@p2", "loop_without_exit w,y@p2"},
		},
		{
			name:  "unreachable on two pages",
			nodes: "S:t a b c x@p2 y@p2 z@p2 w@p2",
			edges: []string{"S->a", "b->c", "c->b", "x->y", "z->w", "w->z:back", "w->y:on"},
			warns: []string{"unreachable_node b,c@p1", "unreachable_node z,w@p2", "loop_without_exit b,c@p1"},
		},
		{
			name:  "loop without exit",
			nodes: "S:t a b c",
			edges: []string{"S->a", "a->b", "b->c", "c->b"},
			warns: []string{"loop_without_exit b,c@p1"},
		},
		{
			name:  "self-loop without exit",
			nodes: "S:t a",
			edges: []string{"S->a", "a->a"},
			warns: []string{"loop_without_exit a@p1"},
		},
		{
			name:  "self-loop with an exit",
			nodes: "S:t a E:t",
			edges: []string{"S->a", "a->a:again", "a->E:done"},
		},
		{
			name:  "loop through an end terminator is not trapping",
			nodes: "S:t a E:t",
			edges: []string{"S->a", "a->E", "E->a"},
			warns: []string{"end_with_outgoing_line E@p1"},
		},
		{
			name:  "end terminator with a self-loop",
			nodes: "S:t a E:t",
			edges: []string{"S->a", "a->E", "E->E"},
			warns: []string{"end_with_outgoing_line E@p1"},
		},
		{
			name:  "decision shape with one branch",
			nodes: "S:t q:d E:t",
			edges: []string{"S->q", "q->E:Yes"},
			warns: []string{"decision_one_branch q@p1"},
		},
		{
			name:  "decision shape with two branches",
			nodes: "S:t q:d a E:t",
			edges: []string{"S->q", "q->a:Yes", "q->E:No", "a->E"},
		},
		{
			name:  "decision shape with no branch",
			nodes: "S:t q:d",
			edges: []string{"S->q"},
		},
		{
			name:  "process shape with one line is not a one-branch decision",
			nodes: "S:t a E:t",
			edges: []string{"S->a", "a->E"},
		},
		{
			name:  "decision shape with one branch and a self-loop decides",
			nodes: "S:t q:d E:t",
			edges: []string{"S->q", "q->q:again", "q->E:done"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := graph.New(chart(t, tt.nodes, tt.edges...))
			errs, warns := lint.Check(g)
			assert.Equal(t, append([]string{}, tt.errs...), summary(errs), "errors")
			assert.ElementsMatch(t, append([]string{}, tt.warns...), summary(warns), "warnings")
		})
	}
}

// Each finding names where to look in the file and how to fix it.
func TestCheckFindingsPointAtTheNode(t *testing.T) {
	t.Parallel()
	doc := chart(t, "S:t q:d a E:t x",
		"S->q:x", "S->E:y", "q->a:Yes", "a->a", "E->a",
	)
	// x has no incoming line either; the importer would call the root
	// ambiguous, but lint takes the root it is given.
	doc.Pages[0].Root = "S"
	errs, warns := lint.Check(graph.New(doc))
	lines := map[string]int{}
	for _, n := range doc.Nodes {
		lines[n.ID] = n.Line
	}
	all := append(append([]types.Diagnostic{}, errs...), warns...)
	require.Equal(t, []string{"branching_terminator", "end_with_outgoing_line", "unreachable_node", "loop_without_exit", "decision_one_branch"},
		func() []string {
			var c []string
			for _, d := range all {
				c = append(c, d.Class)
			}
			return c
		}())
	wantIDs := map[string][]string{
		"branching_terminator":   {"S"},
		"end_with_outgoing_line": {"E"},
		"unreachable_node":       {"x"},
		"loop_without_exit":      {"a"},
		"decision_one_branch":    {"q"},
	}
	for _, d := range all {
		assert.Equal(t, wantIDs[d.Class], d.IDs, d.Class)
		assert.Equal(t, d.IDs[0], d.ID, d.Class)
		assert.Equal(t, "p1", d.Page, d.Class)
		assert.Equal(t, lines[d.ID], d.Line, d.Class)
		assert.NotEmpty(t, d.Message, d.Class)
		assert.NotEmpty(t, d.Hint, d.Class)
	}
}

// A NUL byte in anything a node hands its agent is an error naming the
// node: it passed lint, then every attempt failed with "fork/exec:
// invalid argument". Other control characters pass.
func TestNULInText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(doc *types.Document)
		want string // the error's message, in part; "" for none
	}{
		{"text", func(d *types.Document) { d.Nodes[1].Text = "run\x00it" }, `node a "run\x00it" has a NUL byte (\0) in its text`},
		{"id", func(d *types.Document) { d.Nodes[1].ID = "a\x00" }, "in its id"},
		{"tag", func(d *types.Document) { d.Nodes[1].Tags = []string{"ok", "x\x00"} }, "in a tag"},
		{"metadata", func(d *types.Document) { d.Nodes[1].Metadata = types.Metadata{"model": "m\x00"} }, `in custom data "model"`},
		{"label", func(d *types.Document) { d.Edges[2].Label = "Ye\x00s" }, "in the label of its line e3"},
		{"other controls pass", func(d *types.Document) { d.Nodes[1].Text = "tab\tbell\aesc\x1b[0m del\x7f" }, ""},
	}
	for _, tt := range tests {
		doc := chart(t, "S:t a q:d E:t", "S->a", "a->q", "q->E:Yes", "q->a:No")
		tt.edit(doc)
		for i := range doc.Edges { // an id edited above
			if doc.Edges[i].To == "a" && doc.Nodes[1].ID != "a" {
				doc.Edges[i].To = doc.Nodes[1].ID
			}
			if doc.Edges[i].From == "a" && doc.Nodes[1].ID != "a" {
				doc.Edges[i].From = doc.Nodes[1].ID
			}
		}
		errs, _ := lint.Check(graph.New(doc))
		var nul []types.Diagnostic
		for _, d := range errs {
			if d.Class == "nul_in_text" {
				nul = append(nul, d)
			}
		}
		if tt.want == "" {
			assert.Empty(t, nul, tt.name)
			continue
		}
		require.Len(t, nul, 1, tt.name)
		want := doc.Nodes[1].ID
		if tt.name == "label" {
			want = "q"
		}
		assert.Equal(t, []string{want}, nul[0].IDs, tt.name)
		assert.Contains(t, nul[0].Message, tt.want, tt.name)
		assert.NotEmpty(t, nul[0].Hint, tt.name)
	}
}
