package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/replay"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
)

// Lines of the events.jsonl of a run stopped inside a fork, as the
// walker writes them (a run of testdata/script/fork_resume.txtar's chart,
// cut short): branch a got to the join, b failed at its second step.
// The branches' events interleave, each line naming its branch.
const (
	fkStart  = `{"time":"2026-11-27T08:00:00Z","event":"run_start","run_id":"r1","start":"plan","page":"1","graph_digest":"d"}`
	fkNSplan = `{"time":"2026-11-27T08:00:01Z","event":"node_start","cli":"sh","node":"plan","role":"process","run_id":"r1","visit":1}`
	fkNEplan = `{"time":"2026-11-27T08:00:02Z","event":"node_end","change":{"added":1,"files":1,"from":"c0","paths":[],"removed":0,"to":"cF"},"command":"echo plan","next":"review","node":"plan","response":{"exit_code":0,"output":""},"run_id":"r1","status":"succeeded","visit":1}`
	fkBSa    = `{"time":"2026-11-27T08:00:03Z","event":"branch_start","branch":"plan/a","checkpoint":"cF","first":"a1","fork":"plan","name":"a","run_id":"r1","worktree":"/r/.dtree/worktrees/r1.b/plan-a"}`
	fkBSb    = `{"time":"2026-11-27T08:00:03Z","event":"branch_start","branch":"plan/b","checkpoint":"cF","first":"b1","fork":"plan","name":"b","run_id":"r1","worktree":"/r/.dtree/worktrees/r1.b/plan-b"}`
	fkNSb1   = `{"time":"2026-11-27T08:00:04Z","event":"node_start","branch":"plan/b","cli":"sh","node":"b1","role":"process","run_id":"r1","visit":1}`
	fkNSa1   = `{"time":"2026-11-27T08:00:04Z","event":"node_start","branch":"plan/a","cli":"sh","node":"a1","role":"process","run_id":"r1","visit":1}`
	fkNEa1   = `{"time":"2026-11-27T08:00:05Z","event":"node_end","branch":"plan/a","change":{"added":1,"files":1,"from":"cF","paths":[],"removed":0,"to":"cA1"},"command":"echo a1","next":"a2","node":"a1","response":{"exit_code":0,"output":""},"run_id":"r1","status":"succeeded","visit":1}`
	fkNSa2   = `{"time":"2026-11-27T08:00:06Z","event":"node_start","branch":"plan/a","cli":"sh","node":"a2","role":"process","run_id":"r1","visit":1}`
	fkNEa2   = `{"time":"2026-11-27T08:00:07Z","event":"node_end","branch":"plan/a","change":{"added":1,"files":1,"from":"cA1","paths":[],"removed":0,"to":"cA2"},"command":"echo a2","next":"review","node":"a2","response":{"exit_code":0,"output":""},"run_id":"r1","status":"succeeded","visit":1}`
	fkBEa    = `{"time":"2026-11-27T08:00:07Z","event":"branch_end","branch":"plan/a","checkpoint":"cA2","path":["a1","a2"],"run_id":"r1","status":"succeeded"}`
	fkNEb1   = `{"time":"2026-11-27T08:00:08Z","event":"node_end","branch":"plan/b","change":{"added":1,"files":1,"from":"cF","paths":[],"removed":0,"to":"cB1"},"command":"echo b1","next":"b2","node":"b1","response":{"exit_code":0,"output":""},"run_id":"r1","status":"succeeded","visit":1}`
	fkNSb2   = `{"time":"2026-11-27T08:00:09Z","event":"node_start","branch":"plan/b","cli":"sh","node":"b2","role":"process","run_id":"r1","visit":1}`
	fkFailb2 = `{"time":"2026-11-27T08:00:10Z","event":"node_end","branch":"plan/b","change":{"added":0,"files":0,"from":"cB1","paths":[],"removed":0,"to":"cB1"},"error":"exit 1","node":"b2","run_id":"r1","status":"failed","visit":1}`
	fkBEb    = `{"time":"2026-11-27T08:00:10Z","event":"branch_end","branch":"plan/b","checkpoint":"cB1","error":"node b2 failed","path":["b1","b2"],"run_id":"r1","status":"failed"}`
	fkEnd    = `{"time":"2026-11-27T08:00:11Z","event":"run_end","status":"failed","run_id":"r1"}`
	fkJoin   = `{"time":"2026-11-27T08:00:11Z","event":"join","branches":["plan/a","plan/b"],"checkpoint":"cM","fork":"plan","mode":"all","node":"review","run_id":"r1"}`
	fkNSrev  = `{"time":"2026-11-27T08:00:12Z","event":"node_start","cli":"sh","node":"review","role":"process","run_id":"r1","visit":1}`
)

