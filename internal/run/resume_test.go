package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/testchart"
)

// Lines of an events.jsonl, short: the fields ReadCarried reads.
const (
	evStart = `{"time":"2026-11-25T00:00:00Z","event":"run_start","run_id":"r1","start":"2","page":"1","graph_digest":"d"}`
	evNS3   = `{"time":"2026-11-25T00:00:01Z","event":"node_start","node":"3","visit":1,"role":"process","cli":"fake","run_id":"r1"}`
	evCall3 = `{"time":"2026-11-25T00:00:02Z","event":"agent_call","node":"3","attempt":1,"purpose":"run","cli":"fake","run_id":"r1"}`
	evNE3   = `{"time":"2026-11-25T00:00:03Z","event":"node_end","node":"3","visit":1,"status":"succeeded","next":"4","output":"{\"completed\": true}","response":{"completed":true},"run_id":"r1"}`
	evNS4   = `{"time":"2026-11-25T00:00:04Z","event":"node_start","node":"4","visit":1,"role":"decision","cli":"fake","run_id":"r1"}`
	evNE4   = `{"time":"2026-11-25T00:00:05Z","event":"node_end","node":"4","visit":1,"status":"succeeded","next":"3","label":"No","response":{"answer":"No"},"run_id":"r1"}`
	evNS3b  = `{"time":"2026-11-25T00:00:06Z","event":"node_start","node":"3","visit":2,"role":"process","cli":"fake","run_id":"r1"}`
	evFail3 = `{"time":"2026-11-25T00:00:07Z","event":"node_end","node":"3","visit":2,"status":"failed","error":"boom","run_id":"r1"}`
	evEnd   = `{"time":"2026-11-25T00:00:08Z","event":"run_end","status":"failed","run_id":"r1"}`
)

func TestReadCarried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		lines     []string
		wantPath  []string
		wantAt    string
		wantEnded bool
		wantTorn  bool
		// wantDamaged is the line where reading stopped, 0 for none.
		wantDamaged int
		wantErr     string
	}{
		{name: "failed step is not taken", lines: []string{evStart, evNS3, evCall3, evNE3, evNS4, evNE4, evNS3b, evFail3, evEnd},
			wantPath: []string{"3", "4"}, wantAt: "3"},
		{name: "killed mid-step, a torn last line", lines: []string{evStart, evNS3, evCall3, evNE3, evNS4, `{"time":"2026-11-25T00:00:05Z","event":"agent_ca`},
			wantPath: []string{"3"}, wantAt: "4", wantTorn: true},
		{name: "reading stops at a line mid-way that is not an event", lines: []string{evStart, evNS3, evCall3, evNE3, evNS4, "not json", evNE4},
			wantPath: []string{"3"}, wantAt: "4", wantDamaged: 6},
		{name: "a torn line mid-way", lines: []string{evStart, evNS3, evCall3, evNE3[:40], evNS4, evNE4},
			wantPath: []string{}, wantAt: "", wantDamaged: 4},
		{name: "an event of a newer dtree is carried", lines: []string{evStart, evNS3, `{"time":"t","event":"from_the_future","node":"3"}`, evNE3},
			wantPath: []string{"3"}, wantAt: "4"},
		{name: "nothing finished", lines: []string{evStart, evNS3}, wantPath: []string{}, wantAt: ""},
		{name: "a run at its end", lines: []string{evStart, evNS3, evNE3, `{"time":"t","event":"end","node":"5"}`,
			`{"time":"t","event":"run_end","status":"succeeded"}`}, wantPath: []string{"3"}, wantEnded: true},
		{name: "no run_start", lines: []string{evNS3}, wantErr: "does not start with run_start"},
		{name: "empty", lines: nil, wantErr: "no run_start"},
		{name: "two runs", lines: []string{evStart, evStart}, wantErr: "two run_start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := ReadCarried(strings.NewReader(strings.Join(tt.lines, "\n")))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantPath, c.Path())
			assert.Equal(t, tt.wantAt, c.At)
			assert.Equal(t, tt.wantEnded, c.Ended)
			assert.Equal(t, tt.wantTorn, c.Torn)
			if tt.wantDamaged == 0 {
				assert.Nil(t, c.Damaged)
			} else if assert.NotNil(t, c.Damaged) {
				assert.Equal(t, tt.wantDamaged, c.Damaged.Line)
			}
			assert.Equal(t, "r1", c.Start.RunID)
		})
	}
}

