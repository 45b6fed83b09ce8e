package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/mockllm"
	"github.com/dtree-dev/dtree/internal/workspace"
)

// forkCLIs are the CLIs TestConformanceFork runs: codex, whose one shell
// tool (exec_command {cmd}) runs in the directory dtree starts it in, the
// branch's own worktree, so that a relative path edits the branch's copy
// of the tree and nothing else. A CLI whose file tools take absolute paths
// (claude's Write) would need the branch's worktree in the mock's rule.
// One CLI only: each case is three runs of a node CLI on a shared 2-core
// machine, and what is under test is dtree's walker, not the CLI.
var forkCLIs = []string{"codex"}

// forkMeetWait bounds how long the mock holds one branch's first model
// call for the other's: room for two cold starts of the CLI on a loaded
// machine. A walker that ran the branches one after the other makes the
// first wait this long and then fails the check that they met.
const forkMeetWait = 90 * time.Second

// forkChart is a YAML chart (readme/parallel.md) whose command step plan
// forks into the branches alpha (write_a) and beta (write_b), each one
// agent step, which meet at show: a command step running join, or, when
// join is "", a step the agent runs. Drawn as a chain (chain true), the
// same steps run one after the other.
func forkChart(join string, chain bool) string {
	out, a, b := "    parallel: {alpha: write_a, beta: write_b}\n", "    next: show\n", "    next: show\n"
	joinKey := "    join: all\n"
	show := "    text: Show what the branches wrote.\n    command: " + join + "\n"
	if join == "" {
		show = "    tags: NoValidation\n    text: Show what the branches wrote (conformance join).\n"
	}
	if chain {
		out, a, joinKey = "    next: write_a\n", "    next: write_b\n", ""
	}
	return `title: Two files side by side
nodes:
  - id: start
    kind: start
    text: Start
    next: plan
  - id: plan
    text: List the files to write.
    command: echo a.txt b.txt
` + out + `  - id: write_a
    tags: NoValidation
    text: Write a.txt (conformance fork alpha).
` + a + `  - id: write_b
    tags: NoValidation
    text: Write b.txt (conformance fork beta).
` + b + `  - id: show
` + show + joinKey + `    next: done
  - id: done
    kind: end
    text: Done
`
}

// forkModelDelay is how long the mock takes over each reply, as a model
// does: the time a fork's branches spend at once and a chain one after
// the other, which the wall times compare. Without it the calls are as
// fast as the CLI's own start, and two CLIs starting at once on a loaded
// 2-core machine take about as long as one after the other.
const forkModelDelay = time.Second

// forkRules script the two branches' agents: each one's first call asks
// for one shell command, cmdA for alpha and cmdB for beta; the call after
// it answers that the task is done; each reply after forkModelDelay.
// With meet, each first call is held until the other's has arrived too
// (mockllm's meet).
func forkRules(c cliCase, cmdA, cmdB string, meet bool) []mockllm.Rule {
	first := func(branch, cmd string) mockllm.Rule {
		r := mockllm.Rule{Turn: 1, Match: "(conformance fork " + branch + ")", Tools: []mockllm.ToolCall{shellCall(c.name, cmd)}, Times: 1, Delay: forkModelDelay}
		if meet {
			r.Meet, r.MeetWait = "branches", forkMeetWait
		}
		return r
	}
	return c.rules(
		first("alpha", cmdA),
		first("beta", cmdB),
		mockllm.Rule{Turn: 2, Reply: processReply("wrote the file"), Delay: forkModelDelay},
	)
}

// skipWhileForksAreRefused skips the test when dtree run refuses a chart
// with a fork (internal/cli/fork.go, refuseForks): this version's walker
// does not run branches yet.
func skipWhileForksAreRefused(t *testing.T, r result) {
	t.Helper()
	if r.exit == 2 && strings.Contains(r.stderr, "does not run parallel branches yet") {
		t.Skip("dtree run refuses forks (internal/cli/fork.go refuseForks): this test runs once the walker runs branches side by side (SPEC §17)")
	}
}

// rawEvent is the part of an events.jsonl line the fork checks read, as
// written: the event, its branch, its node; line is the line itself.
type rawEvent struct {
	Time   time.Time `json:"time"`
	Event  string    `json:"event"`
	Branch string    `json:"branch"`
	Node   string    `json:"node"`
	// Branches and Conflicts are a join event's: the branches merged, in
	// order, and the conflicted files.
	Branches  []string `json:"branches"`
	Conflicts []string `json:"conflicts"`
	// Worktree is a branch_start's: where the branch worked.
	Worktree string `json:"worktree"`
	line     string
}