// A run stopped inside a fork: the steps before it are the run's path,
// each branch's finished steps are its own, and the run goes on at the
// fork, not where the last step of some branch led (before, the
// interleaved events were read as one path: plan, a1, a2, going on at
// the join, b1 dropped).
func TestReadCarriedInsideAFork(t *testing.T) {
	t.Parallel()
	lines := []string{fkStart, fkNSplan, fkNEplan, fkBSa, fkBSb, fkNSb1, fkNSa1, fkNEa1, fkNSa2, fkNEa2, fkBEa,
		fkNEb1, fkNSb2, fkFailb2, fkBEb, fkEnd}
	for _, read := range []struct {
		name string
		read func(string) (*Carried, error)
	}{
		{"whole", func(log string) (*Carried, error) { return ReadCarried(strings.NewReader(log)) }},
		{"from the file", func(log string) (*Carried, error) { return ReadCarriedFile(writeLog(t, log)) }},
	} {
		t.Run(read.name, func(t *testing.T) {
			t.Parallel()
			c, err := read.read(strings.Join(lines, "\n") + "\n")
			require.NoError(t, err)
			assert.Equal(t, "plan", c.At, "it goes on at the fork")
			assert.False(t, c.Ended)
			assert.Equal(t, []string{"plan", "a1", "a2", "b1"}, c.Path())
			require.NotNil(t, c.Fork)
			assert.Equal(t, "plan", c.Fork.Node)
			assert.Equal(t, 1, c.Fork.Visit)
			assert.Equal(t, "cF", c.Fork.Base)
			require.Len(t, c.Fork.Branches, 2)
			a, b := *c.Fork.Branches[0], *c.Fork.Branches[1]
			assert.Equal(t, StatusSucceeded, a.end.Status)
			assert.Equal(t, StatusFailed, b.end.Status)
			a.end, b.end, a.startLine, b.startLine, a.sent, b.sent = nil, nil, nil, nil, false, false
			assert.Equal(t, CarriedBranch{ID: "plan/a", Name: "a", First: "a1", Path: []string{"a1", "a2"}, At: "review",
				Checkpoint: "cA2", Done: true}, a)
			assert.Equal(t, CarriedBranch{ID: "plan/b", Name: "b", First: "b1", Path: []string{"b1"}, At: "b2",
				Checkpoint: "cB1"}, b)
			require.NoError(t, c.ForkRefused())
			var branches []string
			require.NoError(t, c.Each(func(s *CarriedStep) bool {
				branches = append(branches, s.Branch+":"+s.Start.Node)
				return true
			}))
			assert.Equal(t, []string{":plan", "plan/a:a1", "plan/a:a2", "plan/b:b1"}, branches)

			// --from a step of a branch is not a point to go on at; the
			// fork is, and runs it all again.
			require.EqualError(t, c.From("a2"), "--from a2: node a2 is a step of the fork branch plan/a, which runs again with its fork: name the fork's node")
			require.NoError(t, c.From("plan"))
			assert.Nil(t, c.Fork)
			assert.Equal(t, 0, c.Len())
		})
	}
}

