package ci

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

func TestAnnotation(t *testing.T) {
	for _, tc := range []struct {
		name       string
		level      string
		at         Where
		title, msg string
		want       string
	}{
		{name: "plain", level: "error", msg: "it broke", want: "::error::it broke\n"},
		{name: "on a line", level: "warning", at: Where{File: "charts/a,b.csv", Line: 12}, title: "dtree lint: x",
			want: "::warning file=charts/a%2Cb.csv,line=12,title=dtree lint%3A x::\n"},
		{name: "no line for stdin", level: "error", at: Where{File: "-", Line: 3}, msg: "m", want: "::error::m\n"},
		{name: "a message cannot end the command or start another", level: "error",
			msg: "100% done\n::set-env name=X::1\r\n", want: "::error::100%25 done%0A::set-env name=X::1%0D%0A\n"},
		{name: "a title cannot add a property", level: "error", title: "a,file=x:y\rz", msg: "m",
			want: "::error title=a%2Cfile=x%3Ay%0Dz::m\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Annotation(tc.level, tc.at, tc.title, tc.msg))
		})
	}
}

func TestAnnotationIsBounded(t *testing.T) {
	got := Annotation("error", Where{}, strings.Repeat("t", 10000), strings.Repeat("%", 1<<20))
	assert.Less(t, len(got), 3*maxAnnotation+1000, "the title and message are cut before they are escaped")
	assert.Equal(t, 1, strings.Count(got, "\n"))
}

func TestGroupStartIsOneLine(t *testing.T) {
	assert.Equal(t, "::group::a b %25 c\n", GroupStart("a\nb\r% c"))
}

// Text between ::stop-commands:: and its token cannot issue a command,
// whatever it holds; the token is not in the text, and the text comes
// back byte for byte.
func TestVerbatim(t *testing.T) {
	for _, body := range []string{
		"plain",
		"::error::injected\n::endgroup::\n::stop-commands::x\n::x::\n",
		"::dtree-0123::\n" + strings.Repeat("::warning::w\n", 1000),
		"no newline at the end",
	} {
		got := Verbatim(body)
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		require.GreaterOrEqual(t, len(lines), 3)
		token, ok := strings.CutPrefix(lines[0], "::stop-commands::")
		require.True(t, ok, "starts by stopping the commands: %q", lines[0])
		assert.Equal(t, "::"+token+"::", lines[len(lines)-1], "ends with the token")
		inner := strings.TrimSuffix(strings.TrimPrefix(got, lines[0]+"\n"), lines[len(lines)-1]+"\n")
		assert.Equal(t, strings.TrimSuffix(body, "\n")+"\n", inner, "the text as it is")
		assert.NotContains(t, inner, token, "the text cannot resume the commands")
	}
	assert.Empty(t, Verbatim(""))
}

func TestMarkdownEscapes(t *testing.T) {
	hostile := "a | b `c` *d* _e_ [f](g) <script>x</script> $x$ @team #1 ~~s~~ \\ & !\n| --- |"
	got := md(hostile)
	assert.NotContains(t, got, "\n")
	for i := 0; i < len(got); i++ {
		if strings.IndexByte("`*_[]()<>$@#~|&!", got[i]) >= 0 {
			assert.True(t, i > 0 && got[i-1] == '\\', "%q at %d is escaped in %s", got[i], i, got)
		}
	}
	assert.Equal(t, "`logs/x y`", code("logs/x y"))
	assert.Equal(t, "a\\`b", code("a`b"), "no code span can hold a backtick")
}

// summary is a run's summary for the tests: steps of the given statuses,
// node 2 visited twice.
func summary(status string, steps ...string) *run.Summary {
	in, out, cost := int64(1200), int64(34), 0.0123
	s := &run.Summary{RunID: "20261125T010203Z-abcdef", Title: "Release", Source: "chart.csv", Page: "p1", Status: status,
		Started: time.Date(2026, 11, 25, 1, 2, 3, 0, time.UTC), DurationMS: 4321,
		Logs: run.Logs{Dir: "logs/20261125T010203Z-abcdef", Events: "logs/20261125T010203Z-abcdef/events.jsonl"}}
	for i, st := range steps {
		n := run.NodeResult{ID: fmt.Sprint(2 + i%2), Text: "Step text\nsecond line", CLI: "claude", Visit: 1 + i/2, Status: st,
			DurationMS: 1500, Output: "did it"}
		n.Usage.InputTokens, n.Usage.OutputTokens, n.Usage.CostUSD = &in, &out, &cost
		n.Attempts = []run.Attempt{{N: 1, Purpose: "run", CLI: "claude", DurationMS: 1500}}
		if st != run.StatusSucceeded {
			n.Error = "the agent gave up"
		}
		s.Nodes = append(s.Nodes, n)
	}
	return s
}

