package document_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

// yamlCase is one YAML chart and what it must import to. Nil fields are
// not checked.
type yamlCase struct {
	name  string
	in    string
	diags []string // "error CLASS LINE" or "warning CLASS LINE", in order
	msg   string   // a substring of the first finding's message
	roots []string // each page's root, in order
	nodes []string // "ID KIND SHAPE TEXT", in order
	edges []string // "FROM->TO LABEL", in order
	check func(t *testing.T, doc *types.Document)
}

var yamlCases = []yamlCase{
	{
		name: "a fork: parallel: in place of next:, and join:",
		in: `nodes:
  - {id: s, kind: start, text: Start, next: plan}
  - {id: plan, text: Plan, parallel: [a, b]}
  - {id: a, text: A, next: j}
  - {id: b, text: B, next: j}
  - {id: j, text: Join, join: Any, next: e}
  - {id: e, kind: end, text: End}
`,
		diags: []string{},
		nodes: []string{"s terminator Terminator Start", "plan process Process Plan", "a process Process A", "b process Process B",
			"j process Process Join", "e terminator Terminator End"},
		edges: []string{"s->plan ", "plan->a ", "plan->b ", "a->j ", "b->j ", "j->e "},
		check: func(t *testing.T, doc *types.Document) {
			assert.Equal(t, types.Metadata{"parallel": "true"}, doc.Nodes[1].Metadata)
			assert.Equal(t, types.Metadata{"join": "Any"}, doc.Nodes[4].Metadata)
		},
	},
	{
		name: "a fork's branches named; a name equal to the id is no label",
		in: `nodes:
  - {id: plan, text: Plan, parallel: {unit: a, b: b}}
  - {id: a, text: A}
  - {id: b, text: B}
`,
		diags: []string{},
		edges: []string{"plan->a unit", "plan->b "},
	},
	{
		name:  "the same ways out with next: are unlabeled_branch",
		in:    "nodes:\n  - {id: plan, text: Plan, next: [a, b]}\n  - {id: a, text: A}\n  - {id: b, text: B}\n",
		diags: []string{"error unlabeled_branch 2", "error unlabeled_branch 2"},
	},
	{
		name:  "parallel: beside next:",
		in:    "nodes:\n  - {id: plan, text: Plan, parallel: [a], next: b}\n  - {id: a, text: A}\n  - {id: b, text: B}\n",
		diags: []string{"error malformed_yaml 2"},
		msg:   "the node has parallel: (line 2) and next: (line 2)",
	},
	{
		name:  "parallel: beside a parallel key under metadata:",
		in:    "nodes:\n  - {id: plan, text: Plan, parallel: [a, b], metadata: {Parallel: true}}\n  - {id: a, text: A}\n  - {id: b, text: B}\n",
		diags: []string{"error malformed_yaml 2"},
	},
	{
		name:  "parallel: that is not a list",
		in:    "nodes:\n  - {id: plan, text: Plan, parallel: a}\n  - {id: a, text: A}\n",
		diags: []string{"error malformed_yaml 2"},
		msg:   "parallel: is a list of the ids",
	},
	{
		name: "linear without terminators",
		in: `title: Two steps
nodes:
  - id: a
    text: Do A
    next: b
  - id: b
    text: Do B
`,
		diags: []string{},
		roots: []string{"a"},
		nodes: []string{"a process Process Do A", "b process Process Do B"},
		edges: []string{"a->b "},
		check: func(t *testing.T, doc *types.Document) {
			assert.Equal(t, "Two steps", doc.Title)
			assert.Equal(t, "yaml", doc.Format)
			assert.Equal(t, []types.Page{{ID: "1", Title: "", Root: "a"}}, doc.Pages)
			assert.Equal(t, 3, doc.Nodes[0].Line)
			assert.Equal(t, 5, doc.Edges[0].Line)
			assert.Equal(t, "L5", doc.Edges[0].ID)
		},
	},
	{
		name: "kinds from kind:, shape: and the ways out",
		in: `nodes:
  - {id: s, kind: start, text: Start, next: q}
  - id: q
    text: Ready?
    branches: {"Yes": p, "No": d}
  - {id: p, kind: subprocess, text: Ship, next: e}
  - {id: d, shape: Data, text: Data, next: e}
  - {id: e, kind: END, text: End}
`,
		diags: []string{},
		roots: []string{"s"},
		nodes: []string{"s terminator Terminator Start", "q decision Decision Ready?", "p subprocess Predefined process Ship",
			"d other Data Data", "e terminator Terminator End"},
		edges: []string{"s->q ", "q->p Yes", "q->d No", "p->e ", "d->e "},
	},
	{
		name: "the first node starts when every node has a way in",
		in: `nodes:
  - {id: work, text: Work, next: check}
  - id: check
    text: Done?
    branches: {"No": work, "Yes": work}
`,
		diags: []string{},
		roots: []string{"work"},
	},
	{
		name: "kind: start wins over a node nothing leads to",
		in: `nodes:
  - {id: note, text: Orphan}
  - {id: s, kind: start, text: Start, next: a}
  - {id: a, text: A}
`,
		diags: []string{},
		roots: []string{"s"},
	},
	{
		name: "two starts are ambiguous",
		in: `nodes:
  - {id: s1, kind: start, next: a}
  - {id: s2, kind: start, next: a}
  - {id: a, text: A}
`,
		diags: []string{"error ambiguous_root 3"},
		msg:   "2 nodes marked kind: start",
	},
	{
		name: "two nodes with no way in are ambiguous, as in Lucid",
		in: `nodes:
  - {id: a, text: A, next: c}
  - {id: b, text: B, next: c}
  - {id: c, text: C}
`,
		diags: []string{"error ambiguous_root 2"},
	},
	{
		name: "pages",
		in: `title: Release
pages:
  - id: build
    title: Build
    nodes:
      - {id: b1, text: Build, next: b2}
      - {id: b2, text: Test}
  - title: Deploy
    nodes:
      - {id: d1, text: Deploy}
`,
		diags: []string{},
		roots: []string{"b1", "d1"},
		check: func(t *testing.T, doc *types.Document) {
			assert.Equal(t, []types.Page{{ID: "build", Title: "Build", Root: "b1"}, {ID: "2", Title: "Deploy", Root: "d1"}}, doc.Pages)
			assert.Equal(t, "2", doc.Nodes[2].Page)
		},
	},
	{
		name: "tags, metadata and defaults",
		in: `defaults:
  retries: 2
  cli: gemini
  tags: [NoValidation]
nodes:
  - {id: s, kind: start, next: a}
  - id: a
    text: "  A  "
    tags: "codex; Fast, "
    metadata: {Retries: 5, timeout: 15m, empty: "", "null":}
    next: b
  - id: b
    text: B
    tags: [novalidation]
`,
		diags: []string{},
		check: func(t *testing.T, doc *types.Document) {
			assert.Empty(t, doc.Nodes[0].Metadata, "a terminator gets no defaults")
			assert.Empty(t, doc.Nodes[0].Tags)
			a := doc.Nodes[1]
			assert.Equal(t, "A", a.Text)
			assert.Equal(t, []string{"codex", "Fast", "NoValidation"}, a.Tags)
			assert.Equal(t, types.Metadata{"Retries": "5", "timeout": "15m", "cli": "gemini"}, a.Metadata)
			b := doc.Nodes[2]
			assert.Equal(t, []string{"novalidation"}, b.Tags)
			assert.Equal(t, types.Metadata{"retries": "2", "cli": "gemini"}, b.Metadata)
		},
	},
	{
		name:  "multi-line text and hostile text",
		in:    "nodes:\n  - id: \"a\\\"b\"\n    text: |\n      Line one\n      <script>alert(1)</script> --> \"x\"\n",
		diags: []string{},
		nodes: []string{"a\"b process Process Line one\n<script>alert(1)</script> --> \"x\""},
	},
	{
		name:  "next to an unknown id is a dangling line",
		in:    "nodes:\n  - {id: a, next: nope}\n",
		diags: []string{"error dangling_line 2"},
		msg:   `names "nope", which is not in the chart`,
		check: func(t *testing.T, doc *types.Document) {
			assert.Equal(t, "1", doc.Errors[0].Page)
			assert.Contains(t, doc.Errors[0].Hint, "drag the line", "the reader leaves hints to Localize")
			document.Localize(doc.Format, doc.Errors)
			assert.Contains(t, doc.Errors[0].Hint, "next:")
		},
	},
	{
		name: "next across pages is a dangling line",
		in: `pages:
  - {id: p1, nodes: [{id: a, next: b}]}
  - {id: p2, nodes: [{id: b}]}
`,
		diags: []string{"error dangling_line 2"},
	},
	{
		name: "unlabeled and duplicate branches",
		in: `nodes:
  - id: a
    next: [b, c]
  - id: d
    branches:
      "Yes": b
      " yes ": c
  - {id: b, next: d}
  - {id: c}
`,
		diags: []string{"error unlabeled_branch 3", "error unlabeled_branch 3", "error duplicate_branch_label 7"},
		check: func(t *testing.T, doc *types.Document) {
			ids := []string{}
			for _, e := range doc.Edges {
				ids = append(ids, e.ID)
			}
			assert.Equal(t, []string{"L3", "L3.2", "L6", "L7", "L8"}, ids)
		},
	},
	{
		name:  "next: and branches: on one node",
		in:    "nodes:\n  - id: a\n    next: b\n    branches: {\"Yes\": c}\n  - {id: b}\n  - {id: c}\n",
		diags: []string{"error malformed_yaml 4"},
		msg:   "line 4: the node has next: (line 3) and branches: (line 4); list every way out under branches:",
	},
	{
		name:  "a repeated way out is a duplicate line",
		in:    "nodes:\n  - id: a\n    next: [b, b]\n  - {id: b}\n",
		diags: []string{"warning duplicate_line 3"},
		edges: []string{"a->b "},
	},
	{
		name:  "an edge id that a node has is skipped",
		in:    "nodes:\n  - {id: a, next: L2}\n  - {id: L2}\n",
		diags: []string{},
		check: func(t *testing.T, doc *types.Document) {
			assert.Equal(t, "L2.2", doc.Edges[0].ID)
		},
	},
	{
		name:  "the ways out of one line are numbered on, past an id a node has",
		in:    "nodes:\n  - {id: a, parallel: [b, c, d, L2.3, e]}\n  - {id: b}\n  - {id: c}\n  - {id: d}\n  - {id: L2.3}\n  - {id: e}\n",
		diags: []string{},
		check: func(t *testing.T, doc *types.Document) {
			ids := []string{}
			for _, e := range doc.Edges {
				ids = append(ids, e.ID)
			}
			assert.Equal(t, []string{"L2", "L2.2", "L2.4", "L2.5", "L2.6"}, ids)
		},
	},
	{name: "empty file", in: "", diags: []string{"error empty_chart 0"}},
	{name: "only comments", in: "# nothing\n", diags: []string{"error empty_chart 0"}},
	{name: "empty nodes", in: "nodes: []\n", diags: []string{"error empty_chart 0"}},
	{name: "no nodes key", in: "title: x\n", diags: []string{"error malformed_yaml 1"}, msg: "no nodes: list"},
	{name: "not a mapping", in: "- a\n- b\n", diags: []string{"error malformed_yaml 1"}},
	// The list the misplaced key breaks starts on line 2.
	{name: "syntax error", in: "nodes:\n  - id: a\n   text: b\n", diags: []string{"error malformed_yaml 2"}, msg: "line 2: not YAML: did not find expected '-' indicator"},
	{name: "tab indentation", in: "nodes:\n\t- id: a\n", diags: []string{"error malformed_yaml 2"}},
	{name: "two documents", in: "nodes: [{id: a}]\n---\nnodes: []\n", diags: []string{"error malformed_yaml 2"}},
	{
		name:  "unknown keys name their line",
		in:    "title: t\nnodes:\n  - id: a\n    Text: hi\n    nxt: b\n  - {id: b}\ncolor: red\n",
		diags: []string{"error malformed_yaml 4", "error malformed_yaml 5", "error malformed_yaml 7"},
		msg:   `line 4: unknown key "Text" in a node; did you mean text?`,
	},
	{
		name:  "bad values",
		in:    "nodes:\n  - id: a\n    kind: loop\n    metadata: {retries: [1]}\n    branches: [b]\n  - {text: no id}\n  - [x]\n",
		diags: []string{"error malformed_yaml 3", "error malformed_yaml 4", "error malformed_yaml 5", "error malformed_yaml 6", "error malformed_yaml 7"},
	},
	{
		name:  "duplicate ids and keys",
		in:    "nodes:\n  - {id: a, text: x, text: y}\n  - {id: a}\n",
		diags: []string{"error malformed_yaml 2", "error malformed_yaml 3"},
		msg:   "twice (first on line 2)",
	},
	{name: "merge keys", in: "nodes:\n  - &n {id: a}\n  - {<<: *n, id: b}\n", diags: []string{"error malformed_yaml 3"}, msg: "merge keys"},
	{
		name:  "paths as a list",
		in:    "nodes:\n  - id: a\n    metadata: {Paths: [src/, \"!src/gen/\", 3]}\n",
		diags: []string{},
		check: func(t *testing.T, doc *types.Document) {
			assert.Equal(t, types.Metadata{"Paths": "src/\n!src/gen/\n3"}, doc.Nodes[0].Metadata)
		},
	},
	{name: "paths as an empty list", in: "nodes:\n  - id: a\n    metadata: {paths: []}\n", diags: []string{"error malformed_yaml 3"}, msg: "the list has no glob"},
	{name: "paths list of lists", in: "nodes:\n  - id: a\n    metadata: {paths: [[a]]}\n", diags: []string{"error malformed_yaml 3"}, msg: "metadata paths"},
	{
		name:  "aliases are followed",
		in:    "defaults: &d {retries: 1}\nnodes:\n  - id: a\n    metadata: *d\n",
		diags: []string{},
		check: func(t *testing.T, doc *types.Document) {
			assert.Equal(t, types.Metadata{"retries": "1"}, doc.Nodes[0].Metadata)
		},
	},
	{
		// Each alias reads the anchored node again: its two mistakes are
		// reported once each, not once per alias up to the limit.
		name:  "a mistake reached through aliases is reported once",
		in:    "nodes:\n  - &n {id: a, txt: A}\n" + strings.Repeat("  - *n\n", 60),
		diags: []string{"error malformed_yaml 2", "error malformed_yaml 2"},
		msg:   `line 2: unknown key "txt" in a node; did you mean text?`,
		check: func(t *testing.T, doc *types.Document) {
			assert.Contains(t, doc.Errors[1].Message, `line 2: id "a" is used again`)
		},
	},
	{
		name:  "numbers and booleans are text as written",
		in:    "nodes:\n  - {id: 3, text: 1.50, metadata: {validate: no, timeout: 0x10}}\n",
		diags: []string{},
		nodes: []string{"3 process Process 1.50"},
		check: func(t *testing.T, doc *types.Document) {
			assert.Equal(t, types.Metadata{"validate": "no", "timeout": "0x10"}, doc.Nodes[0].Metadata)
		},
	},
}

