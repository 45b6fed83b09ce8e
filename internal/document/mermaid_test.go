package document_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

func readMermaid(t *testing.T, text string) *types.Document {
	t.Helper()
	doc, err := document.FromMermaid(strings.NewReader(text))
	require.NoError(t, err)
	return doc
}

// nodesOf is "id kind text" per node, sorted.
func nodesOf(doc *types.Document) []string {
	var out []string
	for _, n := range doc.Nodes {
		out = append(out, n.ID+" "+n.Kind+" "+n.Text)
	}
	sort.Strings(out)
	return out
}

func edgesOf(doc *types.Document) []string {
	out := edgeLabels(doc)
	sort.Strings(out)
	return out
}

func mclasses(ds []types.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		if d.Class == "unlabeled_branch" || d.Class == "ambiguous_root" {
			continue // the graph's rules, not the reader's
		}
		out = append(out, fmt.Sprintf("%s@%d", d.Class, d.Line))
	}
	return out
}

// TestMermaidNodes: every shape's kind, labels quoted, markdown, with
// entity codes and <br>, and a node's text from its first labelled mention.
func TestMermaidNodes(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, `flowchart LR
    A([Start]) --> B[Plain] --> C(Rounded) --> D((Circle)) --> E{Question?}
    E -->|a| F[[Sub]] --> G[(Db)] --> H{{Hex}} --> I[/Lean/] --> J[\Back\] --> K>Flag] --> L(((Dbl)))
    E -->|b| M["Quoted #quot;x#quot; #35;1"] --> N["`+"`**Bold** md`"+`"] --> O[Two<br>lines<br/>here]
    E -->|c| P
    P --> Q@{ shape: diam, label: "Shaped" }
    Q -->|x| R@{ shape: stadium, label: "Stop" }
    Q -->|y| S@{ shape: lean-r }
    P[Later label] --> R
    P[Not this one]
    Q -->|z| T["Shaped last"] --> U@{ label: "Say \"hi\"", shape: fr-circ }
    T@{ shape: diam}
    T -->|a| V(((Out)))
    T -->|b| W[Off]
`)
	assert.Empty(t, mclasses(doc.Errors))
	assert.Equal(t, []string{
		"A terminator Start", "B process Plain", "C process Rounded", "D terminator Circle",
		"E decision Question?", "F subprocess Sub", "G process Db", "H process Hex", "I process Lean",
		"J process Back", "K process Flag", "L terminator Dbl", "M process Quoted \"x\" #1",
		"N process Bold md", "O process Two\nlines\nhere", "P process Later label",
		"Q decision Shaped", "R terminator Stop", "S process S", "T decision Shaped last",
		"U terminator Say \"hi\"", "V terminator Out", "W process Off",
	}, nodesOf(doc))
}

// TestMermaidDirectionsAndHeaders: graph and flowchart, every direction or
// none, a header with statements after ";", comments and front matter.
func TestMermaidDirectionsAndHeaders(t *testing.T) {
	t.Parallel()
	for _, head := range []string{"flowchart TD", "flowchart TB", "flowchart BT", "flowchart RL", "flowchart LR",
		"flowchart", "graph TD", "graph LR", "graph", "%% c\n---\ntitle: T\n---\nflowchart TD", "graph TD;", "flowchart-elk LR",
		"%%{init: {'theme': 'dark'}}%%\nflowchart TD", "flowchart >", "flowchart v", "graph %% c"} {
		t.Run(head, func(t *testing.T) {
			doc := readMermaid(t, head+"\nA[Go] --> B[Stop]\n")
			assert.Empty(t, mclasses(doc.Errors))
			assert.Equal(t, []string{"A>B:"}, edgesOf(doc))
		})
	}
	doc := readMermaid(t, "graph TD;A[One]-->B[Two];B-->C[Three];\n")
	assert.Equal(t, []string{"A>B:", "B>C:"}, edgesOf(doc))
}