// A run stopped at its join, or after it, goes on as a run without a
// fork: at the join, the branches' steps carried.
func TestReadCarriedAfterAJoin(t *testing.T) {
	t.Parallel()
	fkBEbOK := strings.Replace(strings.Replace(fkBEb, `"status":"failed"`, `"status":"succeeded"`, 1), `"error":"node b2 failed",`, "", 1)
	fkNEb2 := strings.Replace(strings.Replace(fkFailb2, `"status":"failed"`, `"status":"succeeded","next":"review"`, 1), `"error":"exit 1",`, "", 1)
	c, err := ReadCarried(strings.NewReader(strings.Join([]string{fkStart, fkNSplan, fkNEplan, fkBSa, fkBSb, fkNSb1, fkNSa1,
		fkNEa1, fkNSa2, fkNEa2, fkBEa, fkNEb1, fkNSb2, fkNEb2, fkBEbOK, fkJoin, fkNSrev, fkEnd}, "\n")))
	require.NoError(t, err)
	assert.Nil(t, c.Fork)
	assert.Equal(t, "review", c.At)
	assert.Equal(t, []string{"plan", "a1", "a2", "b1", "b2"}, c.Path())
	// The branches it joined are the resumed run's, as the run listed them.
	assert.Equal(t, []joinedBranch{
		{res: BranchResult{ID: "plan/a", Fork: "plan", Name: "a", Status: StatusSucceeded, Path: []string{"a1", "a2"}}, steps: 5},
		{res: BranchResult{ID: "plan/b", Fork: "plan", Name: "b", Status: StatusSucceeded, Path: []string{"b1", "b2"}}, steps: 5},
	}, c.joined)
}

// A branch whose checkpoints stopped, or a fork in a branch, is not gone
// into: ForkRefused says why.
func TestCarriedForkRefused(t *testing.T) {
	t.Parallel()
	noChange := strings.Replace(fkNEa1, `"change":{"added":1,"files":1,"from":"cF","paths":[],"removed":0,"to":"cA1"},`, "", 1)
	nested := `{"time":"2026-11-27T08:00:06Z","event":"branch_start","branch":"a1/x","checkpoint":"cA1","first":"x1","fork":"a1","name":"x","run_id":"r1"}`
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"checkpoints off in a branch", []string{fkStart, fkNSplan, fkNEplan, fkBSa, fkBSb, fkNSa1, noChange, fkEnd},
			"the checkpoints of its branch plan/a stopped"},
		{"a fork in a branch", []string{fkStart, fkNSplan, fkNEplan, fkBSa, fkBSb, fkNSa1, fkNEa1, nested, fkEnd},
			"fork a1 nested in one of its branches"},
		{"a branch run alone", []string{fkStart, fkNSplan, fkNEplan, strings.Replace(fkBSb, `,"worktree":"/r/.dtree/worktrees/r1.b/plan-b"`, "", 1), fkNSb1, fkNEb1, fkEnd},
			"it is a run of branch plan/b alone (dtree run --branch), which stopped inside it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ReadCarried(strings.NewReader(strings.Join(tc.lines, "\n")))
			require.NoError(t, err)
			assert.ErrorContains(t, c.ForkRefused(), tc.want)
		})
	}
}

// writeLog writes log to an events.jsonl of a test's own.
func writeLog(t *testing.T, log string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(log), 0o644))
	return path
}