// rawEvents reads the latest run's events.jsonl line by line.
func rawEvents(t *testing.T, logs string) []rawEvent {
	t.Helper()
	f, err := os.Open(filepath.Join(logs, "latest", "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var out []rawEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev rawEvent
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "events.jsonl line %q", sc.Text())
		ev.line = sc.Text()
		out = append(out, ev)
	}
	require.NoError(t, sc.Err())
	return out
}

// joinEvent is the run's join event, nil when it has none.
func joinEvent(events []rawEvent) *rawEvent {
	for i := range events {
		if events[i].Event == "join" {
			return &events[i]
		}
	}
	return nil
}

// timeline logs the run's events with their time since the first: where
// a fork's wall time goes.
func timeline(t *testing.T, events []rawEvent) {
	t.Helper()
	if len(events) == 0 {
		return
	}
	var b strings.Builder
	for _, ev := range events {
		fmt.Fprintf(&b, "\n%6dms %s %s %s", ev.Time.Sub(events[0].Time).Milliseconds(), ev.Event, ev.Branch, ev.Node)
	}
	t.Logf("events:%s", b.String())
}

// worktrees are the git worktrees of the repository at dir, `git
// worktree list --porcelain`'s paths; what is left in its
// .dtree/worktrees but the .gitignore dtree writes there
// (readme/workspace.md#isolation); and its refs under refs/dtree/.
func worktrees(t *testing.T, dir string) (listed, left, refs []string) {
	t.Helper()
	for _, line := range strings.Split(gitIn(t, dir, "worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			listed = append(listed, p)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(dir, ".dtree", "worktrees"))
	for _, e := range ents {
		if e.Name() != ".gitignore" {
			left = append(left, e.Name())
		}
	}
	refs = strings.Fields(gitIn(t, dir, "for-each-ref", "--format=%(refname)", "refs/dtree/"))
	return listed, left, refs
}

// TestConformanceFork (readme/parallel.md): a real CLI runs the two
// branches of a fork side by side, each in its own worktree, each writing
// a file of its own through its shell tool; the join merges both into the
// working tree and its command step reads them. Then the same steps drawn
// as a chain, for the wall time (logged); and two branches that change
// the same line, whose join fails naming the file and both branches.
func TestConformanceFork(t *testing.T) {
	if dtreeBin == "" {
		t.Skipf("%s is not set: `make conformance` installs the real CLIs and runs these tests", cliDirEnv)
	}
	only := os.Getenv("DTREE_CONFORMANCE_ONLY")
	for _, c := range cases() {
		if !slices.Contains(forkCLIs, c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			if only != "" && !slices.Contains(strings.Split(only, ","), c.name) {
				t.Skipf("not in DTREE_CONFORMANCE_ONLY=%s", only)
			}
			var forkTime time.Duration
			t.Run("merge", func(t *testing.T) { forkTime = forkMerge(t, c) })
			t.Run("chain", func(t *testing.T) { forkChain(t, c, forkTime) })
			t.Run("parallel_1", func(t *testing.T) { forkOneAtATime(t, c) })
			t.Run("conflict", func(t *testing.T) { forkConflict(t, c) })
			t.Run("resolve", func(t *testing.T) { forkResolve(t, c) })
		})
	}
}

const (
	alphaWrote = "written by branch alpha\n"
	betaWrote  = "written by branch beta\n"
)

// forkMerge runs the fork; it returns the run's wall time.
func forkMerge(t *testing.T, c cliCase) time.Duration {
	e := newEnv(t, c)
	gitWork(t, e)
	head := gitIn(t, e.work, "rev-parse", "HEAD")
	e.mock.SetRules(forkRules(c, "printf 'written by branch alpha\\n' > a.txt", "printf 'written by branch beta\\n' > b.txt", true))
	chart := filepath.Join(e.home, "fork.yaml")
	require.NoError(t, os.WriteFile(chart, []byte(forkChart("cat a.txt b.txt", false)), 0o644))
	r := e.run(chart)
	skipWhileForksAreRefused(t, r)
	reqs := answered(e.mock.Requests())
	firsts := map[string]mockllm.Request{}
	for _, q := range reqs {
		t.Logf("mock: %s turn=%d rule=%d met=%v arrived=%s answered=%s asked=%v results=%.200q",
			q.API, q.Turn, q.Rule, q.Met, q.Arrived.Format("15:04:05.000"), q.Answered.Format("15:04:05.000"), q.Tools, q.Results)
		switch q.Rule - len(c.extraRules) {
		case 0:
			firsts["alpha"] = q
		case 1:
			firsts["beta"] = q
		}
	}
	events := rawEvents(t, e.logs)
	timeline(t, events)
	listed, left, refs := worktrees(t, e.work)

	a := assert.New(t)
	a.Equal(0, r.exit, "exit status")
	a.Equal("succeeded", r.summary.Status)
	a.Equal(alphaWrote, readFile(e.work, "a.txt"), "alpha's file was merged into the working tree")
	a.Equal(betaWrote, readFile(e.work, "b.txt"), "beta's file was merged into the working tree")
	a.Equal(head, gitIn(t, e.work, "rev-parse", "HEAD"), "HEAD did not move")

	// Side by side: each branch's first model call was held by the mock
	// until the other's arrived, so neither was answered before both were
	// waiting.
	alpha, okA := firsts["alpha"]
	beta, okB := firsts["beta"]
	if a.True(okA && okB, "both branches' first calls reached the model") {
		a.True(alpha.Met && beta.Met, "both first calls were waiting at once (each held up to %s for the other)", forkMeetWait)
		last := alpha.Arrived
		if beta.Arrived.After(last) {
			last = beta.Arrived
		}
		first := alpha.Answered
		if beta.Answered.Before(first) {
			first = beta.Answered
		}
		a.False(last.After(first), "both arrived (last at %s) before either was answered (first at %s)",
			last.Format("15:04:05.000"), first.Format("15:04:05.000"))
	}

	// events.jsonl: each branch's step started under its branch id, which
	// comes right after the event's name; the join ran once, outside.
	starts := map[string]string{}
	var shows int
	for _, ev := range events {
		if ev.Event != "node_start" {
			continue
		}
		if ev.Branch != "" {
			starts[ev.Node] = ev.Branch
			a.Contains(ev.line, fmt.Sprintf(`"event":"node_start","branch":%q`, ev.Branch), "the branch id follows the event's name")
		}
		if ev.Node == "show" {
			shows++
			a.Empty(ev.Branch, "the join runs after the branches, in none of them")
		}
	}
	a.Equal(map[string]string{"write_a": "plan/alpha", "write_b": "plan/beta"}, starts, "node_start events with their branch ids")
	a.Equal(1, shows, "the join ran once")
	if join := joinEvent(events); a.NotNil(join, "a join event") {
		a.Equal([]string{"plan/alpha", "plan/beta"}, join.Branches, "merged in the fork's order")
		a.Empty(join.Conflicts)
	}

	// --json: a branches list, in the order they ended.
	a.ElementsMatch([]branchSummary{
		{ID: "plan/alpha", Fork: "plan", Name: "alpha", Path: []string{"write_a"}, Status: "succeeded"},
		{ID: "plan/beta", Fork: "plan", Name: "beta", Path: []string{"write_b"}, Status: "succeeded"},
	}, r.summary.Branches, "--json's branches")

	// Nothing left: the branches' worktrees are gone, their checkpoints
	// stay on their refs (readme/parallel.md#isolation-and-merge); the
	// harness checks that no process of the CLI is left.
	a.Equal([]string{e.work}, listed, "git worktree list: the repository's own only")
	a.Empty(left, ".dtree/worktrees holds its .gitignore only")
	var trees []string
	for _, ev := range events {
		if ev.Event == "branch_start" {
			trees = append(trees, ev.Worktree)
			a.NoDirExists(ev.Worktree, "branch %s's worktree is removed", ev.Branch)
		}
	}
	if ws := r.workspaceEvent(); a.NotNil(ws, "the workspace event") {
		runID := strings.TrimPrefix(ws.Ref, workspace.RefPrefix)
		repo := &workspace.Repo{Root: e.work}
		a.ElementsMatch([]string{repo.BranchTreeDir(runID, "plan/alpha"), repo.BranchTreeDir(runID, "plan/beta")}, trees,
			"each branch worked in .dtree/worktrees/RUN-ID.b/NAME")
		a.ElementsMatch([]string{ws.Ref, workspace.Ref(workspace.BranchRunID(runID, "plan/alpha")), workspace.Ref(workspace.BranchRunID(runID, "plan/beta"))}, refs,
			"the run's checkpoints and each branch's stay on their refs")
	}
	return r.elapsed
}

// forkOneAtATime runs the fork with --parallel 1 (readme/parallel.md#
// limits): the branches still merge, but one CLI runs at a time, so the
// first branch's call waits out the mock's meet, for a call of the other
// branch that only starts once it has ended. The check the merge case
// makes of its calls overlapping is thereby seen to fail when they do
// not.
func forkOneAtATime(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	gitWork(t, e)
	rules := forkRules(c, "printf 'written by branch alpha\\n' > a.txt", "printf 'written by branch beta\\n' > b.txt", true)
	n := len(c.extraRules)
	for i := range rules[n:] {
		rules[n+i].Delay = 0
		if rules[n+i].Meet != "" {
			rules[n+i].MeetWait = 3 * time.Second
		}
	}
	e.mock.SetRules(rules)
	chart := filepath.Join(e.home, "fork.yaml")
	require.NoError(t, os.WriteFile(chart, []byte(forkChart("cat a.txt b.txt", false)), 0o644))
	r := e.run("--parallel", "1", chart)
	skipWhileForksAreRefused(t, r)
	var firsts []mockllm.Request
	for _, q := range answered(e.mock.Requests()) {
		t.Logf("mock: %s turn=%d rule=%d met=%v arrived=%s answered=%s", q.API, q.Turn, q.Rule, q.Met,
			q.Arrived.Format("15:04:05.000"), q.Answered.Format("15:04:05.000"))
		if q.Rule == n || q.Rule == n+1 {
			firsts = append(firsts, q)
		}
	}
	a := assert.New(t)
	a.Equal(0, r.exit, "exit status")
	a.Equal(alphaWrote, readFile(e.work, "a.txt"))
	a.Equal(betaWrote, readFile(e.work, "b.txt"))
	if a.Len(firsts, 2, "both branches' first calls") {
		a.False(firsts[0].Met, "the first call met no other: it was alone")
		a.True(firsts[1].Arrived.After(firsts[0].Answered), "the second branch's call came after the first's was answered")
	}
}

// forkChain runs the same steps one after the other, without holding the
// mock's replies, and logs both wall times (the fork's when it ran).
func forkChain(t *testing.T, c cliCase, forkTime time.Duration) {
	e := newEnv(t, c)
	gitWork(t, e)
	e.mock.SetRules(forkRules(c, "printf 'written by branch alpha\\n' > a.txt", "printf 'written by branch beta\\n' > b.txt", false))
	chart := filepath.Join(e.home, "chain.yaml")
	require.NoError(t, os.WriteFile(chart, []byte(forkChart("cat a.txt b.txt", true)), 0o644))
	r := e.run(chart)
	timeline(t, rawEvents(t, e.logs))
	a := assert.New(t)
	a.Equal(0, r.exit, "exit status")
	a.Equal(alphaWrote, readFile(e.work, "a.txt"))
	a.Equal(betaWrote, readFile(e.work, "b.txt"))
	if forkTime == 0 {
		t.Logf("wall time with %s: chain %s; the fork did not run", c.name, r.elapsed.Round(time.Millisecond))
		return
	}
	t.Logf("wall time with %s: fork %s, chain %s (fork/chain %.2f)", c.name, forkTime.Round(time.Millisecond), r.elapsed.Round(time.Millisecond),
		float64(forkTime)/float64(r.elapsed))
}

// conflictRepo makes the sandbox a git repository with shared.txt, one
// line, committed.
func conflictRepo(t *testing.T, e *env) {
	t.Helper()
	gitWork(t, e)
	e.write("shared.txt", "the first line\n")
	gitIn(t, e.work, "add", "shared.txt")
	gitIn(t, e.work, "commit", "-q", "-m", "shared")
}

// forkResolve: both branches replace the one line of shared.txt, and the
// join is a step the agent runs: its prompt names the conflicted file and
// the branches, its shell finds both sides between conflict markers in
// the run's working tree, and what it writes there is the result.
func forkResolve(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	conflictRepo(t, e)
	rules := forkRules(c, "printf 'alpha was here\\n' > shared.txt", "printf 'beta was here\\n' > shared.txt", true)
	n := len(c.extraRules)
	join := []mockllm.Rule{
		{Turn: 1, Match: "Merge conflicts:", Tools: []mockllm.ToolCall{shellCall(c.name, "cat shared.txt")}, Times: 1},
		{Turn: 2, Result: "<<<<<<<", Tools: []mockllm.ToolCall{shellCall(c.name, "printf 'alpha and beta were here\\n' > shared.txt")}, Times: 1},
		{Turn: 3, Reply: processReply("resolved the conflict")},
	}
	rules = append(rules[:n:n], append(join, rules[n:]...)...)
	e.mock.SetRules(rules)
	chart := filepath.Join(e.home, "fork.yaml")
	require.NoError(t, os.WriteFile(chart, []byte(forkChart("", false)), 0o644))
	r := e.run(chart)
	skipWhileForksAreRefused(t, r)
	var asked, saw string // the join's prompt, and what its cat printed
	for _, q := range answered(e.mock.Requests()) {
		t.Logf("mock: %s turn=%d rule=%d met=%v asked=%v results=%.300q", q.API, q.Turn, q.Rule, q.Met, q.Tools, q.Results)
		switch q.Rule - n {
		case 0:
			asked = q.Prompt
		case 1:
			saw = strings.Join(q.Results, "\n")
		}
	}
	a := assert.New(t)
	a.Equal(0, r.exit, "exit status")
	a.Equal("succeeded", r.summary.Status)
	a.Equal("alpha and beta were here\n", readFile(e.work, "shared.txt"), "the join's agent resolved the conflict in the working tree")
	a.Contains(asked, `"shared.txt" (plan/alpha, plan/beta)`, "the join's prompt names the conflicted file and both branches that changed it")
	for _, want := range []string{"<<<<<<<", "alpha was here", "beta was here", ">>>>>>>"} {
		a.Contains(saw, want, "the join's shell found both sides between conflict markers")
	}
	// Each marker names its side by a commit, which the prompt says is
	// whose: alpha's side first (merged first, in the fork's order).
	for _, side := range []struct{ marker, branch string }{{"<<<<<<< ", "plan/alpha"}, {">>>>>>> ", "plan/beta"}} {
		m := regexp.MustCompile(regexp.QuoteMeta(side.marker) + `(\S+)`).FindStringSubmatch(saw)
		if a.NotNil(m, "a %q line", side.marker) {
			a.Regexp(regexp.QuoteMeta(m[1])+` holds [^;]*`+regexp.QuoteMeta(side.branch), asked, "the prompt says the side %s is %s's", m[1], side.branch)
		}
	}
}

// forkConflict: both branches replace the one line of shared.txt; the
// join, a command step, cannot merge them: the run fails there, naming
// the file and both branches, and the join's command does not run.
func forkConflict(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	conflictRepo(t, e)
	e.mock.SetRules(forkRules(c, "printf 'alpha was here\\n' > shared.txt", "printf 'beta was here\\n' > shared.txt", true))
	chart := filepath.Join(e.home, "fork.yaml")
	require.NoError(t, os.WriteFile(chart, []byte(forkChart("cat shared.txt > joined.txt", false)), 0o644))
	r := e.run(chart)
	skipWhileForksAreRefused(t, r)
	for _, q := range answered(e.mock.Requests()) {
		t.Logf("mock: %s turn=%d rule=%d met=%v asked=%v", q.API, q.Turn, q.Rule, q.Met, q.Tools)
	}
	var errLine string // what dtree says of the failure, not the progress
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(line, "dtree: error: ") {
			errLine = line
		}
	}
	a := assert.New(t)
	a.Equal(1, r.exit, "exit status")
	a.Equal("failed", r.summary.Status)
	a.Contains(errLine, `join show "Show what the branches wrote."`, "the error names the join")
	want := `"shared.txt" (plan/alpha, plan/beta)`
	a.Contains(errLine, want, "the error names both branches that changed the file")
	a.Contains(r.summary.Error, want, "--json's error")
	a.NoFileExists(filepath.Join(e.work, "joined.txt"), "the join's command did not run")
	if join := joinEvent(rawEvents(t, e.logs)); a.NotNil(join, "a join event") {
		a.Equal([]string{"shared.txt"}, join.Conflicts, "the join event's conflicted files")
	}
}
