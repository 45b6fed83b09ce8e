package export_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
			assert.Equal(t, tc.want, strings.TrimPrefix(out, tc.src))
			assert.Equal(t, tc.res, res)
		})
	}
}

// A 1 MB source and a run through 100,000 of its nodes are drawn back in
// time linear in both: ten times the input takes about ten times as long,
// not a hundred.
func TestMermaidOntoIsLinear(t *testing.T) {
	t.Parallel()
	build := func(n int) ([]byte, *export.Trace) {
		var src bytes.Buffer
		src.WriteString("flowchart TD\n")
		tr := &export.Trace{RunID: "big", Status: "failed", Visits: make(map[string]int, n)}
		for i := range n {
			fmt.Fprintf(&src, "  n%d[Step %d, dtreeTaken%d] --> n%d\n", i, i, i, i+1)
			tr.Visits[fmt.Sprintf("n%d", i)] = 1 + i%2
		}
		tr.Stopped, tr.StoppedHow = fmt.Sprintf("n%d", n-1), "failed"
		return src.Bytes(), tr
	}
	took := func(n int) (time.Duration, int) {
		src, tr := build(n)
		start := time.Now()
		var b bytes.Buffer
		res, err := export.MermaidOnto(&b, src, tr, nil)
		require.NoError(t, err)
		assert.Empty(t, res.Suffix, "dtreeTaken0, 1, … are not dtreeTaken")
		return time.Since(start), len(src)
	}
	small, _ := took(10_000)
	large, size := took(100_000)
	require.Greater(t, size, 1<<20, "the large source is over 1 MB")
	t.Logf("10,000 nodes: %v; 100,000 nodes (%d bytes): %v", small, size, large)
	assert.Less(t, large, 40*small+200*time.Millisecond, "ten times the input, at most a few times ten times the time")
	assert.Less(t, large, 2*time.Second)
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