// TestMermaidEdges: every link form, labels in each syntax, chains, &,
// lengths, edge ids, a statement over two lines, ~~~ making no edge.
func TestMermaidEdges(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, `flowchart TD
    A{Pick} -->|p1| B
    A -- p2 --> C
    A -. p3 .-> D
    A == p4 ==> E
    A --->|p5| F
    A ====>|p6| G
    A -.->|p7| H
    A -- p8 --- I
    A e1@-->|p9| J
    K --> L & M --> N
    O & P --> Q:::hot
    R -->
      S
    S ~~~ T
    U --o V
    W --x X
    Y -.- Z
    Z ==> Z2;Z2 --> Z3
`)
	assert.Empty(t, mclasses(doc.Errors))
	assert.Equal(t, []string{
		"A>B:p1", "A>C:p2", "A>D:p3", "A>E:p4", "A>F:p5", "A>G:p6", "A>H:p7", "A>I:p8", "A>J:p9",
		"K>L:", "K>M:", "L>N:", "M>N:", "O>Q:", "P>Q:", "R>S:", "U>V:", "W>X:", "Y>Z:", "Z2>Z3:", "Z>Z2:",
	}, edgesOf(doc))
	ids := map[string]bool{}
	for _, e := range doc.Edges {
		ids[e.ID] = true
	}
	assert.True(t, ids["e1"], "the edge id e1@ names the edge")
	assert.True(t, ids["L_K_L_0"], "an edge without an id is named as Mermaid names it")

	// Heads at both ends leave the direction unknown; none is A to B.
	doc = readMermaid(t, "flowchart LR\nS([Go]) --> A{Q}\nA -->|1| B <--> C\nA -->|2| D o--o E\nA -->|3| F --- G\n")
	assert.Equal(t, []string{"bidirectional_line@3", "bidirectional_line@4"}, mclasses(doc.Errors))
	assert.Empty(t, doc.Warnings)
	assert.Contains(t, edgesOf(doc), "F>G:")
}

// TestMermaidReadPast: classDef, class, style, linkStyle, click, direction,
// accessibility lines are no steps.
func TestMermaidReadPast(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, `flowchart TD
    accTitle: Release
    accDescr {
      many lines
    }
    A[Go] --> B[Stop]
    classDef hot fill:#f00
    class A,B hot
    style A fill:#fff
    linkStyle 0 stroke:#f00
    click A "https://example.com"
    %% a comment --> X
`)
	assert.Empty(t, mclasses(doc.Errors))
	assert.Equal(t, []string{"A process Go", "B process Stop"}, nodesOf(doc))
}

// TestMermaidSubgraphs: a subgraph is a container, its nodes inside it; an
// edge to it is Lucid's line_to_container, on its line.
func TestMermaidSubgraphs(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, `flowchart TD
    A[Start] --> B
    subgraph checks [Checks]
      direction LR
      B[Lint] --> C[Test]
      subgraph inner
        D[Deep]
      end
    end
    subgraph Two words
      E[Else]
    end
    C --> D --> E
`)
	assert.Empty(t, mclasses(doc.Errors))
	holder := map[string]string{}
	for _, n := range doc.Nodes {
		holder[n.ID] = n.Container
	}
	assert.Equal(t, map[string]string{"A": "", "B": "checks", "C": "checks", "D": "inner", "E": "Two words"}, holder)

	doc = readMermaid(t, "flowchart TD\nA[Go] --> B[Do]\nsubgraph S\n  B\nend\nB --> S\n")
	assert.Equal(t, []string{"line_to_container@6"}, mclasses(doc.Errors))
	// An edge to an id that a subgraph takes later is to the subgraph.
	doc = readMermaid(t, "flowchart TD\nA[Go] --> S\nsubgraph S [Box]\n  B[Do]\nend\n")
	assert.Equal(t, []string{"line_to_container@2"}, mclasses(doc.Errors))
}

// TestMermaidCustomData: %% dtree: lines set a node's custom data (a key
// repeated is more lines), its tags, and the chart's properties.
func TestMermaidCustomData(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, `flowchart TD
%% dtree: context: previous
%% dtree: branch: main
A[Run the tests] --> B[Tag]
%% dtree: A retries: 1
%% dtree: A timeout: 15m
%% dtree: A tags: NoValidation
%% dtree: B command: echo one
%% dtree: B command: echo two
`)
	assert.Empty(t, mclasses(doc.Errors))
	a, b := nodeByText(doc, "Run the tests"), nodeByText(doc, "Tag")
	require.NotNil(t, a)
	require.NotNil(t, b)
	assert.Equal(t, types.Metadata{"retries": "1", "timeout": "15m"}, a.Metadata)
	assert.Equal(t, []string{"NoValidation"}, a.Tags)
	assert.Equal(t, "echo one\necho two", b.Metadata["command"])
	assert.Equal(t, "previous", doc.Metadata["context"])
	assert.Equal(t, []types.Var{{Name: "branch", Default: "main", HasDefault: true}}, doc.Vars)

	// In a .md, the first block that sets a property gives it, lines and all.
	doc = readMermaid(t, "```mermaid\nflowchart TD\nA[Go]\n%% dtree: who: Ada\n```\n```mermaid\nflowchart TD\nB[Go]\n%% dtree: who: Bob\n%% dtree: ctx: one\n%% dtree: ctx: two\n```\n")
	assert.Equal(t, "Ada", doc.Metadata["who"])
	assert.Equal(t, "one\ntwo", doc.Metadata["ctx"])
}

