package prompts

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// history is n process steps whose comments are size bytes each.
func history(n, size int) func(i int) Step {
	return func(i int) Step {
		return Step{Node: fmt.Sprint(i + 1), Text: fmt.Sprintf("Step %d of the work", i+1), Kind: "process",
			Status: "succeeded", Comments: []string{fmt.Sprintf("done %d: ", i+1) + strings.Repeat("c", size)}}
	}
}

func TestRunSoFar(t *testing.T) {
	hostile := "ran $(rm -rf /) and `id`; said \"done\" and 'ok'\nsecond line\ttab"
	tests := []struct {
		name  string
		steps []Step
		want  []string // in the section, in this order
		not   []string
	}{
		{name: "no steps"},
		{name: "a process, a command, a decision", steps: []Step{
			{Node: "4", Text: "Run the tests\nwith care", Kind: "process", Status: "succeeded", Comments: []string{"3 tests fail", "in parse"}},
			{Node: "5", Text: "Build", Kind: "command", Status: "failed", Command: "make build", ExitCode: 2, Output: "compiling\nerror: x.go:3"},
			{Node: "6", Text: "Did it pass?", Kind: "decision", Status: "succeeded", Answer: "No", Reasons: []string{"the build failed"}},
		}, want: []string{
			"## The run so far\n",
			"### Step 1: node 4 \"Run the tests\" (process, succeeded)\nComments:\n- 3 tests fail\n- in parse\n",
			"### Step 2: node 5 \"Build\" (command, exit status 2, failed)\nCommand: make build\nOutput, last lines:\ncompiling\nerror: x.go:3\n",
			"### Step 3: node 6 \"Did it pass?\" (decision, succeeded)\nAnswer: No\nReasons:\n- the build failed",
		}, not: []string{"with care", "left out"}},
		{name: "hostile text arrives as it is", steps: []Step{
			{Node: "1", Text: "Work", Kind: "process", Status: "succeeded", Comments: []string{hostile}},
		}, want: []string{"- " + hostile}},
		{name: "a command's output: its last 20 lines", steps: []Step{
			{Node: "1", Text: "Test", Kind: "command", Status: "succeeded", Command: "go test", Output: strings.Repeat("early\n", 100) + strings.Repeat("late\n", 20)},
		}, want: []string{"Output, last lines:\n" + strings.TrimSuffix(strings.Repeat("late\n", 20), "\n")}, not: []string{"early"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RunSoFar(len(tt.steps), func(i int) Step { return tt.steps[i] }, RunSoFarBytes)
			if len(tt.steps) == 0 && got != "" {
				t.Fatalf("no steps: got %q", got)
			}
			at := 0
			for _, w := range tt.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("missing, or out of order: %q\nin:\n%s", w, got)
				}
				at += i + len(w)
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("has %q:\n%s", n, got)
				}
			}
		})
	}
}