type parsedSuites struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Time    string `xml:"time,attr"`
			Failure *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Type string `xml:"type,attr"`
			} `xml:"error"`
			Out string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, b []byte) parsedSuites {
	t.Helper()
	var p parsedSuites
	require.NoError(t, xml.Unmarshal(b, &p), "%s", b)
	require.Len(t, p.Suites, 1)
	return p
}

func TestJUnit(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		sum                     *run.Summary
		cases, failures, errors int
		names                   []string
		lastType                string
	}{
		{name: "succeeded, a node visited twice is two cases", sum: summary(run.StatusSucceeded, "succeeded", "succeeded", "succeeded"),
			cases: 3, names: []string{"2 Step text…", "3 Step text…", "2 Step text… (visit 2)"}},
		{name: "a failed step", sum: summary(run.StatusFailed, "succeeded", "failed"), cases: 2, failures: 1, lastType: "failed"},
		{name: "interrupted is an error", sum: summary(run.StatusInterrupted, "succeeded", "interrupted"), cases: 2, errors: 1, lastType: "interrupted"},
		{name: "a limit blames no step: one more case", sum: summary(run.StatusLimit, "succeeded", "succeeded"), cases: 3, failures: 1, lastType: "limit_reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, JUnit(&b, tc.sum, Report{Chart: "charts/release.csv"}))
			p := parseJUnit(t, b.Bytes())
			s := p.Suites[0]
			assert.Equal(t, "Release", s.Name)
			assert.Equal(t, tc.cases, s.Tests)
			assert.Len(t, s.Cases, tc.cases)
			assert.Equal(t, tc.failures, s.Failures)
			assert.Equal(t, tc.errors, s.Errors)
			assert.Equal(t, tc.cases, p.Tests)
			seen := map[string]bool{}
			for i, c := range s.Cases {
				assert.False(t, seen[c.Name], "case names are distinct: %s", c.Name)
				seen[c.Name] = true
				if i < len(tc.names) {
					assert.Equal(t, tc.names[i], c.Name)
				}
			}
			assert.Equal(t, "1.500", s.Cases[0].Time)
			assert.Contains(t, s.Cases[0].Out, "cli: claude · 1 attempt · 1,200 in, 34 out tokens · $0.0123")
			last := s.Cases[len(s.Cases)-1]
			switch {
			case last.Failure != nil:
				assert.Equal(t, tc.lastType, last.Failure.Type)
			case last.Error != nil:
				assert.Equal(t, tc.lastType, last.Error.Type)
			default:
				assert.Empty(t, tc.lastType)
			}
		})
	}
}

// A fork run's cases name the branch each step ran on, the run's own
// steps none (readme/ci.md#junit): the same node in two branches, or on
// the run's own and a branch, is two distinct cases.
func TestJUnitNamesTheBranch(t *testing.T) {
	t.Parallel()
	sum := summary(run.StatusSucceeded, "succeeded", "succeeded", "succeeded", "succeeded")
	sum.Nodes[1].Branch = "plan/tests"
	sum.Nodes[2].Branch = "plan/docs"
	sum.Nodes[2].ID, sum.Nodes[2].Visit = "3", 1 // each branch counts its own visits
	var b bytes.Buffer
	require.NoError(t, JUnit(&b, sum, Report{Chart: "charts/release.csv"}))
	p := parseJUnit(t, b.Bytes())
	var names []string
	for _, c := range p.Suites[0].Cases {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"2 Step text…", "plan/tests › 3 Step text…", "plan/docs › 3 Step text…", "3 Step text… (visit 2)"}, names)
	assert.Contains(t, b.String(), `classname="dtree.release"`, "one class for the chart's steps, whatever their branch")
}