// TestMermaidMalformed: what cannot be read is malformed_mermaid with its
// line, and the rest of the chart is still read.
func TestMermaidMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string
	}{
		{"not mermaid", "hello\n", []string{"malformed_mermaid@0"}},
		{"unclosed bracket", "flowchart TD\nA[Go --> B\nC[Ok]\n", []string{"malformed_mermaid@2"}},
		{"unclosed quote", "flowchart TD\nA[Go]\nB[\"Open\n", []string{"malformed_mermaid@3"}},
		{"unclosed @{", "flowchart TD\nA[Go]\nB@{ shape: diam\n", []string{"malformed_mermaid@3"}},
		{"stray end", "flowchart TD\nA[Go]\nend\n", []string{"malformed_mermaid@3"}},
		{"unclosed subgraph", "flowchart TD\nsubgraph S\nA[Go]\n", []string{"malformed_mermaid@2"}}, // the line it opens on
		{"custom data on no node", "flowchart TD\nA[Go]\n%% dtree: Z cli: claude\n", []string{"malformed_mermaid@3"}},
		{"custom data unreadable", "flowchart TD\nA[Go]\n%% dtree: A\n", []string{"malformed_mermaid@3"}},
		{"dangling arrow", "flowchart TD\nA[Go] -->\n", []string{"malformed_mermaid@2"}},
		{"unknown direction", "%% c\nflowchart XY\nA[Go] --> B[Stop]\n", []string{"malformed_mermaid@2"}},
		{"lower case direction", "graph td\nA[Go]\n", []string{"malformed_mermaid@1"}},
		{"statement after the keyword", "flowchart A --> B\n", []string{"malformed_mermaid@1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := readMermaid(t, tt.text)
			got := mclasses(doc.Errors)
			require.NotEmpty(t, got)
			assert.Equal(t, tt.want, got[:1])
			assert.NotEmpty(t, doc.Errors[0].Hint)
		})
	}
}

// TestMermaidMarkdown: a .md's flowchart blocks are pages (sequence
// diagrams skipped); a later block's repeated ids get its number; lines
// are the file's.
func TestMermaidMarkdown(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, "# Flows\n\n```mermaid\nsequenceDiagram\nA->>B: hi\n```\n\n```mermaid\n---\ntitle: Triage\n---\nflowchart TD\nA[One] --> B{Two}\n```\n\ntext\n\n```mermaid\ngraph LR\nA[Again] --> C[New]\n```\n")
	assert.Empty(t, mclasses(doc.Errors))
	require.Len(t, doc.Pages, 2)
	assert.Equal(t, "1", doc.Pages[0].ID)
	assert.Equal(t, "Triage", doc.Pages[0].Title)
	assert.Equal(t, "2", doc.Pages[1].ID)
	assert.Equal(t, "Mermaid 2", doc.Pages[1].Title, "no title and no heading: its number")
	assert.Equal(t, []string{"2:A process Again", "A process One", "B decision Two", "C process New"}, nodesOf(doc))
	lines := map[string]int{}
	for _, n := range doc.Nodes {
		lines[n.ID] = n.Line
	}
	assert.Equal(t, map[string]int{"A": 13, "B": 13, "2:A": 20, "C": 20}, lines)
}

// TestMermaidPageTitles: a block's title is its front matter's title:,
// else the Markdown heading above it.
func TestMermaidPageTitles(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, "# Guide\n\n## Release flow\n\n```mermaid\nflowchart TD\nA[Go] --> B[Stop]\n```\n\n## Triage ##\n```mermaid\n---\ntitle: Bugs\n---\nflowchart TD\nC[Go] --> D[Stop]\n```\n")
	require.Len(t, doc.Pages, 2)
	assert.Equal(t, "Release flow", doc.Pages[0].Title)
	assert.Equal(t, "Bugs", doc.Pages[1].Title)
	assert.Equal(t, "Guide", doc.Title, "a Markdown file's title is its first # heading")

	// The front matter is YAML: a block title, a config's keys, quotes.
	for fm, want := range map[string]string{
		"title: |\n  Release\n  flow\n":                  "Release\nflow",
		"config:\n  title: not this\n  theme: dark\n":    "Mermaid 1",
		"title: 'It''s: here'\nconfig:\n  theme: dark\n": "It's: here",
		"title: [a, b]\n":                                "Mermaid 1",
	} {
		doc := readMermaid(t, "---\n"+fm+"---\nflowchart TD\nA[Go] --> B[Stop]\n")
		require.Len(t, doc.Pages, 1, fm)
		assert.Equal(t, want, doc.Pages[0].Title, fm)
	}
}