// The bound holds at any length of run: the newest steps whole, older ones
// cut to their heading, then counted.
func TestRunSoFarBound(t *testing.T) {
	tests := []struct {
		steps, size int
		wantWhole   int  // newest steps shown whole
		leftOut     bool // a "… N earlier steps" line
	}{
		{steps: 1, size: 100, wantWhole: 1},
		{steps: 10, size: 100, wantWhole: 10},
		{steps: 10, size: 2000, wantWhole: 3},
		{steps: 100, size: 100, wantWhole: 40, leftOut: true},
		{steps: 1000, size: 100, leftOut: true},
		{steps: 1000, size: 2000, leftOut: true},
		{steps: 1, size: 1 << 20},
		{steps: 3, size: 1 << 20},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d steps of %d bytes", tt.steps, tt.size), func(t *testing.T) {
			got := RunSoFar(tt.steps, history(tt.steps, tt.size), RunSoFarBytes)
			if len(got) > RunSoFarBytes {
				t.Fatalf("%d bytes, over the bound of %d", len(got), RunSoFarBytes)
			}
			newest := fmt.Sprintf("### Step %d: node %d ", tt.steps, tt.steps)
			if !strings.Contains(got, newest) {
				t.Fatalf("the newest step is not in it:\n%.500s", got)
			}
			if tt.size < RunSoFarBytes/2 && !strings.Contains(got, fmt.Sprintf("- done %d: %s\n", tt.steps, strings.Repeat("c", tt.size))) &&
				!strings.HasSuffix(got, fmt.Sprintf("- done %d: %s", tt.steps, strings.Repeat("c", tt.size))) {
				t.Errorf("the newest step is not whole")
			}
			if tt.size >= RunSoFarBytes && !strings.Contains(got, "… (cut) …") {
				t.Errorf("an enormous newest step keeps its beginning and end with a mark between")
			}
			if left := strings.Contains(got, "earlier step"); left != tt.leftOut && tt.wantWhole > 0 {
				t.Errorf("left-out line: %t, want %t", left, tt.leftOut)
			}
			if whole := strings.Count(got, "\n- done "); tt.wantWhole > 0 && whole < tt.wantWhole {
				t.Errorf("%d steps whole, want at least %d", whole, tt.wantWhole)
			}
			// Oldest first: step numbers only grow.
			last := 0
			for _, line := range strings.Split(got, "\n") {
				var k int
				if _, err := fmt.Sscanf(line, "### Step %d:", &k); err == nil {
					if k <= last {
						t.Fatalf("step %d after step %d", k, last)
					}
					last = k
				}
			}
		})
	}
}

// Building the section reads only the steps it shows: a run of a
// million steps costs what one of a hundred does.
func TestRunSoFarCostIsBounded(t *testing.T) {
	read := 0
	step := history(1_000_000, 200)
	start := time.Now()
	got := RunSoFar(1_000_000, func(i int) Step { read++; return step(i) }, RunSoFarBytes)
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v", took)
	}
	if read > 200 {
		t.Errorf("read %d steps to show %d bytes", read, len(got))
	}
	if !strings.Contains(got, "… 999") {
		t.Errorf("no left-out count:\n%.300s", got)
	}
}

func BenchmarkRunSoFar(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("%d_steps", n), func(b *testing.B) {
			step := history(n, 120) // a step's comments, about a line
			var size int
			for b.Loop() {
				size = len(RunSoFar(n, step, RunSoFarBytes))
			}
			b.ReportMetric(float64(size), "bytes/section")
		})
	}
}

// Entries gives the section RunSoFar gives, and renders each step once
// over a run, where RunSoFar alone renders every step in view again for
// each step after it (readme/performance.md#running-a-chart).
func TestEntriesRenderEachStepOnce(t *testing.T) {
	sizes := []int{10, 100, 3000, 20, 9000, 50, 0, 400}
	steps := make([]Step, 600)
	for i := range steps {
		size := sizes[i%len(sizes)]
		steps[i] = Step{Node: fmt.Sprint(i), Text: fmt.Sprintf("Step %d", i), Kind: "process", Status: "succeeded",
			Comments: []string{strings.Repeat("c", size)}}
		if i%5 == 3 {
			steps[i] = Step{Node: fmt.Sprint(i), Text: "Test", Kind: "command", Status: "failed", Command: "go test",
				ExitCode: 1, Output: strings.Repeat("line of output\n", size/10)}
		}
	}
	var m Entries
	renders := 0
	for n := 0; n <= len(steps); n++ {
		step := func(i int) Step { renders++; return steps[i] }
		got := m.RunSoFar(n, step, RunSoFarBytes)
		want := RunSoFar(n, func(i int) Step { return steps[i] }, RunSoFarBytes)
		if got != want {
			t.Fatalf("after %d steps, the section differs from RunSoFar's:\n got %q\nwant %q", n, got, want)
		}
	}
	// Once each, and again only for a newest step too large to show
	// whole (cut in its middle).
	if limit := 2 * len(steps); renders > limit {
		t.Errorf("rendered steps %d times over a run of %d steps; want at most %d", renders, len(steps), limit)
	}
	if len(m.items) > RunSoFarBytes/minEntry {
		t.Errorf("keeps %d steps; want only those in view", len(m.items))
	}
}
