package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// forkYAML is a fork of two branches, a and b (b two steps long), that
// meet at review; join: sets the join's mode.
func forkYAML(join string) string {
	return `title: fork
nodes:
  - id: start
    kind: start
    text: Start
    next: plan
  - id: plan
    text: Plan the work.
    parallel: [a, b]
  - id: a
    text: Write a.
    next: review
  - id: b
    text: Write b.
    next: b2
  - id: b2
    text: Write b2.
    next: review
  - id: review
    text: Review the work.
    join: ` + join + `
    next: done
  - id: done
    kind: end
    text: Done
`
}

func yamlChart(tb testing.TB, src string) (*chart.Chart, *agent.Registry) {
	tb.Helper()
	doc, err := document.FromYAML(strings.NewReader(src))
	require.NoError(tb, err)
	reg := agent.NewRegistry(map[string]agent.Definition{"fake": {Name: "fake", Binary: "fake", Output: agent.OutputText}})
	d := types.BuiltinDefaults()
	d.CLI = "fake"
	c := chart.Check(doc, chart.Options{Defaults: d, Names: reg.Names()})
	require.Empty(tb, c.Errors)
	return c, reg
}

// forkRun walks src in a new git repository with runner; it returns the
// summary, the repository, the run's events and the error.
func forkRun(t *testing.T, src string, runner Runner, o Options) (*Summary, string, []runlog.Event, error) {
	t.Helper()
	dir := gitDir(t)
	c, reg := yamlChart(t, src)
	repo, err := workspace.Open(context.Background(), dir)
	require.NoError(t, err)
	log, err := runlog.Open(runlog.Options{Dir: filepath.Join(dir, ".dtree", "runs"), Short: true})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	o.Chart, o.Page, o.Start, o.NoValidate = c, c.Doc.Pages[0], c.Doc.Pages[0].Root, true
	o.Registry, o.Runner, o.Log, o.Workdir, o.Workspace = reg, runner, log, dir, repo
	if o.Backoff == nil {
		o.Backoff = func(int) time.Duration { return 0 }
	}
	ctx := context.Background()
	if o.MaxSteps == 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	sum, werr := Walk(ctx, o)
	evs, err := runlog.ReadEvents(log.Dir)
	require.NoError(t, err)
	return sum, dir, evs, werr
}

// writer is a runner whose steps write a file named after their node in
// their workdir, and wait at a barrier until both branches' first steps
// have started: they ran side by side, or the test times out.
type writer struct {
	mu      sync.Mutex
	started map[string]bool
	both    chan struct{}
	fail    string // a node that fails
	dirs    map[string]string
}

func newWriter() *writer {
	return &writer{started: map[string]bool{}, both: make(chan struct{}), dirs: map[string]string{}}
}

func (wr *writer) run(ctx context.Context, c agent.Call) (agent.Result, error) {
	node := c.Request.Node
	wr.mu.Lock()
	wr.dirs[node] = c.Dir
	if node == "a" || node == "b" {
		wr.started[node] = true
		if wr.started["a"] && wr.started["b"] {
			close(wr.both)
		}
	}
	wr.mu.Unlock()
	if node == "a" || node == "b" {
		select {
		case <-wr.both:
		case <-time.After(20 * time.Second):
			return agent.Result{}, errors.New("the other branch never started: the branches did not run side by side")
		case <-ctx.Done():
			return agent.Result{}, ctx.Err()
		}
	}
	if node == wr.fail {
		return agent.Result{Answer: `{"completed": false, "comments": ["could not"]}`}, nil
	}
	if node != "review" && node != "plan" {
		if err := os.WriteFile(filepath.Join(c.Dir, node+".txt"), []byte(node+"\n"), 0o644); err != nil {
			return agent.Result{}, err
		}
	}
	return agent.Result{Answer: done}, nil
}

