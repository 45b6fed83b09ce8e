package export_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/golden"
)

const ontoChart = `flowchart TD
  start([Start]) --> check{Tests pass?}
  check -->|No| fix[Fix them]
  fix --> check
  check -->|Yes| done([Done])
`

func TestMermaidOnto(t *testing.T) {
	t.Parallel()
	failed := &export.Trace{RunID: "r1", Status: "failed", Visits: map[string]int{"start": 1, "check": 2, "fix": 2},
		Stopped: "fix", StoppedHow: "failed"}
	for _, tc := range []struct {
		name  string
		src   string
		trace *export.Trace
		known []string // nil: every id is known
		want  string   // what follows the author's text
		res   export.Onto
	}{
		{
			name: "succeeded", src: ontoChart,
			trace: &export.Trace{RunID: "r0", Status: "succeeded", Visits: map[string]int{"start": 1, "check": 2, "fix": 1, "done": 1}},
			want: "%% run r0 drawn by dtree graph --run: succeeded\n" +
				"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\n" +
				"classDef dtreeRepeated stroke-width:4px\n" +
				"class check,done,fix,start dtreeTaken\n" +
				"class check dtreeRepeated\n",
		},
		{
			name: "failed: red over green, visits counted", src: ontoChart, trace: failed,
			want: "%% run r1 drawn by dtree graph --run: failed at fix\n" +
				"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\n" +
				"classDef dtreeFailed fill:#fde7e9,stroke:#c62828,stroke-width:3px\n" +
				"classDef dtreeRepeated stroke-width:4px\n" +
				"class check,start dtreeTaken\n" +
				"class fix dtreeFailed\n" +
				"class check,fix dtreeRepeated\n",
		},
		{
			name: "a fork's other branch, cut short by the failure, is red too",
			src:  "flowchart TD\n  start([Start]) --> plan[Plan]\n  plan --> a[A] & b[B]\n  a & b --> done([Done])\n",
			trace: &export.Trace{RunID: "r9", Status: "failed", Visits: map[string]int{"start": 1, "plan": 1, "a": 1, "b": 1},
				Stopped: "b", StoppedHow: "failed", Interrupted: map[string]bool{"a": true}},
			want: "%% run r9 drawn by dtree graph --run: failed at b\n" +
				"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\n" +
				"classDef dtreeFailed fill:#fde7e9,stroke:#c62828,stroke-width:3px\n" +
				"class plan,start dtreeTaken\n" +
				"class a,b dtreeFailed\n",
		},
		{
			name: "a limit kept the run out of a node", src: ontoChart,
			trace: &export.Trace{RunID: "r2", Status: "limit_reached", Visits: map[string]int{"start": 1, "check": 1},
				Stopped: "fix", StoppedHow: "limit_reached"},
			want: "%% run r2 drawn by dtree graph --run: limit reached at fix\n" +
				"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\n" +
				"classDef dtreeStopped fill:#fff3e0,stroke:#ef6c00,stroke-width:3px\n" +
				"class check,start dtreeTaken\n" +
				"class fix dtreeStopped\n",
		},
		{
			name:  "the author's text ends without a line break",
			src:   strings.TrimSuffix(ontoChart, "\n"),
			trace: &export.Trace{RunID: "r3", Status: "running", Visits: map[string]int{"start": 1}},
			want: "\n%% run r3 drawn by dtree graph --run: running\n" +
				"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\n" +
				"class start dtreeTaken\n",
		},
		{
			name:  "CRLF lines stay CRLF",
			src:   strings.ReplaceAll(ontoChart, "\n", "\r\n"),
			trace: &export.Trace{RunID: "r4", Status: "running", Visits: map[string]int{"start": 1}},
			want: "%% run r4 drawn by dtree graph --run: running\r\n" +
				"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\r\n" +
				"class start dtreeTaken\r\n",
		},
		{
			name: "the author's classes keep their names: ours get a number",
			src:  ontoChart + "  classDef dtreeTaken fill:#000\n  class start dtreeTaken\n  %% dtreeFailed1 too\n",
			trace: &export.Trace{RunID: "r5", Status: "failed", Visits: map[string]int{"start": 1},
				Stopped: "start", StoppedHow: "interrupted"},
			want: "%% run r5 drawn by dtree graph --run: failed at start\n" +
				"classDef dtreeFailed2 fill:#fde7e9,stroke:#c62828,stroke-width:3px\n" +
				"class start dtreeFailed2\n",
			res: export.Onto{Suffix: "2"},
		},
		{
			name:  "names that only contain or begin like ours do not clash",
			src:   ontoChart + "  classDef mydtreeTaken fill:#000\n  classDef dtreeTakenX fill:#000\n",
			trace: &export.Trace{RunID: "r6", Status: "running", Visits: map[string]int{"start": 1}},
			want: "%% run r6 drawn by dtree graph --run: running\n" +
				"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\n" +
				"class start dtreeTaken\n",
		},
		{
			name: "odd ids Mermaid takes are named; a comma, a link or an unknown id is not",
			src:  "graph LR\n  a.b-c_d --> é1 --> 1x --> a,b --> z\n",
			trace: &export.Trace{RunID: "r7", Status: "succeeded",
				Visits: map[string]int{"a.b-c_d": 1, "é1": 1, "1x": 1, "a,b": 1, "x--y": 1, "gone": 2}},
			known: []string{"a.b-c_d", "é1", "1x", "a,b", "x--y"},
			want: "%% run r7 drawn by dtree graph --run: succeeded\n" +
				"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\n" +
				"class 1x,a.b-c_d,é1 dtreeTaken\n",
			res: export.Onto{Missing: []string{"gone"}, Unnamed: []string{"a,b", "x--y"}},
		},
		{
			name: "a run id or node id cannot break out of the comment", src: ontoChart,
			trace: &export.Trace{RunID: "r8\nclass x y", Status: "failed", Visits: map[string]int{}, Stopped: "a\nb", StoppedHow: "failed"},
			want:  "%% run r8 class x y drawn by dtree graph --run: failed at a b\n",
			res:   export.Onto{Unnamed: []string{"a\nb"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var known func(string) bool
			if tc.known != nil {
				known = func(id string) bool {
					return strings.Contains("\x00"+strings.Join(tc.known, "\x00")+"\x00", "\x00"+id+"\x00")
				}
			}
			var b bytes.Buffer
			res, err := export.MermaidOnto(&b, []byte(tc.src), tc.trace, known)
			require.NoError(t, err)
			out := b.String()
			require.True(t, strings.HasPrefix(out, tc.src), "the author's text comes first, unchanged:\n%s", out)
			nl := "\n"
			if strings.HasSuffix(tc.want, "\r\n") {
				nl = "\r\n"
			}
			assert.Equal(t, tc.want+"%% end of the run drawn by dtree graph --run"+nl, strings.TrimPrefix(out, tc.src))
			assert.Equal(t, tc.res, res)
		})
	}
}

// A 1 MB source (with an earlier run's block to take out) and a run
// through 100,000 of its nodes and links are drawn back in time linear in
// both: ten times the input takes about ten times as long,
// not a hundred.
func TestMermaidOntoIsLinear(t *testing.T) {
	t.Parallel()
	build := func(n int) ([]byte, *export.Trace, []export.MermaidLink) {
		var src bytes.Buffer
		src.WriteString("flowchart TD\n")
		tr := &export.Trace{RunID: "big", Status: "failed", Visits: make(map[string]int, n)}
		links := make([]export.MermaidLink, 0, n)
		for i := range n {
			fmt.Fprintf(&src, "  n%d[Step %d, dtreeTaken%d] --> n%d\n", i, i, i, i+1)
			tr.Visits[fmt.Sprintf("n%d", i)] = 1 + i%2
			links = append(links, export.MermaidLink{From: fmt.Sprintf("n%d", i), To: fmt.Sprintf("n%d", i+1)})
			tr.Steps = append(tr.Steps, export.Step{From: links[i].From, To: links[i].To})
		}
		tr.Stopped, tr.StoppedHow = fmt.Sprintf("n%d", n-1), "failed"
		// drawn on a text a run was drawn on already
		var drawn bytes.Buffer
		_, err := export.MermaidOntoLinks(&drawn, src.Bytes(), tr, nil, links)
		require.NoError(t, err)
		return drawn.Bytes(), tr, links
	}
	took := func(n int) (time.Duration, int) {
		src, tr, links := build(n)
		start := time.Now()
		var b bytes.Buffer
		res, err := export.MermaidOntoLinks(&b, src, tr, nil, links)
		require.NoError(t, err)
		assert.Empty(t, res.Suffix, "dtreeTaken0, 1, … are not dtreeTaken")
		return time.Since(start), len(src)
	}
	small, _ := took(10_000)
	large, size := took(100_000)
	require.Greater(t, size, 1<<20, "the large source is over 1 MB")
	t.Logf("10,000 nodes: %v; 100,000 nodes (%d bytes): %v", small, size, large)
	assert.Less(t, large, 40*small+200*time.Millisecond, "ten times the input, at most a few times ten times the time")
	assert.Less(t, large, 10*time.Second)
}

// Every kind of node id a class line names, as Mermaid 11 reads it in a
// node statement: the golden file is parsed by `make conformance` (every
// testdata/golden/*/*.mmd), so an id that MermaidOnto names but Mermaid
// would not take in a class line fails there.
func TestMermaidOntoOddIDsGolden(t *testing.T) {
	t.Parallel()
	ids := []string{"a.b", "x-y", "a_b", "a/b", "a:b", "$x", "!x", "?x", "'x'", "*x", "+x", "#x", `a\b`, "é1", "日本", "1x", "End", "Class", "-x", "x-"}
	var src strings.Builder
	src.WriteString("flowchart LR\n")
	tr := &export.Trace{RunID: "20261127T021500Z-3f2a1c", Status: "failed", Visits: map[string]int{}, Stopped: ids[len(ids)-1], StoppedHow: "failed"}
	for i, id := range ids {
		fmt.Fprintf(&src, "  %s[Step %d]", id, i)
		if i+1 < len(ids) {
			fmt.Fprintf(&src, " --> %s", ids[i+1])
		}
		src.WriteString("\n")
		tr.Visits[id] = 1 + i%2
	}
	var b bytes.Buffer
	res, err := export.MermaidOnto(&b, []byte(src.String()), tr, nil)
	require.NoError(t, err)
	assert.Empty(t, res.Unnamed, "each of these is named")
	golden.Assert(t, "../../testdata/golden/graph-run/odd-ids.run.mmd", b.Bytes())
}

// TestMermaidOntoRedraw draws run A, then run B on the result: the text
// is B drawn on the author's own text, A's block gone, the author's class
// lines (dtree-like names among them) and lines added after A's block
// kept; a block written before it had an end line goes too.
func TestMermaidOntoRedraw(t *testing.T) {
	t.Parallel()
	links := []export.MermaidLink{{From: "start", To: "check"}, {From: "check", To: "fix", Label: "No"},
		{From: "fix", To: "check"}, {From: "check", To: "done", Label: "Yes"}}
	a := &export.Trace{RunID: "A", Status: "failed", Visits: map[string]int{"start": 1, "check": 2, "fix": 2},
		Stopped: "fix", StoppedHow: "failed",
		Steps: []export.Step{{From: "start", To: "check"}, {From: "check", To: "fix", Label: "No"}, {From: "fix", To: "check"}, {From: "check", To: "fix", Label: "No"}}}
	b := &export.Trace{RunID: "B", Status: "succeeded", Visits: map[string]int{"start": 1, "check": 1, "done": 1},
		Steps: []export.Step{{From: "start", To: "check"}, {From: "check", To: "done", Label: "Yes"}}}
	draw := func(src string, tr *export.Trace) string {
		var out bytes.Buffer
		_, err := export.MermaidOntoLinks(&out, []byte(src), tr, nil, links)
		require.NoError(t, err)
		return out.String()
	}
	own := ontoChart + "  classDef dtreeTaken fill:#eee\n  classDef dtreeFailedOld fill:#f00\n  class fix dtreeFailedOld\n"
	for _, tc := range []struct{ name, src string }{
		{"plain", ontoChart},
		{"no final newline", strings.TrimSuffix(ontoChart, "\n")},
		{"CRLF", strings.ReplaceAll(ontoChart, "\n", "\r\n")},
		{"the author's own dtree-like classes", own},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			drawnA := draw(tc.src, a)
			require.Contains(t, drawnA, "class fix dtreeFailed")
			want := draw(tc.src, b)
			assert.Equal(t, want, draw(drawnA, b), "B on A's drawing is B on the author's text")
			assert.NotContains(t, draw(drawnA, b), "run A")
			assert.Equal(t, want, draw(draw(drawnA, b), b))
		})
	}
	t.Run("a line the author added after A's block stays", func(t *testing.T) {
		t.Parallel()
		edited := draw(ontoChart, a) + "  done --> again[Again]\n"
		got := draw(edited, b)
		assert.Equal(t, ontoChart+"  done --> again[Again]\n", got[:strings.Index(got, "%% run B")])
	})
	t.Run("a block of an older dtree, with no end line", func(t *testing.T) {
		t.Parallel()
		old := ontoChart + "%% run A drawn by dtree graph --run: failed at fix\n" +
			"classDef dtreeTaken fill:#e6f4ea,stroke:#2e7d32,stroke-width:2px\n" +
			"class check,start dtreeTaken\n" +
			"  style fix fill:#fff\n"
		got := draw(old, b)
		assert.Equal(t, draw(ontoChart+"  style fix fill:#fff\n", b), got)
	})
}

