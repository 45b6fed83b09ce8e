package export_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// mermaidNorm is normalize as a Mermaid chart keeps it: page titles are
// Mermaid's (a front matter title, a Markdown heading), a node of kind
// other is a process step, and custom data keys have _ for spaces.
func mermaidNorm(doc *types.Document) norm {
	d := *doc
	d.Pages = slices.Clone(doc.Pages)
	for i := range d.Pages {
		d.Pages[i].Title = ""
	}
	d.Nodes = asKeyedSteps(doc.Nodes)
	n := normalize(&d, true)
	for i := range n.Pages {
		n.Pages[i] = strings.TrimPrefix(n.Pages[i], "Mermaid "+fmt.Sprint(i+1))
	}
	return n
}

// toMermaid writes doc as a Mermaid chart and reads it back, checking
// that reading adds no error or new warning.
func toMermaid(t *testing.T, doc *types.Document) (*types.Document, []string, string) {
	t.Helper()
	var buf bytes.Buffer
	dropped, err := export.MermaidChart(&buf, doc)
	require.NoError(t, err)
	back, err := document.Read("-", "mermaid", bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Empty(t, back.Errors, "Mermaid written:\n%s", buf.String())
	for _, w := range back.Warnings {
		require.True(t, slices.ContainsFunc(doc.Warnings, func(d types.Diagnostic) bool { return d.Class == w.Class }),
			"read back with %s %s:\n%s", w.Class, w.Message, buf.String())
	}
	return back, dropped, buf.String()
}

// TestMermaidChartRoundTrip writes every clean chart as a Mermaid chart
// and reads it back (csv -> mermaid -> yaml is csv -> yaml), ids,
// variables and context included, and a chart through YAML and back
// (mermaid -> yaml -> mermaid -> yaml).
func TestMermaidChartRoundTrip(t *testing.T) {
	t.Parallel()
	for name, doc := range cleanCharts(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			back, dropped, out := toMermaid(t, doc)
			back = dropAddedStarts(t, doc, back, dropped)
			assert.Equal(t, mermaidNorm(doc), mermaidNorm(back), "through Mermaid:\n%s", out)
			var vars []types.Var // a Mermaid chart's variables have values
			for _, v := range doc.Vars {
				if v.HasDefault {
					vars = append(vars, v)
				}
			}
			assert.Equal(t, vars, back.Vars, "variables")
			assert.Equal(t, doc.Metadata["context"], back.Metadata["context"], "context")
			if len(back.Nodes) == len(doc.Nodes) {
				for i := range doc.Nodes {
					assert.Equal(t, doc.Nodes[i].ID, back.Nodes[i].ID, "ids are kept")
				}
			}
			viaYAML, _ := convert(t, back, "yaml")
			again, dropped2, _ := toMermaid(t, viaYAML)
			again = dropAddedStarts(t, viaYAML, again, dropped2)
			yaml2, _ := convert(t, again, "yaml")
			assert.Equal(t, normalize(viaYAML, true), normalize(yaml2, true), "Mermaid -> YAML -> Mermaid -> YAML")
		})
	}
}

// hostileTexts are texts that could end a Mermaid label or comment, start
// a statement, a directive or a shell command, if written as they are.
var hostileTexts = []string{
	`a "quoted" ] ) } | text`,
	"`backticks` ```fence``` and **bold**",
	"$(rm -rf /) ; `id` && echo pwned",
	"%%{init: {'theme': 'dark'}}%% and %% a comment",
	"A --> B[Injected] --> C",
	"end\nsubgraph x\nclick A call alert()",
	"line one\n\n  indented two  \n\tthree\n",
	"#quot; #35; &amp; &lt;b&gt; <b>bold</b> <br> #60;",
	"\"\n---\ntitle: x\n---\n",
	"   ",
	"unicode é 中文 \u2028 \u2029 \u0085 tab\there",
	"bad \x01 byte \xff end",
}