// A fork run's answers.yaml replays its path whatever order its branches
// call in: the replies are the node's and visit's, not the calls' order.
// The run records with the tests branch calling first (the other branches
// wait), and replays with it calling last.
func TestReplayOfAForkIsOrderFree(t *testing.T) {
	t.Parallel()
	dir := gitDir(t)
	csv, err := os.ReadFile(filepath.Join("..", "..", "testdata", "charts", "fork", "fork.csv"))
	require.NoError(t, err)
	c, reg := fakeChart(t, bytes.NewReader(csv))
	repo, err := workspace.Open(context.Background(), dir)
	require.NoError(t, err)
	tests := map[string]bool{"5": true, "6": true} // the tests branch: 5, and 6 that loops back to it
	// late has the calls of the nodes wait names wait until the calls of
	// the nodes first names have come (or 20 s), so that those come
	// first, however long a branch takes to get its worktree.
	late := func(runner Runner, wait func(node string) bool, first ...string) Runner {
		var mu sync.Mutex
		came := map[string]chan struct{}{}
		arrived := func(node string) chan struct{} {
			mu.Lock()
			defer mu.Unlock()
			if came[node] == nil {
				came[node] = make(chan struct{})
			}
			return came[node]
		}
		var once sync.Map
		return func(ctx context.Context, call agent.Call) (agent.Result, error) {
			if wait(call.Request.Node) {
				for _, f := range first {
					select {
					case <-arrived(f):
					case <-time.After(20 * time.Second):
					}
				}
			}
			r, err := runner(ctx, call)
			if _, done := once.LoadOrStore(call.Request.Node, true); !done {
				close(arrived(call.Request.Node))
			}
			return r, err
		}
	}
	walkFork := func(runner Runner, answers string) (*Summary, *runlog.Log) {
		log, err := runlog.Open(runlog.Options{Dir: filepath.Join(dir, ".dtree", "runs")})
		require.NoError(t, err)
		t.Cleanup(func() { log.Close() })
		sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root, NoValidate: true,
			Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log, Workdir: dir,
			Workspace: repo, Answers: answers})
		require.NoError(t, err)
		return sum, log
	}
	var order []string
	var mu sync.Mutex
	agentRunner := func(_ context.Context, call agent.Call) (agent.Result, error) {
		mu.Lock()
		order = append(order, call.Request.Node)
		mu.Unlock()
		if call.Request.Node == "6" { // No on its first visit, Yes on its second
			if call.Request.Visit == 1 {
				return agent.Result{Answer: `{"answer": "No"}`}, nil
			}
			return agent.Result{Answer: `{"answer": "Yes"}`}, nil
		}
		return agent.Result{Answer: done}, nil
	}
	recorded, log := walkFork(late(agentRunner, func(n string) bool { return !tests[n] && n != "4" && n != "9" }, "5"), "")
	require.Equal(t, "5", order[1], "the tests branch called first")

	ans, err := replay.Load(filepath.Join(log.Dir, "answers.yaml"))
	require.NoError(t, err)
	nodes, err := ans.Resolve(func(key string) []string { return c.FindNode(c.Doc.Pages[0].ID, key) },
		func(id string) (string, string) {
			i, _ := c.Graph.Index(id)
			return c.Doc.Nodes[i].Text, c.Nodes[i].Role
		}, func(string) string { return "" })
	require.NoError(t, err)
	rp := replay.NewRunner(&replay.Plan{Answers: ans.Path, Nodes: nodes, Recorded: ans.Recorded})
	order = nil
	replayed, _ := walkFork(late(func(ctx context.Context, call agent.Call) (agent.Result, error) {
		mu.Lock()
		order = append(order, call.Request.Node)
		mu.Unlock()
		return rp.Call(ctx, call)
	}, func(n string) bool { return n == "5" }, "7", "8"), ans.Path)
	require.NotEqual(t, "5", order[1], "the tests branch called last")

	assert.Equal(t, recorded.Path, replayed.Path)
	paths := func(s *Summary) map[string][]string {
		m := map[string][]string{}
		for _, b := range s.Branches {
			m[b.ID] = b.Path
		}
		return m
	}
	assert.Equal(t, map[string][]string{"4/tests": {"5", "6", "5", "6"}, "4/docs": {"7"}, "4/lint": {"8"}}, paths(recorded))
	assert.Equal(t, paths(recorded), paths(replayed))
}