func TestCarriedFrom(t *testing.T) {
	t.Parallel()
	read := func() *Carried {
		c, err := ReadCarried(strings.NewReader(strings.Join([]string{evStart, evNS3, evNE3, evNS4, evNE4, evNS3b, evFail3}, "\n")))
		require.NoError(t, err)
		return c
	}
	c := read()
	require.NoError(t, c.From("4"))
	assert.Equal(t, []string{"3"}, c.Path())
	assert.Equal(t, "4", c.At)

	c = read()
	require.NoError(t, c.From("3")) // its latest visit on the path
	assert.Equal(t, []string{}, c.Path())
	assert.Equal(t, "3", c.At)

	c = read()
	var fe *FromError
	require.ErrorAs(t, c.From("9"), &fe)
	assert.Equal(t, "--from 9: node 9 is not on the run's path (3 → 4)", fe.Error())
}

// resumeChart is a linear chart of n process steps between a start and an
// end, each validated.
func resumeChart(tb testing.TB, n int) (*chart.Chart, *agent.Registry) {
	tb.Helper()
	var b bytes.Buffer
	require.NoError(tb, testchart.LinearCSV(&b, n+2))
	return fakeChart(tb, &b)
}

// failingRun runs the chart with its last step failing, and returns its
// log directory: steps-1 steps finished.
func failingRun(tb testing.TB, c *chart.Chart, reg *agent.Registry, logDir string) string {
	tb.Helper()
	page := c.Doc.Pages[0]
	last := c.Nodes[len(c.Doc.Nodes)-2].ID // the step before the end
	runner := func(_ context.Context, call agent.Call) (agent.Result, error) {
		if call.Request.Node == last {
			return agent.Result{}, errors.New("overloaded")
		}
		if call.Request.Purpose == agent.PurposeValidate {
			return agent.Result{Answer: valid}, nil
		}
		return agent.Result{Answer: done}, nil
	}
	log, err := runlog.Open(runlog.Options{Dir: logDir, Short: true})
	require.NoError(tb, err)
	defer log.Close()
	_, err = Walk(context.Background(), Options{Chart: c, Page: page, Start: page.Root, Registry: reg, Runner: runner,
		Backoff: func(int) time.Duration { return 0 }, Log: log, MaxSteps: 1000})
	var failed *NodeFailedError
	require.ErrorAs(tb, err, &failed)
	return log.Dir
}

func TestResumeTakesTheFinishedSteps(t *testing.T) {
	t.Parallel()
	c, reg := resumeChart(t, 5)
	dir := failingRun(t, c, reg, t.TempDir())
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	carried, err := ReadCarried(f)
	require.NoError(t, err)
	require.Len(t, carried.Steps, 4)

	var called []string
	runner := func(_ context.Context, call agent.Call) (agent.Result, error) {
		called = append(called, call.Request.Node+" "+call.Request.Purpose)
		if call.Request.Purpose == agent.PurposeValidate {
			return agent.Result{Answer: valid}, nil
		}
		return agent.Result{Answer: done}, nil
	}
	log, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true})
	require.NoError(t, err)
	defer log.Close()
	page := c.Doc.Pages[0]
	sum, err := Walk(context.Background(), Options{Chart: c, Page: page, Start: carried.Start.Start, Registry: reg, Runner: runner,
		Backoff: func(int) time.Duration { return 0 }, Log: log, Resume: carried})
	require.NoError(t, err)
	last := c.Nodes[len(c.Doc.Nodes)-2].ID
	assert.Equal(t, []string{last + " run", last + " validate"}, called, "only the step that failed runs again")
	assert.Len(t, sum.Nodes, 5)
	assert.Equal(t, 10, sum.Usage.Calls, "the taken steps' calls count")
	assert.Len(t, sum.Path, 7)
}

// BenchmarkResume200 is the time dtree resume takes to rebuild a run of
// 200 finished steps (each with its validation) before its first agent
// call: the events read, the steps taken, the new log opened and written
// (readme/performance.md#resume). ns-to-call is that time.
func BenchmarkResume200(b *testing.B) {
	c, reg := resumeChart(b, 201)
	dir := failingRun(b, c, reg, b.TempDir())
	logDir := b.TempDir()
	page := c.Doc.Pages[0]
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		f, err := os.Open(filepath.Join(dir, "events.jsonl"))
		require.NoError(b, err)
		carried, err := ReadCarried(f)
		f.Close()
		require.NoError(b, err)
		log, err := runlog.Open(runlog.Options{Dir: logDir, Short: true})
		require.NoError(b, err)
		ctx, cancel := context.WithCancel(context.Background())
		runner := func(context.Context, agent.Call) (agent.Result, error) {
			total += time.Since(start)
			cancel()
			return agent.Result{}, context.Canceled
		}
		_, err = Walk(ctx, Options{Chart: c, Page: page, Start: carried.Start.Start, Registry: reg, Runner: runner,
			Backoff: func(int) time.Duration { return 0 }, Log: log, Resume: carried, MaxSteps: 1000})
		require.ErrorIs(b, err, context.Canceled)
		require.Len(b, carried.Steps, 200)
		log.Close()
		cancel()
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns-to-call")
}