// TestMermaidHostile: huge inputs are read without panic and in linear
// time.
func TestMermaidHostile(t *testing.T) {
	t.Parallel()
	chain := func(n int) string {
		var sb strings.Builder
		sb.WriteString("flowchart LR\nN0")
		for i := 1; i < n; i++ {
			fmt.Fprintf(&sb, "-->N%d[Step %d]", i, i)
		}
		return sb.String()
	}
	nest := func(n int) string {
		var sb strings.Builder
		sb.WriteString("flowchart TD\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "subgraph s%d\n", i)
		}
		sb.WriteString("A[Go]\n")
		for i := 0; i < n; i++ {
			sb.WriteString("end\n")
		}
		return sb.String()
	}
	huge := strings.Repeat("x", 1<<20)
	cases := map[string]string{
		"100k chain on one line":          chain(100_000),
		"deep nesting":                    nest(10_000),
		"1 MB line":                       "flowchart TD\nA[" + huge + "] --> B\n",
		"1 MB unclosed":                   "flowchart TD\n" + strings.Repeat("A[", 1<<19),
		"1 MB quotes":                     "flowchart TD\n" + strings.Repeat("A[\"x\"", 1<<17),
		"many unclosed lines":             "flowchart TD\n" + strings.Repeat("A[x\n", 1<<17),
		"many @":                          "flowchart TD\n" + strings.Repeat("A@{ ", 1<<17),
		"many arrows":                     "flowchart TD\nA" + strings.Repeat("-- x ", 1<<17),
		"100k chain -- x --> on one line": strings.Replace(chain(100_000), "-->", "-- x -->", -1),
		"cycle":                           "flowchart TD\nA[Go] --> B[Do] --> A\n",
		"entities":                        "flowchart TD\nA[\"" + strings.Repeat("#quot;#35;#", 1<<15) + "\"]\n",
		"md fences":                       strings.Repeat("```mermaid\nflowchart\nA\n```\n", 1<<14),
		"md unclosed fences":              strings.Repeat("```mermaid\nx\n", 1<<15),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			doc := readMermaid(t, text)
			assert.NotNil(t, doc)
			assert.Less(t, time.Since(start), 20*time.Second)
		})
	}
	doc := readMermaid(t, chain(100_000))
	assert.Len(t, doc.Nodes, 100_000)
	assert.Len(t, doc.Edges, 99_999)
	doc = readMermaid(t, "flowchart TD\nA[\""+huge+"\"] --> B[Stop]\n")
	assert.Empty(t, mclasses(doc.Errors))
}

// TestMermaidIDCharacters: ids Mermaid 11's parser takes whole (checked
// with its flowDb: a/b, c:d, q'r, p\q are one node each) are one node to
// dtree too; ::: after an id is still its class.
func TestMermaidIDCharacters(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, `flowchart TD
    A([Start]) --> a/b[Slash] --> c:d[Colon] --> q'r[Quote] --> p\q[Backslash] --> p:::cls --> s[Styled]:::cls --> Z([End])
    classDef cls fill:#f00
`)
	assert.Empty(t, mclasses(doc.Errors))
	assert.ElementsMatch(t, []string{
		"A terminator Start", "a/b process Slash", "c:d process Colon", "q'r process Quote",
		`p\q process Backslash`, "p process p", "s process Styled", "Z terminator End",
	}, nodesOf(doc))
}

// TestMermaidAmpersandIsBounded: A & B --> C & D makes every pair's edge;
// a cross of a few nodes is read, one of thousands (a 68 KB line, 9
// million edges, 68 s and 11 GB) is an error on its line, read at once.
func TestMermaidAmpersandIsBounded(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, "flowchart TD\n  S([Start]) --> A & B & C\n  A & B & C --> D & E & F\n")
	assert.Len(t, doc.Edges, 12, "3 from the start and 3×3")

	group := func(p string, n int) string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprint(p, i)
		}
		return strings.Join(ids, " & ")
	}
	text := "flowchart TD\n  S([Start]) --> A0\n  " + group("A", 3000) + " --> " + group("B", 3000) + "\n"
	start := time.Now()
	doc = readMermaid(t, text)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Less(t, len(doc.Edges), 10)
	var found bool
	for _, d := range doc.Errors {
		if d.Class == "malformed_mermaid" && d.Line == 3 && strings.Contains(d.Message, "9000000 edges") {
			found = true
		}
	}
	assert.True(t, found, "the error names the line and the edges: %v", doc.Errors)
}