// A run whose lint branch fails is resumed: the branches go on from where
// each stopped (however far the others got before they were stopped),
// no visit that finished calls its agent again, and the tree after the
// join has every branch's work.
func TestResumeInsideAFork(t *testing.T) {
	t.Parallel()
	dir := gitDir(t)
	csv, err := os.ReadFile(filepath.Join("..", "..", "testdata", "charts", "fork", "fork.csv"))
	require.NoError(t, err)
	c, reg := fakeChart(t, bytes.NewReader(csv))
	repo, err := workspace.Open(context.Background(), dir)
	require.NoError(t, err)
	type visit struct {
		node string
		n    int
	}
	var mu sync.Mutex
	lintFails := true
	runner := func(calls *[]visit) Runner {
		return func(_ context.Context, call agent.Call) (agent.Result, error) {
			node := call.Request.Node
			mu.Lock()
			*calls = append(*calls, visit{node, call.Request.Visit})
			fail := node == "8" && lintFails
			mu.Unlock()
			if node == "6" {
				if call.Request.Visit == 1 {
					return agent.Result{Answer: `{"answer": "No"}`}, nil
				}
				return agent.Result{Answer: `{"answer": "Yes"}`}, nil
			}
			if fail {
				return agent.Result{Answer: `{"completed": false, "reason": "lint is red"}`}, nil
			}
			// Each step leaves a file in its tree: the branch's worktree.
			name := fmt.Sprintf("step-%s-%d.txt", node, call.Request.Visit)
			if err := os.WriteFile(filepath.Join(call.Dir, name), []byte(node+"\n"), 0o644); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Answer: done}, nil
		}
	}
	walkFork := func(calls *[]visit, resume *Carried) (*Summary, *runlog.Log, error) {
		log, err := runlog.Open(runlog.Options{Dir: filepath.Join(dir, ".dtree", "runs")})
		require.NoError(t, err)
		t.Cleanup(func() { log.Close() })
		sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root, NoValidate: true,
			Registry: reg, Runner: runner(calls), Backoff: func(int) time.Duration { return 0 }, Log: log, Workdir: dir,
			Workspace: repo, Resume: resume})
		return sum, log, err
	}
	var first, second []visit
	sum, log, err := walkFork(&first, nil)
	var failed *NodeFailedError
	require.ErrorAs(t, err, &failed)
	require.Equal(t, "8", failed.Node)
	require.Equal(t, []string{"3", "4"}, sum.Path)

	carried, err := ReadCarriedFile(filepath.Join(log.Dir, "events.jsonl"))
	require.NoError(t, err)
	require.NotNil(t, carried.Fork)
	require.NoError(t, carried.ForkRefused())
	require.NoError(t, carried.Check(c, c.Doc.Pages[0].Root))
	finished := map[visit]bool{}
	evs, err := runlog.ReadEvents(log.Dir)
	require.NoError(t, err)
	for _, ev := range evs {
		if e, ok := ev.(runlog.NodeEnd); ok && e.Status == StatusSucceeded {
			finished[visit{e.Node, e.Visit}] = true
		}
	}

	mu.Lock()
	lintFails = false
	mu.Unlock()
	sum, _, err = walkFork(&second, carried)
	require.NoError(t, err)
	assert.Equal(t, []string{"3", "4", "9", "10"}, sum.Path)
	for _, v := range second {
		assert.False(t, finished[v], "node %s visit %d finished in the first run and was called again", v.node, v.n)
	}
	paths := map[string][]string{}
	for _, b := range sum.Branches {
		paths[b.ID] = b.Path
	}
	assert.Equal(t, map[string][]string{"4/tests": {"5", "6", "5", "6"}, "4/docs": {"7"}, "4/lint": {"8"}}, paths)
	// The join merged every branch's steps into the run's tree.
	for _, name := range []string{"step-4-1.txt", "step-5-1.txt", "step-5-2.txt", "step-7-1.txt", "step-8-1.txt", "step-9-1.txt"} {
		assert.FileExists(t, filepath.Join(dir, name))
	}
	wts, err := repo.Worktrees(context.Background())
	require.NoError(t, err)
	assert.Len(t, wts, 0, "the branches' worktrees are removed")
}

// A chart exported again, its ids new: the fork and its branches' steps
// are renamed too, the branches keep their ids (their lines' "branch").
func TestRenumberInsideAFork(t *testing.T) {
	t.Parallel()
	c, err := ReadCarried(strings.NewReader(strings.Join([]string{fkStart, fkNSplan, fkNEplan, fkBSa, fkBSb, fkNSb1, fkNSa1,
		fkNEa1, fkNSb2, fkEnd}, "\n")))
	require.NoError(t, err)
	c.Renumber(map[string]string{"plan": "P", "a1": "A1", "a2": "A2", "b1": "B1", "b2": "B2"})
	assert.Equal(t, "P", c.Fork.Node)
	assert.Equal(t, "P", c.At)
	a, b := *c.Fork.Branches[0], *c.Fork.Branches[1]
	a.startLine, b.startLine, a.sent = nil, nil, false
	assert.Equal(t, CarriedBranch{ID: "plan/a", Name: "a", First: "A1", Path: []string{"A1"}, At: "A2", Checkpoint: "cA1"}, a)
	assert.Equal(t, CarriedBranch{ID: "plan/b", Name: "b", First: "B1", At: "B1", Checkpoint: "cF"}, b)
}

