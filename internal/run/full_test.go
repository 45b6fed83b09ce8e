package run

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/runlog/runlogtest"
	"github.com/dtree-dev/dtree/types"
)

// fullRun walks loopCSV (Work, retried once and validated, then Done?)
// with its logs on disk; each agent call prints out bytes of output, then
// answers yes to everything. before, when set, runs first in each call,
// with its number (from 1) and the run's directory.
func fullRun(t *testing.T, disk *runlogtest.Disk, out int, before func(call int, dir string)) (*Summary, *runlog.Log, int, error) {
	t.Helper()
	doc, err := document.FromCSV(strings.NewReader(loopCSV))
	require.NoError(t, err)
	reg := agent.NewRegistry(map[string]agent.Definition{"fake": {Name: "fake", Binary: "fake", Output: agent.OutputText}})
	d := types.BuiltinDefaults()
	d.CLI = "fake"
	c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
	require.Empty(t, c.Errors)
	var (
		calls atomic.Int32
		log   *runlog.Log
	)
	runner := func(ctx context.Context, call agent.Call) (agent.Result, error) {
		n := int(calls.Add(1))
		if before != nil {
			before(n, log.Dir)
		}
		// As agent.Run: the output goes on after a write fails, unwritten.
		for range out / 100 {
			if _, err := call.Output.Write([]byte(strings.Repeat("o", 99) + "\n")); err != nil {
				break
			}
		}
		switch {
		case strings.Contains(call.Prompt, `"fully_completed"`):
			return agent.Result{Answer: valid}, nil
		case strings.Contains(call.Prompt, `"answer"`):
			return agent.Result{Answer: `{"answer": "Yes"}`}, nil
		}
		return agent.Result{Answer: done}, nil
	}
	log, err = runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true, Long: true, OpenFile: disk.Open})
	require.NoError(t, err)
	sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root,
		Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log})
	_ = log.Close()
	return sum, log, int(calls.Load()), err
}

// events reads events.jsonl with runlog's reader: every line must be a
// whole event.
func events(t *testing.T, l *runlog.Log) []runlog.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(l.Dir, "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	r := runlog.NewEventReader(f)
	evs, err := r.All()
	require.NoError(t, err)
	require.False(t, r.Torn(), "events.jsonl ends in a torn line")
	return evs
}

// eventsOf is the events of type E.
func eventsOf[E runlog.Event](evs []runlog.Event) []E {
	var got []E
	for _, ev := range evs {
		if e, ok := ev.(E); ok {
			got = append(got, e)
		}
	}
	return got
}

func requireLogFailed(t *testing.T, sum *Summary, err error, file string) {
	t.Helper()
	var wrote *runlog.WriteError
	require.ErrorAs(t, err, &wrote)
	assert.Equal(t, file, filepath.Base(wrote.Path))
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Equal(t, StatusLogWriteFailed, sum.Status)
	assert.Equal(t, 2, sum.ExitCode)
	assert.Equal(t, err.Error(), sum.Error)
	assert.Contains(t, sum.Error, file+": no space left on device")
}

// long.log full: the agent did the work once, and it is not done again.
// The call is no failed attempt; the run stops with the node's answer
// kept, and events.jsonl and short.json, on another disk, say why.
func TestLongLogFullStopsTheRun(t *testing.T) {
	t.Parallel()
	disk := &runlogtest.Disk{Room: 500, Names: []string{"long.log"}}
	sum, log, calls, err := fullRun(t, disk, 10_000, nil)
	requireLogFailed(t, sum, err, "long.log")
	assert.Equal(t, 1, calls, "the call whose output did not fit is not made again")
	require.Len(t, sum.Nodes, 1)
	n := sum.Nodes[0]
	assert.Equal(t, StatusLogWriteFailed, n.Status)
	assert.Equal(t, 0, n.Retries)
	assert.Equal(t, types.ProcessResponse{Completed: true, Comments: []string{}}, n.Response, "the answer is kept")
	require.Len(t, n.Attempts, 1)
	assert.Empty(t, n.Attempts[0].Error, "the call itself went well")

	evs := events(t, log)
	assert.Empty(t, eventsOf[runlog.Retry](evs))
	ends := eventsOf[runlog.NodeEnd](evs)
	require.Len(t, ends, 1)
	assert.Equal(t, StatusLogWriteFailed, ends[0].Status)
	var resp types.ProcessResponse
	require.NoError(t, json.Unmarshal(ends[0].Response, &resp))
	assert.Equal(t, types.ProcessResponse{Completed: true, Comments: []string{}}, resp)
	runEnd := eventsOf[runlog.RunEnd](evs)
	require.Len(t, runEnd, 1)
	assert.Equal(t, StatusLogWriteFailed, runEnd[0].Status)
	assert.Equal(t, 2, runEnd[0].ExitCode)
	assert.Zero(t, sum.EventsUnwritten)

	var short struct{ Status string }
	b, rerr := os.ReadFile(filepath.Join(log.Dir, "short.json"))
	require.NoError(t, rerr)
	require.NoError(t, json.Unmarshal(b, &short))
	assert.Equal(t, StatusLogWriteFailed, short.Status)
}

// events.jsonl full: the run stops before the next agent call, and the
// file keeps whole lines only; the events it could not take are counted.
func TestEventsFullStopsTheRun(t *testing.T) {
	t.Parallel()
	disk := &runlogtest.Disk{Room: 1 << 20, Names: []string{"events.jsonl"}}
	sum, log, calls, err := fullRun(t, disk, 0, func(call int, dir string) {
		if call == 1 {
			disk.SetRoom(100) // part of the next write of events
		}
	})
	requireLogFailed(t, sum, err, "events.jsonl")
	assert.Equal(t, 1, calls, "no agent starts once the events cannot be written")
	evs := events(t, log)
	assert.Empty(t, eventsOf[runlog.RunEnd](evs), "no room for it")
	assert.Positive(t, sum.EventsUnwritten)
	assert.Equal(t, StatusLogWriteFailed, sum.Nodes[0].Status)
}

// short.json full: the old short.json stays, and the run does not end
// succeeded with it: its last node's rewrite, made in the background,
// is waited for.
func TestShortJSONFullStopsTheRun(t *testing.T) {
	t.Parallel()
	disk := &runlogtest.Disk{Room: 1 << 20, Names: []string{".short.json.tmp"}}
	sum, log, calls, err := fullRun(t, disk, 0, func(call int, dir string) {
		if call == 3 { // Done?, once Work's short.json is written
			require.Eventually(t, func() bool {
				_, err := os.Stat(filepath.Join(dir, "short.json"))
				return err == nil
			}, 5*time.Second, time.Millisecond)
			disk.SetRoom(0)
		}
	})
	requireLogFailed(t, sum, err, "short.json")
	assert.Equal(t, 3, calls)
	var short struct {
		Status string
		Path   []string
	}
	b, rerr := os.ReadFile(filepath.Join(log.Dir, "short.json"))
	require.NoError(t, rerr)
	require.NoError(t, json.Unmarshal(b, &short))
	assert.Equal(t, StatusRunning, short.Status, "the last short.json written")
	assert.Equal(t, []string{"2", "3"}, short.Path)
	runEnd := eventsOf[runlog.RunEnd](events(t, log))
	require.Len(t, runEnd, 1)
	assert.Equal(t, StatusLogWriteFailed, runEnd[0].Status)
}