func TestFromYAML(t *testing.T) {
	t.Parallel()
	for _, tc := range yamlCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc, err := document.FromYAML(strings.NewReader(tc.in))
			require.NoError(t, err)
			checkDocument(t, doc, nil)
			var diags []string
			for _, d := range doc.Errors {
				diags = append(diags, "error "+d.Class+" "+strconv.Itoa(d.Line))
			}
			for _, d := range doc.Warnings {
				diags = append(diags, "warning "+d.Class+" "+strconv.Itoa(d.Line))
			}
			if tc.diags != nil {
				assert.Equal(t, tc.diags, nonNil(diags), "findings: %+v %+v", doc.Errors, doc.Warnings)
			}
			if tc.msg != "" {
				all := append(append([]types.Diagnostic{}, doc.Errors...), doc.Warnings...)
				require.NotEmpty(t, all)
				assert.Contains(t, all[0].Message, tc.msg)
				assert.NotEmpty(t, all[0].Hint)
			}
			if tc.roots != nil {
				var roots []string
				for _, p := range doc.Pages {
					roots = append(roots, p.Root)
				}
				assert.Equal(t, tc.roots, roots)
			}
			if tc.nodes != nil {
				var nodes []string
				for _, n := range doc.Nodes {
					nodes = append(nodes, n.ID+" "+n.Kind+" "+n.Shape+" "+n.Text)
				}
				assert.Equal(t, tc.nodes, nodes)
			}
			if tc.edges != nil {
				var edges []string
				for _, e := range doc.Edges {
					edges = append(edges, e.From+"->"+e.To+" "+e.Label)
				}
				assert.Equal(t, tc.edges, edges)
			}
			if tc.check != nil {
				tc.check(t, doc)
			}
		})
	}
}

