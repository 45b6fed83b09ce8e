package chart_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

const header = "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments,cli,validate_cli,retries"

// twoPages has a clean first page (Build: start, a tagged step, a decision
// that loops back, an end) and a second page (Deploy) with an unreachable
// step and a node naming an unknown CLI.
const twoPages = header + `
1,Document,,,,,,,,,,Draft,Release,,,,
2,Page,,,,,,,,,,,Build,,,,
3,Terminator,Flowchart Shapes/Containers,2,,,,,,,,,Start,,,,
4,Process,Flowchart Shapes/Containers,2,,,,,,,gemini; NoValidation,,Compile,,,,
5,Process,Flowchart Shapes/Containers,2,,,,,,,,,Is it green?,,,codex,1
6,Terminator,Flowchart Shapes/Containers,2,,,,,,,,,End,,,,
7,Line,,2,,,3,4,None,Arrow,,,,,,,
8,Line,,2,,,4,5,None,Arrow,,,,,,,
9,Line,,2,,,5,6,None,Arrow,,,yes,,,,
10,Line,,2,,,5,4,None,Arrow,,,no,,,,
11,Page,,,,,,,,,,,Deploy,,,,
12,Process,Flowchart Shapes/Containers,11,,,,,,,,,Upload,,gpt,,
13,Process,Flowchart Shapes/Containers,11,,,,,,,,,Announce,,,,
14,Process,Flowchart Shapes/Containers,11,,,,,,,,,Orphan,,,,
15,Process,Flowchart Shapes/Containers,11,,,,,,,,,Orphan's helper,,,,
16,Line,,11,,,12,13,None,Arrow,,,,,,,
17,Line,,11,,,14,15,None,Arrow,,,,,,,
18,Line,,11,,,15,14,None,Arrow,,,,,,,`

func load(t *testing.T, csv string, def types.Defaults) *chart.Chart {
	t.Helper()
	doc, err := document.FromCSV(strings.NewReader(csv))
	require.NoError(t, err)
	return chart.Check(doc, chart.Options{Defaults: def, Names: agent.Names{}})
}

func summary(ds []types.Diagnostic) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Class+" "+strings.Join(d.IDs, ",")+"@"+d.Page)
	}
	return out
}

func TestCheckResolvesEveryNode(t *testing.T) {
	t.Parallel()
	def := types.BuiltinDefaults()
	def.CLI = "aider"
	c := load(t, twoPages, def)
	require.Len(t, c.Nodes, len(c.Doc.Nodes))
	tests := []struct {
		id            string
		role          string
		cli, validate string
		validated     bool
		retries       int
	}{
		{id: "3", role: types.RoleTerminator, cli: "", validate: "", validated: false, retries: 3},
		{id: "4", role: types.RoleProcess, cli: "gemini", validate: "gemini", validated: false, retries: 3},
		// A Process shape with two labelled lines is run as a decision and
		// not validated; its custom data still counts.
		{id: "5", role: types.RoleDecision, cli: "aider", validate: "codex", validated: false, retries: 1},
		{id: "6", role: types.RoleTerminator, cli: "", validate: "", validated: false, retries: 3},
		{id: "12", role: types.RoleProcess, cli: "aider", validate: "aider", validated: true, retries: 3},
		{id: "13", role: types.RoleProcess, cli: "aider", validate: "aider", validated: true, retries: 3},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			i, ok := c.Graph.Index(tt.id)
			require.True(t, ok)
			p := c.Nodes[i]
			require.NotNil(t, p.Node)
			assert.Same(t, &c.Doc.Nodes[i], p.Node, "Nodes is parallel to Doc.Nodes")
			assert.Equal(t, tt.role, p.Role, "role")
			assert.Equal(t, tt.cli, p.CLI, "cli")
			assert.Equal(t, tt.validate, p.ValidateCLI, "validate cli")
			assert.Equal(t, tt.validated, p.Validate, "validate")
			assert.Equal(t, tt.retries, p.Retries, "retries")
		})
	}
}