// TestMermaidOntoLinks: the links the run took get a linkStyle line, by
// their place among the text's links.
func TestMermaidOntoLinks(t *testing.T) {
	t.Parallel()
	links := []export.MermaidLink{{From: "start", To: "check"}, {From: "check", To: "fix", Label: "No"},
		{From: "fix", To: "check"}, {From: "check", To: "done", Label: "Yes"}}
	tr := &export.Trace{RunID: "r", Status: "succeeded", Visits: map[string]int{"start": 1, "check": 2, "fix": 1, "done": 1},
		Steps: []export.Step{{From: "start", To: "check"}, {From: "check", To: "fix", Label: "No"}, {From: "fix", To: "check"}, {From: "check", To: "done", Label: "Yes"}}}
	tr.Steps = tr.Steps[:2]
	var out bytes.Buffer
	_, err := export.MermaidOntoLinks(&out, []byte(ontoChart), tr, nil, links)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "\nlinkStyle 0,1 stroke:#2e7d32,stroke-width:3px\n%% end of the run drawn by dtree graph --run\n")
	out.Reset()
	_, err = export.MermaidOntoLinks(&out, []byte(ontoChart), tr, nil, nil)
	require.NoError(t, err)
	assert.NotContains(t, out.String(), "linkStyle")
}