func TestForkRunsBranchesSideBySideAndMerges(t *testing.T) {
	wr := newWriter()
	sum, dir, evs, err := forkRun(t, forkYAML("all"), wr.run, Options{})
	require.NoError(t, err)
	assert.Equal(t, StatusSucceeded, sum.Status)
	// The branches' files are merged into the run's working tree.
	for _, f := range []string{"a.txt", "b.txt", "b2.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Equal(t, strings.TrimSuffix(f, ".txt")+"\n", string(b))
	}
	// Each branch worked in a worktree of its own, removed after.
	assert.NotEqual(t, wr.dirs["a"], wr.dirs["b"])
	assert.NotEqual(t, dir, wr.dirs["a"])
	assert.Equal(t, dir, wr.dirs["review"])
	_, serr := os.Stat(wr.dirs["a"])
	assert.True(t, os.IsNotExist(serr), "the branch's worktree is removed")
	// The run's path goes from the fork to the join; each branch has its own.
	assert.Equal(t, []string{"start", "plan", "review", "done"}, sum.Path)
	paths := map[string][]string{}
	for _, b := range sum.Branches {
		paths[b.ID] = b.Path
		assert.Equal(t, StatusSucceeded, b.Status)
	}
	assert.Equal(t, map[string][]string{"plan/a": {"a"}, "plan/b": {"b", "b2"}}, paths)
	var joins []runlog.Join
	for _, ev := range evs {
		if j, ok := ev.(runlog.Join); ok {
			joins = append(joins, j)
		}
	}
	require.Len(t, joins, 1)
	assert.Equal(t, []string{"plan/a", "plan/b"}, joins[0].Branches, "merged in the fork's order")
	assert.Empty(t, joins[0].Conflicts)
	for _, r := range sum.Nodes {
		want := map[string]string{"a": "plan/a", "b": "plan/b", "b2": "plan/b"}[r.ID]
		assert.Equal(t, want, r.Branch, r.ID)
	}
}

// Branch names that differ only in what a directory name cannot hold get
// worktrees and checkpoint refs of their own.
func TestForkBranchNamesApart(t *testing.T) {
	wr := newWriter()
	src := strings.Replace(forkYAML("all"), "parallel: [a, b]", `parallel: {"a b": a, "a-b": b}`, 1)
	sum, dir, _, err := forkRun(t, src, wr.run, Options{})
	require.NoError(t, err)
	assert.Equal(t, StatusSucceeded, sum.Status)
	for _, f := range []string{"a.txt", "b.txt", "b2.txt"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	assert.NotEqual(t, wr.dirs["a"], wr.dirs["b"])
	repo, err := workspace.Open(context.Background(), dir)
	require.NoError(t, err)
	ids, err := repo.Runs(context.Background())
	require.NoError(t, err)
	assert.Len(t, ids, 3, "the run's checkpoints and each branch's: %v", ids)
}

func TestForkBranchEventsCarryTheBranch(t *testing.T) {
	wr := newWriter()
	_, dir, _, err := forkRun(t, forkYAML("all"), wr.run, Options{})
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, ".dtree", "runs", "latest", "events.jsonl"))
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		switch {
		case strings.Contains(line, `"node":"b2"`), strings.Contains(line, `"node":"b",`):
			assert.Contains(t, line, `","event":"`)
			assert.Regexp(t, `^\{"time":"[^"]+","event":"[a-z_]+","branch":"plan/b",`, line)
		case strings.Contains(line, `"node":"review"`), strings.Contains(line, `"node":"plan"`) && !strings.Contains(line, `"event":"join"`):
			assert.NotContains(t, line, `"branch"`, "the run's own branch has none")
		}
	}
}

func TestForkFailedBranchStopsTheOthers(t *testing.T) {
	// a runs until something stops it; b2 fails: the run fails at b2, and
	// a is interrupted, its worktree removed all the same.
	var mu sync.Mutex
	dirs := map[string]string{}
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		mu.Lock()
		dirs[c.Request.Node] = c.Dir
		mu.Unlock()
		switch c.Request.Node {
		case "a":
			select {
			case <-ctx.Done():
				return agent.Result{}, ctx.Err()
			case <-time.After(20 * time.Second):
				return agent.Result{}, errors.New("not stopped")
			}
		case "b2":
			return agent.Result{Answer: `{"completed": false, "comments": ["could not"]}`}, nil
		}
		return agent.Result{Answer: done}, nil
	}
	start := time.Now()
	sum, _, _, err := forkRun(t, forkYAML("all"), runner, Options{})
	assert.Less(t, time.Since(start), 15*time.Second, "a was stopped, not waited for")
	var failed *NodeFailedError
	require.ErrorAs(t, err, &failed)
	assert.Equal(t, "b2", failed.Node)
	assert.Equal(t, StatusFailed, sum.Status)
	status := map[string]string{}
	for _, b := range sum.Branches {
		status[b.ID] = b.Status
	}
	assert.Equal(t, map[string]string{"plan/a": StatusInterrupted, "plan/b": StatusFailed}, status)
	assert.NotContains(t, sum.Path, "review", "the join does not run")
	_, serr := os.Stat(dirs["a"])
	assert.True(t, os.IsNotExist(serr), "the stopped branch's worktree is removed")
}