func TestCheckGathersFindings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		csv   string
		errs  []string
		warns []string
	}{
		{
			name:  "settings and lint findings together",
			csv:   twoPages,
			errs:  []string{"unknown_cli 12@11"},
			warns: []string{"unreachable_node 14,15@11", "loop_without_exit 14,15@11"},
		},
		{
			name: "clean chart has empty, non-nil lists",
			csv: header + `
2,Page,,,,,,,,,,,Main,,,,
3,Process,Flowchart Shapes/Containers,2,,,,,,,,,Only step,,,,`,
		},
		{
			name: "import errors come first, then settings and lint",
			csv: header + `
2,Page,,,,,,,,,,,Main,,,,
3,Terminator,Flowchart Shapes/Containers,2,,,,,,,,,Start,,,,
4,Process,Flowchart Shapes/Containers,2,,,,,,,claude; codex,,Work,,,,
5,Process,Flowchart Shapes/Containers,2,,,,,,,,,A,,,,
6,Process,Flowchart Shapes/Containers,2,,,,,,,,,B,,,,
7,Line,,2,,,3,4,None,Arrow,,,,,,,
8,Line,,2,,,3,5,None,Arrow,,,left,,,,
9,Line,,2,,,4,6,None,Arrow,,,,,,,
10,Line,,2,,,4,5,None,Arrow,,,right,,,,`,
			errs: []string{"unlabeled_branch 4,9@2", "conflicting_cli_tags 4@2", "branching_terminator 3@2"},
		},
		{
			name: "near-miss tag warns",
			csv: header + `
2,Page,,,,,,,,,,,Main,,,,
3,Process,Flowchart Shapes/Containers,2,,,,,,,Geminii,,Work,,,,`,
			warns: []string{"unknown_cli_tag 3@2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := load(t, tt.csv, types.BuiltinDefaults())
			require.NotNil(t, c.Errors)
			require.NotNil(t, c.Warnings)
			assert.Equal(t, append([]string{}, tt.errs...), summary(c.Errors), "errors")
			assert.Equal(t, append([]string{}, tt.warns...), summary(c.Warnings), "warnings")
		})
	}
}

func TestPage(t *testing.T) {
	t.Parallel()
	// Page ids 2 and 1 in that order, and a page titled "1": the selector
	// is tried as an id, then a title, then a number.
	c := &chart.Chart{Doc: &types.Document{Pages: []types.Page{
		{ID: "2", Title: "Build"},
		{ID: "1", Title: "Deploy"},
		{ID: "abc", Title: "3"},
		{ID: "xyz", Title: "Rollback Plan"},
	}}}
	tests := []struct {
		sel     string
		want    string // page id
		wantErr bool
	}{
		{sel: "", want: "2"},
		{sel: "abc", want: "abc"},
		{sel: "1", want: "1"},     // id, not the first page
		{sel: "2", want: "2"},     // id, not the second page
		{sel: "3", want: "abc"},   // title, not the third page
		{sel: "4", want: "xyz"},   // number
		{sel: "build", want: "2"}, // title, any case
		{sel: "DEPLOY", want: "1"},
		{sel: "rollback plan", want: "xyz"},
		{sel: "0", wantErr: true},
		{sel: "5", wantErr: true},
		{sel: "-1", wantErr: true},
		{sel: "Rollback", wantErr: true},
		{sel: "ABC", wantErr: true}, // ids match exactly
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			t.Parallel()
			p, err := c.Page(tt.sel)
			if tt.wantErr {
				require.Error(t, err)
				msg := err.Error()
				assert.Contains(t, msg, tt.sel)
				for _, want := range []string{"Build", "Deploy", "Rollback Plan", "abc", "xyz", "number 4"} {
					assert.Contains(t, msg, want, "the error lists the pages")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.ID)
		})
	}
}

func TestPageNoPages(t *testing.T) {
	t.Parallel()
	c := &chart.Chart{Doc: &types.Document{}}
	for _, sel := range []string{"", "1", "Main"} {
		_, err := c.Page(sel)
		assert.Error(t, err, "selector %q", sel)
	}
}