// Secrets are masked before escaping; text XML cannot hold is replaced;
// a huge output is cut to a bounded size.
func TestJUnitMasksAndBounds(t *testing.T) {
	sum := summary(run.StatusFailed, "failed")
	sum.Nodes[0].Text = "Deploy with hunter2 \x00\x1b]0;x\x07 ]]> <done/>"
	sum.Nodes[0].Error = "hunter2 was refused\nsecond line"
	sum.Nodes[0].Output = strings.Repeat("hunter2 ", 1<<17) // 1 MiB
	var b bytes.Buffer
	mask := func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") }
	require.NoError(t, JUnit(&b, sum, Report{Chart: "c.csv", Mask: mask}))
	assert.NotContains(t, b.String(), "hunter2")
	assert.Less(t, b.Len(), 3*maxCaseText, "the report does not grow with the output")
	p := parseJUnit(t, b.Bytes())
	c := p.Suites[0].Cases[0]
	assert.Equal(t, "2 Deploy with *** \uFFFD\uFFFD]0;x\uFFFD ]]> <done/>", c.Name)
	require.NotNil(t, c.Failure)
	assert.Equal(t, "*** was refused", c.Failure.Message, "the message is the first line")
	assert.Equal(t, "*** was refused\nsecond line", c.Failure.Text)
	assert.Contains(t, c.Out, "bytes left out")
}

func TestStepSummary(t *testing.T) {
	sum := summary(run.StatusFailed, "succeeded", "failed")
	sum.Error = "node 3 failed: <b>bad</b>"
	sum.Usage = sum.Nodes[0].Usage
	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.csv"}, Diagram: "flowchart TD\n  n0\n"}))
	got := b.String()
	assert.True(t, strings.HasPrefix(got, "### ❌ dtree: Release — failed\n\nRun `20261125T010203Z-abcdef` of `c.csv`: 2 steps · 4.3s · 1,200 in, 34 out tokens · $0.0123.\n"), got)
	assert.Contains(t, got, "> node 3 failed: \\<b\\>bad\\</b\\>\n")
	assert.Contains(t, got, "```mermaid\nflowchart TD\n  n0\n```\n")
	assert.Contains(t, got, "| 2 | 3 Step text… | ❌ failed | 1.5s | 1 | 1,200 in, 34 out | $0.0123 |\n")
	assert.Contains(t, got, "Go on from where it stopped: `dtree resume 20261125T010203Z-abcdef`.")
}

// A resumed run's summary counts the steps it ran in its time, and those
// it took from the run before in theirs.
func TestStepSummaryOfAResumedRun(t *testing.T) {
	sum := summary(run.StatusSucceeded, "succeeded", "succeeded")
	sum.Resumed = &run.Resumed{From: "20261125T000000Z-aaaaaa", Steps: 1, DurationMS: 61000}
	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.csv"}}))
	assert.Contains(t, b.String(), "of `c.csv`: 1 step · 4.3s · 1 taken from run `20261125T000000Z-aaaaaa` (1m1s)", b.String())
}

// A run of many steps and long texts gives a summary of bounded size: the
// table stops at maxRows, each name at its excerpt.
func TestStepSummaryIsBounded(t *testing.T) {
	steps := make([]string, 5000)
	for i := range steps {
		steps[i] = run.StatusSucceeded
	}
	sum := summary(run.StatusSucceeded, steps...)
	for i := range sum.Nodes {
		sum.Nodes[i].Text = strings.Repeat("word ", 20000)
	}
	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.csv"}}))
	assert.Equal(t, maxRows+2, strings.Count(b.String(), "\n|"), "the header, its rule and maxRows rows")
	assert.True(t, strings.Contains(b.String(), "\n4800 steps more in events.jsonl.\n"), "says how many steps the table leaves out")
	assert.Less(t, b.Len(), 100<<10)
}

// bigDoc is a page of n process steps in a chain, Start to End.
func bigDoc(n int) *types.Document {
	d := &types.Document{FormatVersion: 1, Title: "Big", Source: "big.csv", Pages: []types.Page{{ID: "p", Root: "s"}}}
	d.Nodes = append(d.Nodes, types.Node{ID: "s", Page: "p", Kind: types.KindTerminator, Text: "Start"})
	prev := "s"
	for i := range n {
		id := fmt.Sprint("n", i)
		d.Nodes = append(d.Nodes, types.Node{ID: id, Page: "p", Kind: types.KindProcess, Text: fmt.Sprintf("Step %d with a text long enough to wrap over two lines", i)})
		d.Edges = append(d.Edges, types.Edge{ID: "e" + id, Page: "p", From: prev, To: id})
		prev = id
	}
	return d
}