// hostileChart is a chart whose ids, texts, labels, custom data, tags,
// variables and title are text.
func hostileChart(text string) *types.Document {
	return &types.Document{Title: text, Pages: []types.Page{{ID: "p 1", Root: "start node"}}, Nodes: []types.Node{
		{ID: "start node", Page: "p 1", Kind: types.KindTerminator, Text: "Start"},
		{ID: "end", Page: "p 1", Kind: types.KindProcess, Text: text, Tags: []string{"x&y", "50%"},
			Metadata: types.Metadata{"cli": text, "command": text, "validate_prompt": "ok"}},
		{ID: "a-->b", Page: "p 1", Kind: types.KindDecision, Text: text},
		{ID: "%%{init}%%", Page: "p 1", Kind: types.KindSubprocess, Text: "sub"},
		{ID: "end_", Page: "p 1", Kind: types.KindTerminator, Text: "End"},
		{ID: "<" + text + ">", Page: "p 1", Kind: types.KindTerminator, Text: "Other end"}},
		Edges: []types.Edge{{ID: "e1", Page: "p 1", From: "start node", To: "end"}, {ID: "e2", Page: "p 1", From: "end", To: "a-->b", Label: text},
			{ID: "e3", Page: "p 1", From: "a-->b", To: "%%{init}%%", Label: "yes"}, {ID: "e4", Page: "p 1", From: "a-->b", To: "<" + text + ">", Label: "no"},
			{ID: "e5", Page: "p 1", From: "%%{init}%%", To: "end_"}},
		Vars:     []types.Var{{Name: "x", Default: text, HasDefault: true}, {Name: "empty", Default: "", HasDefault: true}},
		Metadata: map[string]string{"context": "previous"}}
}

// TestMermaidChartHostileText: every hostile text comes back as the
// chart holds it (trimmed, as every reader trims a text), in ids, labels,
// custom data, tags, variables and the title.
func TestMermaidChartHostileText(t *testing.T) {
	t.Parallel()
	for _, text := range hostileTexts {
		t.Run(text, func(t *testing.T) {
			t.Parallel()
			doc := hostileChart(text)
			back, _, out := toMermaid(t, doc)
			valid := strings.ToValidUTF8(text, "\uFFFD")
			trimmed := strings.TrimSpace(valid)
			for _, line := range strings.Split(out, "\n") {
				// Nothing of the text is written as it is where Mermaid
				// would read it: in a comment, a label, the front matter.
				assert.NotContains(t, line, "%%{", "no directive")
				if strings.TrimSpace(line) == "---" || strings.HasPrefix(line, "title:") {
					continue
				}
				assert.False(t, strings.Count(line, `"`)%2 == 1 && !strings.Contains(line, "%% dtree:"), "a quote left open: %q", line)
			}
			if trimmed == "" {
				return // a text of spaces: no node of that id (YAML's rule too)
			}
			require.Len(t, back.Nodes, len(doc.Nodes), out)
			for i, n := range doc.Nodes {
				assert.Equal(t, strings.ToValidUTF8(n.ID, "\uFFFD"), back.Nodes[i].ID)
				assert.Equal(t, n.Kind, back.Nodes[i].Kind)
			}
			assert.Equal(t, trimmed, back.Title)
			assert.Equal(t, trimmed, back.Nodes[1].Text)
			assert.Equal(t, valid, back.Nodes[1].Metadata["cli"], "custom data byte for byte")
			assert.Equal(t, valid, back.Nodes[1].Metadata["command"])
			assert.Equal(t, []string{"x&y", "50%"}, back.Nodes[1].Tags)
			require.Len(t, back.Edges, 5)
			assert.Equal(t, trimmed, back.Edges[1].Label)
			assert.Equal(t, []types.Var{{Name: "empty", Default: "", HasDefault: true}, {Name: "x", Default: valid, HasDefault: true}}, back.Vars)
			assert.Equal(t, "previous", back.Metadata["context"])
		})
	}
}

// TestMermaidChartHugeText: a 1 MB label and command come back whole.
func TestMermaidChartHugeText(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x\"]%` ", 1<<20/6)
	doc := hostileChart(big)
	back, _, _ := toMermaid(t, doc)
	require.Len(t, back.Nodes, len(doc.Nodes))
	assert.Equal(t, strings.TrimSpace(big), back.Nodes[1].Text)
	assert.Equal(t, big, back.Nodes[1].Metadata["command"])
}