func TestForkJoinAnyTakesTheFirstBranch(t *testing.T) {
	// b fails; a gets to the join: under join any the run goes on with a's change only.
	var mu sync.Mutex
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		switch c.Request.Node {
		case "b":
			return agent.Result{Answer: `{"completed": false, "comments": ["no"]}`}, nil
		case "a":
			if err := os.WriteFile(filepath.Join(c.Dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
				return agent.Result{}, err
			}
		}
		return agent.Result{Answer: done}, nil
	}
	sum, dir, _, err := forkRun(t, forkYAML("any"), runner, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"start", "plan", "review", "done"}, sum.Path)
	assert.FileExists(t, filepath.Join(dir, "a.txt"))
	assert.NoFileExists(t, filepath.Join(dir, "b.txt"))
}

func TestForkConflictFailsACommandJoin(t *testing.T) {
	src := `title: conflict
nodes:
  - id: plan
    text: Plan.
    command: "true"
    parallel: [a, b]
  - id: a
    text: Write a.
    command: echo from-a > README
    next: review
  - id: b
    text: Write b.
    command: echo from-b > README
    next: review
  - id: review
    text: Review.
    command: cat README
    next: done
  - id: done
    kind: end
    text: Done
`
	sum, dir, _, err := forkRun(t, src, agent.Run, Options{Env: os.Environ()})
	var jc *JoinConflictError
	require.ErrorAs(t, err, &jc)
	assert.Equal(t, "review", jc.Node)
	assert.Contains(t, jc.Conflicts, `"README" (plan/a, plan/b)`)
	assert.Equal(t, StatusFailed, sum.Status)
	assert.Equal(t, types.ExitFailed, sum.ExitCode)
	b, rerr := os.ReadFile(filepath.Join(dir, "README"))
	require.NoError(t, rerr)
	assert.Contains(t, string(b), "<<<<<<<", "the working tree has the conflict, between markers")
	assert.Contains(t, string(b), "from-a")
	assert.Contains(t, string(b), "from-b")
}

func TestForkConflictIsResolvedByAProcessJoin(t *testing.T) {
	var mu sync.Mutex
	var joinPrompt string
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		switch c.Request.Node {
		case "a", "b":
			if err := os.WriteFile(filepath.Join(c.Dir, "README"), []byte("from "+c.Request.Node+"\n"), 0o644); err != nil {
				return agent.Result{}, err
			}
		case "review":
			joinPrompt = c.Prompt
			if err := os.WriteFile(filepath.Join(c.Dir, "README"), []byte("from a and b\n"), 0o644); err != nil {
				return agent.Result{}, err
			}
		}
		return agent.Result{Answer: done}, nil
	}
	sum, dir, _, err := forkRun(t, forkYAML("all"), runner, Options{})
	require.NoError(t, err)
	assert.Equal(t, StatusSucceeded, sum.Status)
	assert.Contains(t, joinPrompt, "Merge conflicts:")
	assert.Contains(t, joinPrompt, `"README" (plan/a, plan/b). In the markers, each side is named by a commit: `)
	assert.Regexp(t, `[0-9a-f]{40} holds plan/a[;.]`, joinPrompt)
	assert.Regexp(t, `[0-9a-f]{40} holds plan/b[;.]`, joinPrompt)
	assert.Contains(t, joinPrompt, `"README" (plan/a, plan/b)`)
	b, rerr := os.ReadFile(filepath.Join(dir, "README"))
	require.NoError(t, rerr)
	assert.Equal(t, "from a and b\n", string(b))
}

func TestForkOutsideGitIsAnError(t *testing.T) {
	c, reg := yamlChart(t, forkYAML("all"))
	log, err := runlog.Open(runlog.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	calls := 0
	sum, err := Walk(context.Background(), Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root, NoValidate: true,
		Registry: reg, Log: log, Workdir: t.TempDir(), Backoff: func(int) time.Duration { return 0 },
		Runner: func(context.Context, agent.Call) (agent.Result, error) {
			calls++
			return agent.Result{Answer: done}, nil
		}})
	require.ErrorIs(t, err, ErrForkNeedsGit)
	assert.Contains(t, err.Error(), "node plan: ")
	assert.Contains(t, err.Error(), "not in a git repository")
	assert.Equal(t, 1, calls, "only the fork's own step ran")
	assert.Equal(t, types.ExitUsage, sum.ExitCode)
}

func TestForkMaxStepsCountsEveryBranch(t *testing.T) {
	wr := newWriter()
	// plan, a, b, b2 are four steps: a limit of 3 stops the run in a branch.
	sum, _, _, err := forkRun(t, forkYAML("all"), wr.run, Options{MaxSteps: 3})
	var limit *LimitError
	require.ErrorAs(t, err, &limit)
	assert.Equal(t, "max_steps", limit.Limit)
	assert.Equal(t, StatusLimit, sum.Status)
}

