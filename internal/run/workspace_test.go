package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// gitDir is a new git repository with one file committed.
func gitDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("one\ntwo\n"), 0o644))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "first"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return dir
}

// warnings counts what a WorkspaceWarner is told.
type warnings struct {
	nopProgress
	said []string
}

func (w *warnings) WorkspaceOff(reason string) { w.said = append(w.said, reason) }

// walkInRepo walks loopCSV (Work, then Done? until it says Yes on its
// third visit) in a git repository; work is what Work does to the tree on
// each visit.
func walkInRepo(t *testing.T, dir string, work func(visit int)) (*Summary, string, []runlog.Event, *warnings) {
	t.Helper()
	c, reg := fakeChart(t, strings.NewReader(loopCSV))
	visits, decides := 0, 0
	runner := func(_ context.Context, call agent.Call) (agent.Result, error) {
		if strings.Contains(call.Prompt, `"answer"`) {
			decides++
			if decides < 3 {
				return agent.Result{Answer: `{"answer": "No"}`}, nil
			}
			return agent.Result{Answer: `{"answer": "Yes"}`}, nil
		}
		visits++
		work(visits)
		return agent.Result{Answer: done}, nil
	}
	repo, err := workspace.Open(context.Background(), dir)
	require.NoError(t, err)
	log, err := runlog.Open(runlog.Options{Dir: filepath.Join(dir, ".dtree", "runs"), Short: true})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	p := &warnings{}
	sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root, NoValidate: true,
		Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log, Workdir: dir,
		Workspace: repo, Progress: p})
	require.NoError(t, err)
	short, err := os.ReadFile(filepath.Join(log.Dir, "short.json"))
	require.NoError(t, err)
	evs, err := runlog.ReadEvents(log.Dir)
	require.NoError(t, err)
	return sum, string(short), evs, p
}

// Each visit's change is in its result, its node_end and short.json, and
// the whole run's in the summary, run_end and short.json: a file added
// on one visit and changed on the next is one added file in the run's.
func TestWalkRecordsEachChange(t *testing.T) {
	t.Parallel()
	dir := gitDir(t)
	sum, short, evs, p := walkInRepo(t, dir, func(visit int) {
		switch visit {
		case 1: // 12 files, more than short.json lists
			for i := range 12 {
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", i)), []byte("a\nb\n"), 0o644))
			}
		case 2:
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f00"), []byte("a\nb\nc\n"), 0o644))
			require.NoError(t, os.Remove(filepath.Join(dir, "README")))
		}
	})
	assert.Empty(t, p.said)
	var work []*types.Change
	for _, n := range sum.Nodes {
		require.NotNil(t, n.Change, "node %s visit %d", n.ID, n.Visit)
		if n.ID == "3" {
			work = append(work, n.Change)
		} else {
			assert.True(t, n.Change.Empty(), "the decision changed nothing")
		}
	}
	require.Len(t, work, 3)
	assert.Equal(t, [3]int{12, 24, 0}, [3]int{work[0].Files, work[0].Added, work[0].Removed})
	assert.Len(t, work[0].Paths, 12)
	assert.Equal(t, [3]int{2, 1, 2}, [3]int{work[1].Files, work[1].Added, work[1].Removed})
	assert.Equal(t, []types.PathChange{{Path: "README", Status: "D", Removed: 2}, {Path: "f00", Status: "M", Added: 1}}, work[1].Paths)
	assert.True(t, work[2].Empty())

	require.NotNil(t, sum.Change)
	assert.Equal(t, [3]int{13, 25, 2}, [3]int{sum.Change.Files, sum.Change.Added, sum.Change.Removed}, "f00 is one added file of 3 lines")
	assert.Equal(t, work[0].From, sum.Change.From)
	assert.Equal(t, work[1].To, sum.Change.To)

	var ends, runEnd int
	for _, ev := range evs {
		switch e := ev.(type) {
		case runlog.NodeEnd:
			require.NotNil(t, e.Change)
			ends++
		case runlog.RunEnd:
			require.NotNil(t, e.Change)
			assert.Equal(t, sum.Change.Files, e.Change.Files)
			runEnd++
		}
	}
	assert.Equal(t, 6, ends)
	assert.Equal(t, 1, runEnd)

	var s struct {
		Change *types.Change `json:"change"`
		Nodes  []struct {
			Change *types.Change `json:"change"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal([]byte(short), &s))
	require.NotNil(t, s.Change, "short.json has the run's change once it ended")
	assert.Equal(t, 13, s.Change.Files)
	assert.Len(t, s.Change.Paths, ShortPaths)
	assert.Equal(t, 3, s.Change.PathsLeftOut)
	require.NotNil(t, s.Nodes[0].Change)
	assert.Equal(t, 12, s.Nodes[0].Change.Files)
	assert.Len(t, s.Nodes[0].Change.Paths, ShortPaths, "short.json lists the first ShortPaths")
	assert.Equal(t, 2, s.Nodes[0].Change.PathsLeftOut)
	assert.Len(t, sum.Nodes[0].Change.Paths, 12, "the summary keeps them all")
}

// A checkpoint that fails turns the checkpoints off for the rest of the
// run: said once, logged once, and the run goes on.
func TestWalkCheckpointFailsOnce(t *testing.T) {
	t.Parallel()
	dir := gitDir(t)
	sum, _, evs, p := walkInRepo(t, dir, func(visit int) {
		if visit == 2 { // git has nothing to work with from here on
			require.NoError(t, os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, "git.moved")))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("v%d", visit)), []byte("x\n"), 0o644))
	})
	assert.Equal(t, StatusSucceeded, sum.Status)
	require.Len(t, p.said, 1, "said once: %q", p.said)
	assert.Contains(t, p.said[0], "checkpoints are off for the rest of the run")
	offs := 0
	for _, ev := range evs {
		if e, ok := ev.(runlog.Workspace); ok && e.Off != "" {
			offs++
		}
	}
	assert.Equal(t, 1, offs)
	require.NotNil(t, sum.Nodes[0].Change)
	assert.Equal(t, 1, sum.Nodes[0].Change.Files)
	for _, n := range sum.Nodes[2:] {
		assert.Nil(t, n.Change, "node %s visit %d: no checkpoint after git failed", n.ID, n.Visit)
	}
	assert.Nil(t, sum.Change, "no run change with a part missing")
}