// TestMermaidChartIDs: ids Mermaid takes as written are kept as they are;
// the others are written under a safe id and an id line, and read back.
func TestMermaidChartIDs(t *testing.T) {
	t.Parallel()
	ids := []string{"A", "n1", "1", "0_1", "End", "end", "style", "click", "default", "a b", "a-b", "a:b", "é", "n_end", "a_b", "a b_2", "", "x.y"}
	doc := &types.Document{Pages: []types.Page{{ID: "1", Root: "A"}}}
	for _, id := range ids {
		doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: "1", Kind: types.KindProcess, Text: "t " + id})
	}
	for i := 1; i < len(ids); i++ {
		doc.Edges = append(doc.Edges, types.Edge{Page: "1", From: ids[i-1], To: ids[i]})
	}
	doc.Nodes = slices.DeleteFunc(doc.Nodes, func(n types.Node) bool { return n.ID == "" })
	doc.Edges = slices.DeleteFunc(doc.Edges, func(e types.Edge) bool { return e.From == "" || e.To == "" })
	doc.Edges = append(doc.Edges, types.Edge{Page: "1", From: "a b_2", To: "x.y"})
	var buf bytes.Buffer
	_, err := export.MermaidChart(&buf, doc)
	require.NoError(t, err)
	out := buf.String()
	for _, plain := range []string{"A", "n1", "1", "0_1", "a_b"} {
		assert.Contains(t, out, "\n    "+plain+"[\"t "+plain+"\"]\n", "kept as it is")
	}
	for _, mapped := range []string{"End", "end", "style", "click", "default", "a b", "a-b", "a:b", "é", "x.y"} {
		assert.Contains(t, out, " id: ", mapped)
		assert.NotContains(t, out, "\n    "+mapped+"[", "written under another id")
	}
	back, err := document.Read("-", "mermaid", &buf)
	require.NoError(t, err)
	require.Empty(t, back.Errors, out)
	var got []string
	for _, n := range back.Nodes {
		got = append(got, n.ID)
	}
	var want []string
	for _, n := range doc.Nodes {
		want = append(want, n.ID)
	}
	assert.Equal(t, want, got, out)
	assert.Equal(t, len(doc.Edges), len(back.Edges))
}

// TestMermaidChartIsLinear: writing a chart ten times larger takes about
// ten times as long (a ratio, not a time), and 100,000 nodes are written
// and read back.
func TestMermaidChartIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("a large chart")
	}
	chain := func(n int) *types.Document {
		doc := &types.Document{Pages: []types.Page{{ID: "1", Root: "s"}}}
		doc.Nodes = append(doc.Nodes, types.Node{ID: "s", Page: "1", Kind: types.KindTerminator, Text: "Start"})
		prev := "s"
		for i := range n {
			id := fmt.Sprintf("step %d", i) // a mapped id: the id line too
			doc.Nodes = append(doc.Nodes, types.Node{ID: id, Page: "1", Kind: types.KindProcess, Text: "Do <" + id + ">",
				Metadata: types.Metadata{"command": "echo " + id + "\n  done"}})
			doc.Edges = append(doc.Edges, types.Edge{Page: "1", From: prev, To: id, Label: "go"})
			prev = id
		}
		return doc
	}
	measure := func(doc *types.Document) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			_, err := export.MermaidChart(&bytes.Buffer{}, doc)
			require.NoError(t, err)
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := chain(10_000), chain(100_000)
	ts, tl := measure(small), measure(large)
	t.Logf("10,000 nodes: %v; 100,000 nodes: %v (ratio %.1f)", ts, tl, float64(tl)/float64(ts))
	assert.Less(t, tl, 30*ts+time.Second, "100,000 nodes take more than 30 times 10,000's")
	back, _, _ := toMermaid(t, large)
	assert.Len(t, back.Nodes, len(large.Nodes))
	assert.Equal(t, "step 99999", back.Nodes[len(back.Nodes)-1].ID)
}

