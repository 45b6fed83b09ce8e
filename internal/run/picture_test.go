package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// walkPicture walks loopCSV with ctx, every agent call answered by answer,
// and picture as the run's picture.
func walkPicture(t *testing.T, ctx context.Context, answer Runner, picture func(context.Context) (string, error)) (*Summary, string) {
	t.Helper()
	doc, err := document.FromCSV(strings.NewReader(loopCSV))
	require.NoError(t, err)
	reg := agent.NewRegistry(map[string]agent.Definition{"fake": {Name: "fake", Binary: "fake", Output: agent.OutputText}})
	d := types.BuiltinDefaults()
	d.CLI = "fake"
	c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
	require.Empty(t, c.Errors)
	log, err := runlog.Open(runlog.Options{Dir: t.TempDir(), Short: true})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	sum, _ := Walk(ctx, Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root, NoValidate: true,
		Registry: reg, Runner: answer, Backoff: func(int) time.Duration { return 0 }, Log: log, Picture: picture})
	short, err := os.ReadFile(filepath.Join(log.Dir, "short.json"))
	require.NoError(t, err)
	return sum, string(short)
}

// An interrupt while the picture is drawn stops the drawing: the run
// ends, short.json has its final status, and the summary says the picture
// was not drawn.
func TestPictureStopsOnInterrupt(t *testing.T) {
	t.Parallel()
	ctx, interrupt := context.WithCancel(t.Context())
	answer := func(_ context.Context, c agent.Call) (agent.Result, error) {
		if strings.Contains(c.Prompt, `"answer"`) {
			return agent.Result{Answer: `{"answer": "Yes"}`}, nil
		}
		return agent.Result{Answer: done}, nil
	}
	picture := func(ctx context.Context) (string, error) {
		interrupt() // the user presses ^C while the picture is drawn
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Minute):
			return "", nil
		}
	}
	start := time.Now()
	sum, short := walkPicture(t, ctx, answer, picture)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, StatusSucceeded, sum.Status)
	assert.Equal(t, "draw the run: interrupted", sum.LogError, "in words, not Go's")
	assert.Contains(t, short, `"status":"succeeded"`)
}

// A run already interrupted is still drawn, with a context of its own
// that ends within PictureGrace.
func TestPictureOfInterruptedRun(t *testing.T) {
	t.Parallel()
	ctx, interrupt := context.WithCancel(t.Context())
	answer := func(ctx context.Context, _ agent.Call) (agent.Result, error) {
		interrupt()
		return agent.Result{}, ctx.Err()
	}
	var deadline time.Time
	var live bool
	picture := func(ctx context.Context) (string, error) {
		live = ctx.Err() == nil
		deadline, _ = ctx.Deadline()
		return "graph.svg", nil
	}
	sum, short := walkPicture(t, ctx, answer, picture)
	assert.Equal(t, StatusInterrupted, sum.Status)
	assert.True(t, live, "the picture's context had ended")
	assert.WithinDuration(t, time.Now().Add(PictureGrace), deadline, PictureGrace)
	assert.Equal(t, "graph.svg", sum.Logs.Graph)
	assert.Contains(t, short, `"status":"interrupted"`)
}

// A reply longer than the tail dtree keeps says it was cut off, not that
// the agent wrote no JSON.
func TestReplyCutOff(t *testing.T) {
	t.Parallel()
	kept := strings.Repeat("log line\n", agent.MaxStdoutTail/9)
	answer := func(_ context.Context, c agent.Call) (agent.Result, error) {
		return agent.Result{Answer: kept, Stdout: kept, StdoutBytes: 3 << 20, Truncated: true}, nil
	}
	sum, _ := walkPicture(t, t.Context(), answer, nil)
	assert.Equal(t, StatusFailed, sum.Status)
	want := fmt.Sprintf("the reply was cut off: it had %d bytes and dtree keeps only its last %d (1 MiB), so what came before was not read: no JSON object in the reply",
		3<<20, len(kept))
	assert.Contains(t, sum.Error, want)

	// not cut off: as before
	answer = func(_ context.Context, c agent.Call) (agent.Result, error) {
		return agent.Result{Answer: "no json", Stdout: "no json", StdoutBytes: 7}, nil
	}
	sum, _ = walkPicture(t, t.Context(), answer, nil)
	assert.Contains(t, sum.Error, "no JSON object in the reply")
	assert.NotContains(t, sum.Error, "cut off")
}