// nodeLines are a Mermaid diagram's node definitions.
var nodeLines = regexp.MustCompile(`(?m)^  n[0-9]+[\[({]`)

func TestPicture(t *testing.T) {
	ctx := context.Background()
	trace := func(visited int) *export.Trace {
		tr := &export.Trace{Page: "p", Status: "succeeded", Visits: map[string]int{"s": 1}, Retries: map[string]int{}}
		prev := "s"
		for i := range visited {
			id := fmt.Sprint("n", i)
			tr.Visits[id] = 1
			tr.Steps = append(tr.Steps, export.Step{From: prev, To: id})
			prev = id
		}
		return tr
	}

	small, note, err := Picture(ctx, bigDoc(5), trace(3), nil)
	require.NoError(t, err)
	assert.Empty(t, note)
	assert.Contains(t, small, "flowchart TD\n")
	assert.Len(t, nodeLines.FindAllString(small, -1), 6, "every node of the page")

	// A page too large for GitHub: the path alone.
	path, note, err := Picture(ctx, bigDoc(2000), trace(3), nil)
	require.NoError(t, err)
	assert.Contains(t, note, "the run's path alone")
	assert.LessOrEqual(t, len(path), MermaidLimit)
	assert.Len(t, nodeLines.FindAllString(path, -1), 4, "Start and the three steps taken")

	// A path too large as well: no diagram, and why.
	none, note, err := Picture(ctx, bigDoc(2000), trace(2000), nil)
	require.NoError(t, err)
	assert.Empty(t, none)
	assert.Contains(t, note, "too large for GitHub to draw")
}

// Every part of a summary is bounded: a chart whose title is 2 MB (GitHub
// drops a summary over 1 MiB) gives a summary of a few kilobytes, its
// title cut and escaped.
func TestStepSummaryBoundsEveryPart(t *testing.T) {
	t.Parallel()
	huge := "<img src=x> " + strings.Repeat("title ", 350_000)
	sum := summary(run.StatusFailed, "succeeded", "failed")
	sum.Title, sum.Error, sum.Logs.Dir = huge, huge, huge
	sum.Nodes[1].Label = huge
	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: huge}, Note: huge}))
	got := b.String()
	assert.Less(t, len(got), 16<<10, "no part is quoted whole")
	assert.True(t, strings.HasPrefix(got, "### ❌ dtree: \\<img src\\=x\\> title title "), got[:100])
	heading, _, _ := strings.Cut(got, "\n")
	assert.NotRegexp(t, `[^\\]<`, heading, "markup is escaped")

	b.Reset()
	require.NoError(t, NotRunSummary(&b, huge, huge, []string{huge, huge}, Report{}))
	assert.Less(t, b.Len(), 16<<10)

	b.Reset()
	sum.Logs.Dir = "logs/r1" // a path a tool reads: whole
	require.NoError(t, JUnit(&b, sum, Report{Chart: "c.csv"}))
	assert.Less(t, b.Len(), 64<<10, "the JUnit report quotes the title cut too")
}

// Whatever still passes is cut under 1 MiB at a line's end, with a note.
func TestBoundedCutsTheWhole(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("x", 99) + "\n"
	assert.Equal(t, line, bounded(line))
	got := bounded(strings.Repeat(line, 30_000))
	assert.LessOrEqual(t, len(got), maxSummary)
	assert.Contains(t, got, "\n\n*The summary was cut at ")
	assert.Contains(t, got, "of its 3000000 bytes: GitHub takes 1 MiB.")
	before, _, _ := strings.Cut(got, "\n\n*The summary")
	assert.Equal(t, 0, (len(before)+1)%100, "cut at a line's end")
}

// A long run's summary keeps its newest steps: the job summary counts
// them all, numbers the rows as the run did, and says where the first
// ones are.
func TestStepSummaryOfALongRun(t *testing.T) {
	sum := summary(run.StatusSucceeded, run.StatusSucceeded, run.StatusSucceeded)
	sum.NodesLeftOut = 99_998
	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.csv"}}))
	got := b.String()
	assert.Contains(t, got, ": 100000 steps · ")
	assert.Contains(t, got, "The first 99998 steps are in events.jsonl only.\n")
	assert.Contains(t, got, "\n| 99999 | ")
	assert.Contains(t, got, "\n| 100000 | ")
}