// A run that went through a fork 20,000 times, in a loop, then stopped
// inside it: the log is read once, in time linear in it, and only the
// open fork's branches are kept.
func TestReadCarriedManyForks(t *testing.T) {
	t.Parallel()
	const forks = 20000
	var b strings.Builder
	b.WriteString(fkStart + "\n")
	line := func(branch, rest string) {
		b.WriteString(`{"time":"2026-11-27T08:00:00Z","event":`)
		if branch != "" {
			rest = strings.Replace(rest, `",`, `","branch":"`+branch+`",`, 1)
		}
		b.WriteString(rest + "\n")
	}
	for v := 1; v <= forks+1; v++ {
		line("", fmt.Sprintf(`"node_start","node":"plan","visit":%d}`, v))
		line("", fmt.Sprintf(`"node_end","change":{"to":"c%d"},"next":"review","node":"plan","status":"succeeded","visit":%d}`, v, v))
		for _, name := range []string{"a", "b"} {
			id := fmt.Sprintf("plan#%d/%s", v, name)
			line(id, fmt.Sprintf(`"branch_start","checkpoint":"c%d","first":"%s1","fork":"plan","name":"%s","worktree":"w"}`, v, name, name))
			line(id, fmt.Sprintf(`"node_start","node":"%s1","visit":%d}`, name, v))
			if v <= forks || name == "a" {
				line(id, fmt.Sprintf(`"node_end","change":{"to":"c%d%s"},"next":"review","node":"%s1","status":"succeeded","visit":%d}`, v, name, name, v))
				line(id, fmt.Sprintf(`"branch_end","checkpoint":"c%d%s","status":"succeeded"}`, v, name))
			}
		}
		if v <= forks {
			line("", `"join","fork":"plan","node":"review"}`)
			line("", fmt.Sprintf(`"node_start","node":"review","visit":%d}`, v))
			line("", fmt.Sprintf(`"node_end","next":"plan","node":"review","status":"succeeded","visit":%d}`, v))
		}
	}
	path := writeLog(t, b.String())
	start := time.Now()
	c, err := ReadCarriedFile(path)
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, 4*forks+2, c.Len())
	require.NotNil(t, c.Fork)
	assert.Equal(t, forks+1, c.Fork.Visit)
	require.Len(t, c.Fork.Branches, 2)
	assert.True(t, c.Fork.Branches[0].Done)
	assert.Equal(t, "b1", c.Fork.Branches[1].At)
	limit := 10 * time.Second
	if raceEnabled {
		limit *= 10
	}
	assert.Less(t, took, limit, "%d MB read in %s", b.Len()>>20, took)
	t.Logf("%d MB, %d lines read in %s", b.Len()>>20, strings.Count(b.String(), "\n"), took)
}

