package run

import (
	"context"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
)

// Budgets of what dtree does a step between two agents (BenchmarkWalk200),
// with room over what it does on 2026-11-27: 235 allocations and 45 KB
// (readme/performance.md#running-a-chart). They count, so a loaded machine
// does not move them as it moves the time. Each of the step's costs that
// made benchrun 1.33x passes one: the run so far rendered again for every
// step (988 allocations, 147 KB), a 64 KiB buffer for each short.json
// (154 KB), a new file for each short.json (1 a step; now 0.02); and so
// does short.json joined and masked whole at every rewrite (96 KB).
const (
	agentTime      = time.Millisecond
	maxAllocsAStep = 400
	maxBytesAStep  = 72 << 10
	maxFilesAStep  = 0.5
)

// BenchmarkWalk200 is what dtree does between two agents, in process: a
// chain of 200 process steps, unvalidated as benchrun's, walked with an
// agent that answers in a millisecond, as benchrun's lean agent does (its
// envelope written to long.log as an agent's output is), every log
// written: events.jsonl, long.log and short.json. It reports the time
// (the agent's millisecond left out), allocations, bytes and files made a
// step, and fails when one passes its budget. benchrun
// times the whole run, processes and all, against a shell loop.
func BenchmarkWalk200(b *testing.B) {
	const steps = 200
	c, reg := resumeChart(b, steps)
	page := c.Doc.Pages[0]
	var files atomic.Int64
	open := func(name string, flag int, perm os.FileMode) (runlog.File, error) {
		if flag&os.O_CREATE != 0 {
			files.Add(1)
		}
		return os.OpenFile(name, flag, perm)
	}
	const envelope = `{"type":"result","subtype":"success","is_error":false,"result":"{\"completed\": true, \"comments\": [\"summarised\"]}"}` + "\n"
	var asleep time.Duration
	runner := func(_ context.Context, call agent.Call) (agent.Result, error) {
		t := time.Now()
		time.Sleep(agentTime)
		asleep += time.Since(t)
		_, _ = io.WriteString(call.Output, envelope)
		return agent.Result{Answer: `{"completed": true, "comments": ["summarised"]}`, Stdout: envelope,
			StdoutBytes: int64(len(envelope)), Argv: []string{"/usr/bin/claude", "-p", "<prompt: 100 bytes>"}}, nil
	}
	dir := b.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	files.Store(0)
	asleep = 0
	start := time.Now()
	for b.Loop() {
		log, err := runlog.Open(runlog.Options{Dir: dir, Short: true, Long: true, OpenFile: open})
		require.NoError(b, err)
		sum, err := Walk(context.Background(), Options{Chart: c, Page: page, Start: page.Root, Registry: reg,
			Runner: runner, NoValidate: true, Backoff: func(int) time.Duration { return 0 }, Log: log, MaxSteps: 1000})
		require.NoError(b, err)
		require.NoError(b, log.Close())
		require.Equal(b, StatusSucceeded, sum.Status)
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	n := float64(b.N * steps)
	allocs := float64(after.Mallocs-before.Mallocs) / n
	bytes := float64(after.TotalAlloc-before.TotalAlloc) / n
	made := float64(files.Load()) / n
	b.ReportMetric(float64((elapsed-asleep).Nanoseconds())/n, "ns/step")
	b.ReportMetric(allocs, "allocs/step")
	b.ReportMetric(bytes, "B/step")
	b.ReportMetric(made, "files/step")
	if allocs > maxAllocsAStep {
		b.Errorf("%.0f allocations a step, over the budget of %d", allocs, maxAllocsAStep)
	}
	if bytes > maxBytesAStep {
		b.Errorf("%.0f bytes allocated a step, over the budget of %d", bytes, maxBytesAStep)
	}
	if made > maxFilesAStep {
		b.Errorf("%.2f files made a step, over the budget of %.1f", made, maxFilesAStep)
	}
}