func TestNormalized(t *testing.T) {
	t.Parallel()
	c := load(t, twoPages, types.BuiltinDefaults())
	// A finding about the whole document is kept on every page.
	c.Warnings = append(c.Warnings, types.Diagnostic{Class: "document_wide"})
	build, err := c.Page("Build")
	require.NoError(t, err)
	deploy, err := c.Page("deploy")
	require.NoError(t, err)
	empty := types.Page{ID: "99", Title: "Nothing here"}

	ids := func(n types.NormalizedDocument) (nodes, edges []string) {
		nodes, edges = []string{}, []string{}
		for _, p := range n.Nodes {
			nodes = append(nodes, p.ID)
		}
		for _, e := range n.Edges {
			edges = append(edges, e.ID)
		}
		return nodes, edges
	}
	tests := []struct {
		name  string
		page  *types.Page
		pages []string
		nodes []string
		edges []string
		warns []string
	}{
		{name: "whole document", page: nil, pages: []string{"2", "11"},
			nodes: []string{"3", "4", "5", "6", "12", "13", "14", "15"},
			edges: []string{"7", "8", "9", "10", "16", "17", "18"},
			warns: []string{"unreachable_node 14,15@11", "loop_without_exit 14,15@11", "document_wide @"}},
		{name: "first page", page: &build, pages: []string{"2"},
			nodes: []string{"3", "4", "5", "6"}, edges: []string{"7", "8", "9", "10"},
			warns: []string{"document_wide @"}},
		{name: "second page", page: &deploy, pages: []string{"11"},
			nodes: []string{"12", "13", "14", "15"}, edges: []string{"16", "17", "18"},
			warns: []string{"unreachable_node 14,15@11", "loop_without_exit 14,15@11", "document_wide @"}},
		{name: "page with nothing on it", page: &empty, pages: []string{"99"},
			nodes: []string{}, edges: []string{}, warns: []string{"document_wide @"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := c.Normalized(tt.page)
			assert.Equal(t, types.FormatVersion, n.FormatVersion)
			assert.Equal(t, "Release", n.Title)
			pages := []string{}
			for _, p := range n.Pages {
				pages = append(pages, p.ID)
			}
			assert.Equal(t, tt.pages, pages)
			nodes, edges := ids(n)
			assert.Equal(t, tt.nodes, nodes)
			assert.Equal(t, tt.edges, edges)
			assert.Equal(t, tt.warns, summary(n.Warnings))

			// inspect --json: arrays are never null.
			b, err := json.Marshal(n)
			require.NoError(t, err)
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(b, &raw))
			for _, key := range []string{"pages", "nodes", "edges", "warnings"} {
				assert.NotEqual(t, "null", string(raw[key]), key)
			}
		})
	}
}

func TestOnPage(t *testing.T) {
	t.Parallel()
	diags := []types.Diagnostic{
		{Class: "a", Page: "p1"},
		{Class: "b", Page: "p2"},
		{Class: "c", Page: ""},
		{Class: "d", Page: "p1"},
	}
	p1, p2, p3 := types.Page{ID: "p1"}, types.Page{ID: "p2"}, types.Page{ID: "p3"}
	tests := []struct {
		name string
		page *types.Page
		want []string
	}{
		{name: "no page: all", page: nil, want: []string{"a", "b", "c", "d"}},
		{name: "p1 and the document's", page: &p1, want: []string{"a", "c", "d"}},
		{name: "p2 and the document's", page: &p2, want: []string{"b", "c"}},
		{name: "page without findings", page: &p3, want: []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := []string{}
			for _, d := range chart.OnPage(diags, tt.page) {
				got = append(got, d.Class)
			}
			assert.Equal(t, tt.want, got)
		})
	}
	out := chart.OnPage([]types.Diagnostic{{Class: "a", Page: "p1"}}, &p2)
	assert.NotNil(t, out, "an empty result is an empty list, for JSON")
	assert.Empty(t, out)
}