func TestForkBudgetStopsEveryBranch(t *testing.T) {
	cost := 0.6
	var mu sync.Mutex
	started := map[string]bool{}
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		mu.Lock()
		started[c.Request.Node] = true
		mu.Unlock()
		if c.Request.Node == "a" { // a waits; b's spend crosses the budget and stops it
			select {
			case <-ctx.Done():
				return agent.Result{}, ctx.Err()
			case <-time.After(20 * time.Second):
				return agent.Result{}, errors.New("not stopped")
			}
		}
		return agent.Result{Answer: done, Usage: types.Usage{CostUSD: &cost}}, nil
	}
	sum, _, _, err := forkRun(t, forkYAML("all"), runner, Options{MaxCost: 1})
	var budget *BudgetError
	require.ErrorAs(t, err, &budget)
	assert.Equal(t, StatusBudget, sum.Status)
	assert.NotContains(t, sum.Path, "review")
}

// With --parallel 1 the branches run one at a time, and each one's
// worktree is made when it gets to run: never two checkouts at once.
func TestForkParallelBoundsWorktrees(t *testing.T) {
	var mu sync.Mutex
	most := 0
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if c.Request.Node != "plan" && c.Request.Node != "review" {
			trees, err := filepath.Glob(filepath.Join(filepath.Dir(c.Dir), "*")) // .dtree/worktrees/RUN-ID.b/*
			if err != nil {
				return agent.Result{}, err
			}
			most = max(most, len(trees))
		}
		return agent.Result{Answer: done}, nil
	}
	sum, _, _, err := forkRun(t, forkYAML("all"), runner, Options{Parallel: 1})
	require.NoError(t, err)
	assert.Equal(t, StatusSucceeded, sum.Status)
	assert.Equal(t, 1, most, "one branch's worktree at a time")
}

// A fork nested in a branch, with --parallel 1: the branch that waits
// for its own fork's branches leaves its place to them (no deadlock).
func TestForkNestedWithParallelOne(t *testing.T) {
	src := `title: nested
nodes:
  - id: plan
    text: Plan.
    parallel: [a, b]
  - id: a
    text: A.
    parallel: [a1, a2]
  - id: a1
    text: A1.
    next: ajoin
  - id: a2
    text: A2.
    next: ajoin
  - id: ajoin
    text: A joins.
    next: review
  - id: b
    text: B.
    next: review
  - id: review
    text: Review.
    next: done
  - id: done
    kind: end
    text: Done
`
	var mu sync.Mutex
	var ran []string
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		mu.Lock()
		ran = append(ran, c.Request.Node)
		mu.Unlock()
		return agent.Result{Answer: done}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = ctx
	sum, _, _, err := forkRun(t, src, runner, Options{Parallel: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"plan", "review", "done"}, sum.Path)
	assert.ElementsMatch(t, []string{"plan", "a", "a1", "a2", "ajoin", "b", "review"}, ran)
}

// A join asked to resolve a conflict that leaves the markers in has not
// done it: the attempt fails, saying where they are, and the retry
// resolves it.
func TestForkJoinThatLeavesMarkersIsRetried(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		switch c.Request.Node {
		case "a", "b":
			if err := os.WriteFile(filepath.Join(c.Dir, "README"), []byte("from "+c.Request.Node+"\n"), 0o644); err != nil {
				return agent.Result{}, err
			}
		case "review":
			prompts = append(prompts, c.Prompt)
			if len(prompts) > 1 { // the first attempt leaves the file as the merge did
				if err := os.WriteFile(filepath.Join(c.Dir, "README"), []byte("from a and b\n"), 0o644); err != nil {
					return agent.Result{}, err
				}
			}
		}
		return agent.Result{Answer: done}, nil
	}
	sum, dir, _, err := forkRun(t, forkYAML("all"), runner, Options{})
	require.NoError(t, err)
	assert.Equal(t, StatusSucceeded, sum.Status)
	require.Len(t, prompts, 2, "the join was asked again")
	assert.Contains(t, prompts[1], `the conflict markers (<<<<<<<, =======, >>>>>>>) are still in "README"`)
	assert.Contains(t, prompts[1], "Merge conflicts:", "the retry is told of the conflict again")
	b, rerr := os.ReadFile(filepath.Join(dir, "README"))
	require.NoError(t, rerr)
	assert.Equal(t, "from a and b\n", string(b))
}