// TestWritersAreTheTable: the chart formats convert writes are the rows
// of document's table that name output files, each with its writer.
func TestWritersAreTheTable(t *testing.T) {
	t.Parallel()
	var written []string
	for _, f := range document.Written() {
		written = append(written, f.Name)
		assert.NotNil(t, export.Writers[f.Name], f.Name)
	}
	assert.Len(t, export.Writers, len(written))
	assert.ElementsMatch(t, append(written, "dot"), export.Formats)
}

// FuzzMermaidChartRoundTrip writes a chart whose title, texts, labels,
// ids, tags, custom data and variables are the fuzzed text as a Mermaid
// chart, and reads it back: no error, and every text as the chart holds
// it (make fuzz).
func FuzzMermaidChartRoundTrip(f *testing.F) {
	for _, s := range hostileTexts {
		f.Add(s)
	}
	f.Add("#60;b#62; <br> &lt; \\u0025 \"\\n\"")
	f.Fuzz(func(t *testing.T, text string) {
		if strings.ContainsRune(text, 0) || strings.TrimSpace(text) == "" {
			return // NUL is no text a chart holds (nul_in_text); an id of spaces is none
		}
		doc := hostileChart(text)
		var buf bytes.Buffer
		if _, err := export.MermaidChart(&buf, doc); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Contains(out, "%%{") {
			t.Fatalf("a directive written:\n%s", out)
		}
		back, err := document.Read("-", "mermaid", &buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(back.Errors) > 0 {
			t.Fatalf("read back with %s %s:\n%s", back.Errors[0].Class, back.Errors[0].Message, out)
		}
		valid := strings.ToValidUTF8(text, "\uFFFD")
		want := strings.TrimSpace(strings.ReplaceAll(valid, "\r\n", "\n"))
		if len(back.Nodes) != len(doc.Nodes) {
			t.Fatalf("%d nodes back, not %d:\n%s", len(back.Nodes), len(doc.Nodes), out)
		}
		for i, n := range doc.Nodes {
			if got := back.Nodes[i].ID; got != strings.ToValidUTF8(n.ID, "\uFFFD") {
				t.Fatalf("id %q back as %q:\n%s", n.ID, got, out)
			}
		}
		if back.Nodes[1].Text != want || back.Title != want || back.Edges[1].Label != want {
			t.Fatalf("text %q back as %q, title %q, label %q:\n%s", want, back.Nodes[1].Text, back.Title, back.Edges[1].Label, out)
		}
		if back.Nodes[1].Metadata["command"] != valid {
			t.Fatalf("command %q back as %q:\n%s", valid, back.Nodes[1].Metadata["command"], out)
		}
	})
}

// TestMermaidChartKeepsGates: a step that is an approval gate by its
// shape (Lucid's Manual operation), loaded as convert loads it, is a gate
// read back from Mermaid, where its box is a plain step.
func TestMermaidChartKeepsGates(t *testing.T) {
	t.Parallel()
	doc := &types.Document{Pages: []types.Page{{ID: "1", Root: "s"}}, Nodes: []types.Node{
		{ID: "s", Page: "1", Kind: types.KindTerminator, Text: "Start"},
		{ID: "g", Page: "1", Kind: types.KindProcess, Shape: "Manual operation", Text: "Ship it?"},
		{ID: "y", Page: "1", Kind: types.KindTerminator, Text: "Shipped"},
		{ID: "n", Page: "1", Kind: types.KindTerminator, Text: "Held"}},
		Edges: []types.Edge{{Page: "1", From: "s", To: "g"}, {Page: "1", From: "g", To: "y", Label: "approved"}, {Page: "1", From: "g", To: "n", Label: "rejected"}}}
	opts := chart.Options{Defaults: types.BuiltinDefaults(), Names: anyCLI{}}
	c := chart.Check(doc, opts)
	require.Empty(t, c.Errors)
	require.Equal(t, types.StepApproval, c.Doc.Nodes[1].Step, "a gate by its shape")
	back, _, out := toMermaid(t, c.Doc)
	assert.Contains(t, out, "%% dtree: g approval: true")
	again := chart.Check(back, opts)
	require.Empty(t, again.Errors)
	assert.Equal(t, types.StepApproval, again.Doc.Nodes[1].Step, "still a gate:\n%s", out)
}