// The digest changes with the graph a run walks, not with texts.
func TestDigest(t *testing.T) {
	t.Parallel()
	digest := func(csv, page string) string {
		doc, err := document.FromCSV(strings.NewReader(csv))
		require.NoError(t, err)
		return chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}}).Digest(page)
	}
	base := digest(twoPages, "2")
	assert.Len(t, base, 64)
	assert.Equal(t, base, digest(twoPages, "2"), "stable")
	assert.NotEqual(t, base, digest(twoPages, "11"), "another page")
	assert.Equal(t, base, digest(strings.Replace(twoPages, "Compile", "Compile it all", 1), "2"), "a text edited")
	assert.NotEqual(t, base, digest(strings.Replace(twoPages, ",,,yes,", ",,,Yes!,", 1), "2"), "a label changed")
	assert.NotEqual(t, base, digest(strings.Replace(twoPages, "10,Line,,2,,,5,4,", "10,Line,,2,,,5,3,", 1), "2"), "an edge moved")
}

// A YAML chart's findings say which key to change, whether the import
// rules or lint found them; a Lucid chart's keep Lucid's words.
func TestHintsSpeakTheChartsFormat(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, format, in string) []types.Diagnostic {
		t.Helper()
		doc, err := document.Read("-", format, strings.NewReader(in))
		require.NoError(t, err)
		c := chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}})
		return append(append([]types.Diagnostic{}, c.Errors...), c.Warnings...)
	}
	lucidWords := `(?i)shape|draw|\bline\b|lucid|double-click|export`
	for _, tc := range []struct {
		class, yaml, hint string
	}{
		{"dangling_line", "nodes:\n  - {id: a, next: nope}\n", "next:"},
		{"unlabeled_branch", "nodes:\n  - {id: a, next: [b, c]}\n  - {id: b}\n  - {id: c}\n", "branches:"},
		{"end_with_outgoing_line", "nodes:\n  - {id: s, kind: start, next: e}\n  - {id: e, kind: end, next: x}\n  - {id: x}\n", "kind: process"},
		{"unreachable_node", "nodes:\n  - {id: s, kind: start, next: e}\n  - {id: e, kind: end, next: x}\n  - {id: x}\n", "next:"},
		{"decision_one_branch", "nodes:\n  - {id: a, kind: decision, next: b}\n  - {id: b}\n", "kind: process"},
		{"branching_terminator", "nodes:\n  - {id: s, kind: start, branches: {x: a, y: b}}\n  - {id: a}\n  - {id: b}\n", "kind: decision"},
		{"loop_without_exit", "nodes:\n  - {id: a, next: b}\n  - {id: b, next: a}\n", "branches:"},
		{"fork_without_join", "nodes:\n  - {id: f, parallel: [a, b]}\n  - {id: a, kind: end}\n  - {id: b, kind: end}\n", "next:"},
		{"fork_one_line", "nodes:\n  - {id: f, parallel: [a]}\n  - {id: a}\n", "parallel:"},
		{"parallel_decision", "nodes:\n  - {id: f, kind: decision, metadata: {parallel: true}, branches: {x: a, y: b}}\n  - {id: a}\n  - {id: b}\n", "parallel:"},
		{"fork_shared_step", "nodes:\n  - {id: f, parallel: [a, b]}\n  - {id: a, next: m}\n  - {id: b, next: m}\n  - {id: m, next: j}\n  - {id: j, join: all}\n", "join:"},
	} {
		t.Run(tc.class, func(t *testing.T) {
			t.Parallel()
			diags := check(t, "yaml", tc.yaml)
			i := slices.IndexFunc(diags, func(d types.Diagnostic) bool { return d.Class == tc.class })
			require.GreaterOrEqual(t, i, 0, "%+v", diags)
			assert.Contains(t, diags[i].Hint, tc.hint)
			assert.NotRegexp(t, lucidWords, diags[i].Hint)
		})
	}
	// The same finding in a Lucid chart: a Decision shape with one line.
	diags := check(t, "csv", header+`
1,Document,,,,,,,,,,Draft,D,,,,
2,Page,,,,,,,,,,,P,,,,
3,Decision,Flowchart Shapes/Containers,2,,,,,,,,,Ask,,,,
4,Process,Flowchart Shapes/Containers,2,,,,,,,,,Do,,,,
5,Line,,2,,,3,4,None,Arrow,,,,,,,`)
	i := slices.IndexFunc(diags, func(d types.Diagnostic) bool { return d.Class == "decision_one_branch" })
	require.GreaterOrEqual(t, i, 0, "%+v", diags)
	assert.Contains(t, diags[i].Hint, "change the shape to a Process")
}