// A run that failed at a join whose branches' merge conflicted, the join
// a process step whose agent did not resolve them, goes on at the join;
// its agent is asked again, the conflicted files named in its prompt.
func TestResumeAtAJoinThatConflicted(t *testing.T) {
	t.Parallel()
	dir := gitDir(t)
	csv, err := os.ReadFile(filepath.Join("..", "..", "testdata", "charts", "fork", "fork.csv"))
	require.NoError(t, err)
	c, reg := fakeChart(t, bytes.NewReader(csv))
	repo, err := workspace.Open(context.Background(), dir)
	require.NoError(t, err)
	var mu sync.Mutex
	var joinPrompts []string
	resolve := false
	runner := func(_ context.Context, call agent.Call) (agent.Result, error) {
		switch node := call.Request.Node; node {
		case "6":
			return agent.Result{Answer: `{"answer": "Yes"}`}, nil
		case "5", "7", "8": // each branch writes its own same.txt
			if err := os.WriteFile(filepath.Join(call.Dir, "same.txt"), []byte(node+"\n"), 0o644); err != nil {
				return agent.Result{}, err
			}
		case "9":
			mu.Lock()
			defer mu.Unlock()
			joinPrompts = append(joinPrompts, call.Prompt)
			if !resolve {
				return agent.Result{Answer: `{"completed": false, "reason": "cannot tell which to keep"}`}, nil
			}
			if err := os.WriteFile(filepath.Join(call.Dir, "same.txt"), []byte("all\n"), 0o644); err != nil {
				return agent.Result{}, err
			}
		}
		return agent.Result{Answer: done}, nil
	}
	walkFork := func(resume *Carried) (*runlog.Log, error) {
		log, err := runlog.Open(runlog.Options{Dir: filepath.Join(dir, ".dtree", "runs")})
		require.NoError(t, err)
		t.Cleanup(func() { log.Close() })
		_, err = Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root, NoValidate: true,
			Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log, Workdir: dir,
			Workspace: repo, Resume: resume})
		return log, err
	}
	log, err := walkFork(nil)
	var failed *NodeFailedError
	require.ErrorAs(t, err, &failed)
	require.Equal(t, "9", failed.Node)
	require.NotEmpty(t, joinPrompts)
	assert.Contains(t, joinPrompts[0], `"same.txt"`)

	carried, err := ReadCarriedFile(filepath.Join(log.Dir, "events.jsonl"))
	require.NoError(t, err)
	assert.Nil(t, carried.Fork)
	assert.Equal(t, "9", carried.At)
	assert.Contains(t, carried.Conflicts, "same.txt") // once per branch that changed it, with the stand-in merge
	mu.Lock()
	joinPrompts, resolve = nil, true
	mu.Unlock()
	_, err = walkFork(carried)
	require.NoError(t, err)
	require.Len(t, joinPrompts, 1)
	assert.Contains(t, joinPrompts[0], `"same.txt"`, "the join's agent is told of the conflict again")
	got, err := os.ReadFile(filepath.Join(dir, "same.txt"))
	require.NoError(t, err)
	assert.Equal(t, "all\n", string(got))
}

// Logs edited or cut anywhere in a fork's events read without a panic:
// what cannot be told is no branch, and a fork that cannot be gone into
// is refused.
func TestReadCarriedOddForkLogs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lines    []string
		wantPath []string
		wantAt   string
		fork     bool
	}{
		{"branch_end and join without a branch_start", []string{fkStart, fkNSplan, fkNEplan, fkBEa, fkJoin, fkEnd},
			[]string{"plan"}, "review", false},
		{"a step of a branch that never started", []string{fkStart, fkNSplan, fkNEplan, fkNSa1, fkNEa1, fkEnd},
			[]string{"plan", "a1"}, "review", false},
		{"killed after the branches started", []string{fkStart, fkNSplan, fkNEplan, fkBSa, fkBSb}, []string{"plan"}, "plan", true},
		{"a branch_start alone", []string{fkStart, fkBSa}, []string{}, "plan", true},
		{"a join of a branch", []string{fkStart, fkNSplan, fkNEplan, fkBSa, strings.Replace(fkJoin, `"event":"join",`, `"event":"join","branch":"plan/a",`, 1)},
			[]string{"plan"}, "plan", true},
		{"two joins", []string{fkStart, fkNSplan, fkNEplan, fkBSa, fkJoin, fkJoin, fkNSrev}, []string{"plan"}, "review", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, read := range []func(string) (*Carried, error){
				func(log string) (*Carried, error) { return ReadCarried(strings.NewReader(log)) },
				func(log string) (*Carried, error) { return ReadCarriedFile(writeLog(t, log)) },
			} {
				c, err := read(strings.Join(tc.lines, "\n"))
				require.NoError(t, err)
				assert.Equal(t, tc.wantPath, c.Path())
				assert.Equal(t, tc.wantAt, c.At)
				assert.Equal(t, tc.fork, c.Fork != nil)
				require.NoError(t, c.Each(func(*CarriedStep) bool { return true }))
				_ = c.ForkRefused()
			}
		})
	}
}