func TestDetectYAML(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, head, want string }{
		{"c.yaml", "", "yaml"},
		{"c.YML", "Id,Name", "yaml"},
		{"-", "title: Build, test, ship\nnodes: []", "yaml"},
		{"-", "\ufeff# a chart\n", "yaml"},
		{"-", "---\n", "yaml"},
		{"-", "nodes:\n", "yaml"},
		{"-", "Id,Name,Page ID\n", "csv"},
		{"-", "Id:x,Name\n", "csv"},
		{"-", "{\"pages\": []}", "json"},
		{"-", "hello\n", ""},
	} {
		assert.Equal(t, tc.want, document.Detect(tc.path, []byte(tc.head)), "%s %q", tc.path, tc.head)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// A fork of 20,000 ways out written on one line (parallel: [b0, b1, …])
// reads in linear time: each way's id (L3, L3.2, …) is not searched for
// again from L3.2.
func TestYAMLOneLineOfManyWays(t *testing.T) {
	t.Parallel()
	const n = 20000
	var b strings.Builder
	b.WriteString("nodes:\n  - {id: start, kind: start, next: fork}\n  - {id: fork, parallel: [")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "b%d", i)
	}
	b.WriteString("]}\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: b%d, next: end}\n", i)
	}
	b.WriteString("  - {id: end, kind: end}\n")
	start := time.Now()
	doc, err := document.FromYAML(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Empty(t, doc.Errors)
	require.Len(t, doc.Edges, 2*n+1)
	assert.Equal(t, "L3", doc.Edges[1].ID)
	assert.Equal(t, fmt.Sprintf("L3.%d", n), doc.Edges[n].ID)
}