// FuzzReadCarried: whatever events.jsonl holds, reading it for a resume
// does not panic, and what it takes is consistent: each step ended
// succeeded, and the run goes on where the last one led.
func FuzzReadCarried(f *testing.F) {
	f.Add(strings.Join([]string{evStart, evNS3, evCall3, evNE3, evNS4, evNE4, evNS3b, evFail3, evEnd}, "\n"))
	f.Add(evStart + "\n" + evNS3 + "\n" + `{"time":"t","event":"node_end","node":"3"`)
	f.Add(evStart + "\n" + evNE3)
	f.Fuzz(func(t *testing.T, log string) {
		c, err := ReadCarried(strings.NewReader(log))
		if err != nil {
			return
		}
		for _, s := range c.Steps {
			if s.End.Status != StatusSucceeded || s.End.Node != s.Start.Node {
				t.Fatalf("took a step that did not succeed: %+v", s.End)
			}
		}
		if n := len(c.Steps); n > 0 && !c.Ended && c.At != c.Steps[n-1].End.Next {
			t.Fatalf("goes on at %q, not where the last step led (%q)", c.At, c.Steps[n-1].End.Next)
		}
	})
}

// checkChart: Start → 3 → 4; 4 says No → 3, Yes → 5 → End.
const checkChart = `Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments
1,Page,,,,,,,,,,,Main,
2,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,Start,
3,Process,Flowchart Shapes/Containers,1,,,,,,,,,Work,
4,Decision,Flowchart Shapes/Containers,1,,,,,,,,,Again?,
5,Process,Flowchart Shapes/Containers,1,,,,,,,,,Ship,
6,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,End,
10,Line,,1,,,2,3,None,Arrow,,,,
11,Line,,1,,,3,4,None,Arrow,,,,
12,Line,,1,,,4,3,None,Arrow,,,No,
13,Line,,1,,,4,5,None,Arrow,,,Yes,
14,Line,,1,,,5,6,None,Arrow,,,,`

// Check: a carried path is one of the chart's, or the error names the
// line of events.jsonl and the node to run again from.
func TestCarriedCheck(t *testing.T) {
	t.Parallel()
	c, _ := fakeChart(t, strings.NewReader(checkChart))
	ns := func(node string) string {
		return `{"time":"t","event":"node_start","node":"` + node + `","visit":1,"role":"process","cli":"fake","run_id":"r1"}`
	}
	ne := func(node, label, next string) string {
		return `{"time":"t","event":"node_end","node":"` + node + `","visit":1,"status":"succeeded","label":"` + label + `","next":"` + next + `","run_id":"r1"}`
	}
	tests := []struct {
		name     string
		lines    []string
		wantErr  string
		wantNode string
	}{
		{name: "a path of the chart", lines: []string{evStart, ns("3"), ne("3", "", "4"), ns("4"), ne("4", "No", "3")}},
		{name: "a next no line leads to", lines: []string{evStart, ns("3"), ne("3", "", "5")},
			wantErr: "events.jsonl line 3: node 3 led to 5, but the chart has no line 3 → 5 (its lines go to 4)", wantNode: "3"},
		{name: "the other branch's label", lines: []string{evStart, ns("3"), ne("3", "", "4"), ns("4"), ne("4", "Yes", "3")},
			wantErr: `events.jsonl line 5: node 4 led to 3 by "Yes", but the chart has no line 4 → 3 labelled "Yes" (its lines go to 3, 5)`, wantNode: "4"},
		{name: "a step skipped", lines: []string{evStart, ns("3"), ne("3", "", "4"), ns("5"), ne("5", "", "6")},
			wantErr: "events.jsonl line 4: the run went on at node 5, but the step before it led to 4", wantNode: "3"},
		{name: "not at the start", lines: []string{evStart, ns("4"), ne("4", "No", "3")},
			wantErr: "events.jsonl line 2: the run's first step is node 4, not its start 3", wantNode: "4"},
		{name: "a node the chart has not", lines: []string{evStart, ns("9"), ne("9", "", "3")},
			wantErr: "events.jsonl line 2: the run took node 9, which the chart does not have", wantNode: "9"},
		{name: "the end where lines go on", lines: []string{evStart, ns("3"), ne("3", "", "")},
			wantErr: "events.jsonl line 3: node 3 led to the end, but the chart has lines from it (to 4)", wantNode: "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := ReadCarried(strings.NewReader(strings.Join(tt.lines, "\n")))
			require.NoError(t, err)
			err = r.Check(c, "2")
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			var pe *PathError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.wantErr, pe.Error())
			assert.Equal(t, tt.wantNode, pe.Node)
		})
	}
}