// TestMermaidDtreeLines: a %% dtree: line's own line names its findings;
// a value quoted as a JSON string is its text; a node's id line renames
// it; a misspelt marker or a key dtree does not act on is a warning.
func TestMermaidDtreeLines(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, `flowchart TD
n0([Start]) --> n1[Build]
n1 --> n2([End])
%% dtree: n1 id: build step
%% dtree: n1 command: "line one\n  indented\n\n%%{init: x}%% \"q\" "
%% dtree: n1 retires: 2
%% dtree: n1 owner: ada
%% dtree n1 cli: claude
%%dtree: n1 model: m1
%% DTREE: n1 timeout: 5m
%% dtree reads this chart
`)
	assert.Empty(t, mclasses(doc.Errors))
	assert.Equal(t, []string{"build step>n2:", "n0>build step:"}, edgesOf(doc))
	n := nodeByText(doc, "Build")
	require.NotNil(t, n)
	assert.Equal(t, "build step", n.ID)
	assert.Equal(t, types.Metadata{"command": "line one\n  indented\n\n%%{init: x}%% \"q\" ", "retires": "2", "owner": "ada", "model": "m1"}, n.Metadata)
	assert.Equal(t, map[string]int{"command": 5, "retires": 6, "owner": 7, "model": 9}, n.KeyLines)
	var warns []string
	for _, w := range doc.Warnings {
		if w.Class == "mermaid_comment" {
			warns = append(warns, fmt.Sprintf("%d %s", w.Line, w.Message))
		}
	}
	// owner is custom data as a Lucid shape's of any name: no warning.
	require.Len(t, warns, 3, "%q", warns)
	assert.Contains(t, warns[0], "8 ")
	assert.Contains(t, warns[1], "10 ")
	assert.Contains(t, warns[2], "6 node build step: custom data \"retires\"")
	assert.Contains(t, warns[2], "did you mean retries?")

	// An id line that names no node is an error on its own line.
	doc = readMermaid(t, "flowchart TD\nA[Go]\n%% dtree: Z id: zed\n")
	assert.Equal(t, []string{"malformed_mermaid@3"}, mclasses(doc.Errors))
	// Two nodes renamed to one id: the id is used twice.
	doc = readMermaid(t, "flowchart TD\nA[Go] --> B[Go]\n%% dtree: A id: x\n%% dtree: B id: x\n")
	assert.NotEmpty(t, mclasses(doc.Errors))
}

// TestMermaidEntitiesAfterHTML: a Mermaid entity code is text as shown,
// never a tag, and <br> makes each line break, blank lines included.
func TestMermaidEntitiesAfterHTML(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, "flowchart TD\nA[\"#60;b#62; #38;amp; #96;x#96;\"] --> B[\"one<br><br>#32;two#32;<br/>three\"]\n")
	assert.Equal(t, []string{"A process <b> &amp; `x`", "B process one\n\n two \nthree"}, nodesOf(doc))
}

// TestMermaidManual: @{ shape: manual }, Mermaid 11's Manual Operation,
// is a Manual operation (an approval gate) as Lucid's and draw.io's are;
// the same trapezoid by its geometric names, or [\…/], is not.
func TestMermaidManual(t *testing.T) {
	t.Parallel()
	doc := readMermaid(t, `flowchart TD
    A@{ shape: manual, label: "Ship it?" } --> B@{ shape: trap-t, label: "T" } --> C@{ shape: inv-trapezoid, label: "I" }
    C --> D[\Back/] --> E@{ shape: "manual" }
`)
	assert.Empty(t, mclasses(doc.Errors))
	shapes := map[string]string{}
	for _, n := range doc.Nodes {
		shapes[n.ID] = n.Shape
		assert.Equal(t, types.KindProcess, n.Kind, n.ID)
	}
	assert.Equal(t, map[string]string{"A": "Manual operation", "B": "trap-t", "C": "inv-trapezoid", "D": "Parallelogram",
		"E": "Manual operation"}, shapes)
}