// TestCheckResolvesStepKinds: each node's step kind is resolved at load,
// from its role and the key that marks a command, plain nodes (which
// share their settings) included; a command decision's labels are
// checked as its kind's lint says, and only a decision's.
func TestCheckResolvesStepKinds(t *testing.T) {
	t.Parallel()
	const chartYAML = `title: Kinds
nodes:
  - id: start
    kind: start
    text: Start
    next: plan
  - id: plan
    text: Plan the change
    next: test
  - id: test
    text: Run the tests
    command: go test ./...
    branches:
      "0": ok
      "maybe": plan
  - id: ok
    text: Is it ready?
    branches:
      "Yes": build
      "No": plan
  - id: build
    text: Build it
    command: make
    next: done
  - id: done
    kind: end
    text: Done
`
	doc, err := document.FromYAML(strings.NewReader(chartYAML))
	require.NoError(t, err)
	c := chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}})
	want := map[string]types.Step{
		"start": types.StepTerminator, "plan": types.StepProcess, "test": types.StepCommand,
		"ok": types.StepDecision, "build": types.StepCommand, "done": types.StepTerminator,
	}
	for i, n := range c.Nodes {
		assert.Equal(t, want[n.ID], n.Step, "node %s", n.ID)
		assert.Equal(t, want[n.ID], c.Doc.Nodes[i].Step, "node %s: the document's node has it too", n.ID)
	}
	assert.Equal(t, []string{"command_labels test@1"}, summary(c.Errors))
}

// TestGateAgentKeys: an approval gate asks a person, so custom data only
// an agent's step reads does nothing on it: lint warns, naming the node
// and the key; timeout, the terminal's, and max_visits are a gate's own.
func TestGateAgentKeys(t *testing.T) {
	t.Parallel()
	const chartYAML = `title: Gate
nodes:
  - id: start
    kind: start
    next: gate
  - id: gate
    kind: approval
    text: Ship it?
    metadata: {cli: codex, Retries: "2", validate: "false", validate_prompt: check it, model: o3, max_turns: "4", context: none, paths: src/, rollback: attempt, keep_running: "true", timeout: 90s, max_visits: "2", owner: ada}
    branches:
      approved: done
      rejected: done
  - id: done
    kind: end
`
	doc, err := document.FromYAML(strings.NewReader(chartYAML))
	require.NoError(t, err)
	c := chart.Check(doc, chart.Options{Defaults: types.BuiltinDefaults(), Names: agent.Names{}})
	assert.Empty(t, summary(c.Errors))
	var keys []string
	for _, w := range c.Warnings {
		assert.Equal(t, "gate_agent_key", w.Class)
		assert.Equal(t, []string{"gate"}, w.IDs)
		assert.Contains(t, w.Message, "node gate: approval gate: custom data ")
		assert.Contains(t, w.Message, "a gate asks a person")
		keys = append(keys, strings.Split(strings.TrimPrefix(w.Message, "node gate: approval gate: custom data "), " ")[0])
	}
	assert.Equal(t, []string{`"Retries"`, `"cli"`, `"context"`, `"keep_running"`, `"max_turns"`, `"model"`, `"paths"`,
		`"rollback"`, `"validate"`, `"validate_prompt"`}, keys)
}