// A run of a Mermaid chart is drawn onto the author's own text when it
// can be, and otherwise says why, for dtree's own drawing to stand in.
func TestAuthorPicture(t *testing.T) {
	t.Parallel()
	src := "flowchart LR\n  a([Start]) --> b{Ok?}\n  b -->|Yes| c([Done])\n"
	tr := &export.Trace{RunID: "r1", Status: "succeeded", Visits: map[string]int{"a": 1, "b": 1, "c": 1, "a,b": 1}}
	has := func(ids ...string) func(string) bool {
		return func(id string) bool { return slices.Contains(ids, id) }
	}
	for _, tc := range []struct {
		name       string
		src        string
		known      func(string) bool
		mask       func(string) string
		want, note string // want: a part of the diagram; "" for none
	}{
		{name: "drawn onto the author's text", src: src, known: has("a", "b", "c", "a,b"),
			want: src + "%% run r1 drawn by dtree graph --run: succeeded\nclassDef dtreeTaken ",
			note: "Node a,b of the run is not marked: Mermaid's class lines cannot name its id."},
		{name: "too large for GitHub", src: src + strings.Repeat("  %% padding\n", MermaidLimit/13), known: has("a", "b", "c"),
			note: "The chart's Mermaid is too large for GitHub to draw (50058 characters, over 50000); this is dtree's drawing of the run instead."},
		{name: "the run onto it too large", src: src + strings.Repeat("  %% padding\n", MermaidLimit/13-10), known: has("a", "b", "c", "a,b"),
			note: "The chart's Mermaid with the run on it is too large for GitHub to draw"},
		{name: "changed since the run", src: src, known: has("a", "b"),
			note: "The chart's Mermaid no longer has node a,b of the run (it changed while the run ran); this is dtree's drawing of the run instead."},
		{name: "a secret in the text", src: src, known: has("a", "b", "c", "a,b"),
			mask: func(s string) string { return strings.ReplaceAll(s, "Done", "***") },
			note: "The chart's Mermaid holds the value of a secret, which the summary does not show; this is dtree's drawing of the run instead."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			diagram, note := AuthorPicture([]byte(tc.src), tr, tc.known, nil, tc.mask)
			assert.Contains(t, note, tc.note)
			if tc.want == "" {
				assert.Empty(t, diagram)
				return
			}
			assert.True(t, strings.HasPrefix(diagram, tc.want), diagram)
			assert.LessOrEqual(t, len(diagram), MermaidLimit)
		})
	}
}

// The author's Mermaid may hold backticks (a Markdown label, "`text`",
// or a line of them in a .mmd file): the summary's fence is longer than
// any run of them, so no line of the text closes it and nothing after it
// is read as Markdown.
func TestStepSummaryFenceHoldsTheAuthorsText(t *testing.T) {
	t.Parallel()
	diagram := "flowchart TD\n  a[\"`**bold**`\"] --> b\n```\n<img src=x onerror=alert(1)>\n``````\n"
	sum := summary(run.StatusSucceeded, "succeeded")
	var b bytes.Buffer
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.mmd"}, Diagram: diagram}))
	got := b.String()
	assert.Contains(t, got, "\n```````mermaid\n"+diagram+"```````\n\n", "seven backticks: one more than the longest run")
	// CommonMark: the block ends at the first line of at least as many
	// backticks as it opened with, and only there.
	open := strings.Index(got, "```````mermaid\n")
	rest := got[open+len("```````mermaid\n"):]
	end := regexp.MustCompile("(?m)^ {0,3}`{7,}[ \t]*$").FindStringIndex(rest)
	require.NotNil(t, end)
	assert.Equal(t, diagram, rest[:end[0]], "the block holds the text whole, and ends right after it")

	// dtree's own drawing has no backtick: the usual three.
	b.Reset()
	require.NoError(t, StepSummary(&b, sum, Summary{Report: Report{Chart: "c.csv"}, Diagram: "flowchart TD\n  n0\n"}))
	assert.Contains(t, b.String(), "\n```mermaid\nflowchart TD\n  n0\n```\n")
}