// The links a run took, marked by their place in Mermaid's own order:
// chains, "&" (every pair), labels both ways, an edge id, a link inside
// a subgraph. The golden file is parsed by `make conformance`, which
// checks with Mermaid's parser that the styled links are the ones the run
// took (internal/conformance, graph-run/links.run.mmd).
func TestMermaidOntoLinksGolden(t *testing.T) {
	t.Parallel()
	src := "flowchart TD\n" +
		"    start([Start]) --> plan[Plan] & build[Build] --> check{Check}\n" +
		"    check -->|No| plan\n" +
		"    check -- Yes --> ship[Ship] e1@--> done([Done])\n" +
		"    subgraph after [After]\n" +
		"        tell[Tell them] -.-> done\n" +
		"    end\n"
	doc, err := document.Read("-", "mermaid", strings.NewReader(src))
	require.NoError(t, err) // its lint errors (tell is a second start) are not the links'
	var links []export.MermaidLink
	for _, e := range doc.Edges {
		links = append(links, export.MermaidLink{From: e.From, To: e.To, Label: e.Label})
	}
	require.Len(t, links, 8)
	tr := runOf("20261127T021500Z-3f2a1c", "", "start", "plan", "check", "plan", "check", "ship", "done")
	tr.Steps[2].Label, tr.Steps[4].Label = "No", "Yes"
	var b bytes.Buffer
	_, err = export.MermaidOntoLinks(&b, []byte(src), tr, nil, links)
	require.NoError(t, err)
	assert.Contains(t, b.String(), "\nlinkStyle 0,2,4,5,6 stroke:#2e7d32,stroke-width:3px\n")
	golden.Assert(t, "../../testdata/golden/graph-run/links.run.mmd", b.Bytes())
}
