package run

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// guardCSV is Start → Work → Done? (yes: End, no: Work), Work's custom
// data from the arguments: paths, rollback, retries, validate.
func guardCSV(paths, rollback string, retries int, validate bool) string {
	tags := "NoValidation"
	if validate {
		tags = ""
	}
	return fmt.Sprintf(`Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments,paths,rollback,retries
1,Page,,,,,,,,,,,P,,,,
2,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,Start,,,,
3,Process,Flowchart Shapes/Containers,1,,,,,,,%s,,Work,,%q,%s,%d
4,Decision,Flowchart Shapes/Containers,1,,,,,,,,,Done?,,,,
5,Terminator,Flowchart Shapes/Containers,1,,,,,,,,,End,,,,
6,Line,,1,,,2,3,None,Arrow,,,,,,,
7,Line,,1,,,3,4,None,Arrow,,,,,,,
8,Line,,1,,,4,5,None,Arrow,,,Yes,,,,
9,Line,,1,,,4,3,None,Arrow,,,No,,,,`, tags, paths, rollback, retries)
}

// agentFunc is a fake agent: the node, purpose, attempt and prompt of
// each call, and the directory it works in; it may edit files there.
type agentFunc func(dir, node, purpose string, attempt int, prompt string) string

type guardRun struct {
	dir     string
	sum     *Summary
	err     error
	events  []runlog.Event
	undone  []string // what the progress was told
	prompts []string
}

// walkGit runs csv in a new git repository holding files, with the
// run's checkpoints on (git == true) or off.
func walkGit(t *testing.T, csv string, files map[string]string, git bool, rollback string, a agentFunc) guardRun {
	t.Helper()
	return walkGitCtx(context.Background(), t, csv, files, git, rollback, a)
}

func walkGitCtx(ctx context.Context, t *testing.T, csv string, files map[string]string, git bool, rollback string, a agentFunc) guardRun {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	c, reg := fakeChart(t, strings.NewReader(csv))
	dir := t.TempDir()
	for name, text := range files {
		writeFile(t, dir, name, text)
	}
	var repo *workspace.Repo
	if git {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "first"}} {
			cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "git %v: %s", args, out)
		}
		var err error
		repo, err = workspace.Open(context.Background(), dir)
		require.NoError(t, err)
	}
	r := guardRun{dir: dir}
	var mu sync.Mutex
	runner := func(ctx context.Context, call agent.Call) (agent.Result, error) {
		purpose := "run"
		switch {
		case call.Request.Purpose == agent.PurposeValidate:
			purpose = "validate"
		case strings.Contains(call.Prompt, `"answer"`):
			purpose = "decide"
		}
		mu.Lock()
		r.prompts = append(r.prompts, call.Request.Node+" "+purpose+": "+call.Prompt)
		mu.Unlock()
		return agent.Result{Answer: a(call.Dir, call.Request.Node, purpose, call.Request.Attempt, call.Prompt)}, nil
	}
	logs := filepath.Join(t.TempDir(), "logs")
	log, err := runlog.Open(runlog.Options{Dir: logs})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	p := &undoneProgress{}
	r.sum, r.err = Walk(ctx, Options{Chart: c, Page: c.Doc.Pages[0], Start: c.Doc.Pages[0].Root,
		Registry: reg, Runner: runner, Backoff: func(int) time.Duration { return 0 }, Log: log, Workdir: dir,
		Workspace: repo, Rollback: rollback, Progress: p})
	require.NoError(t, log.Flush())
	r.events, err = runlog.ReadEvents(log.Dir)
	require.NoError(t, err)
	r.undone = p.lines
	return r
}

type undoneProgress struct {
	nopProgress
	lines []string
}

func (p *undoneProgress) Undone(n *types.ProcessedNode, attempt int, msg string, warn bool) {
	p.lines = append(p.lines, fmt.Sprintf("%s %d %t: %s", n.ID, attempt, warn, msg))
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

func readText(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(b)
}

// notDone fails attempts 1 and 2 of Work after it edits base.txt and
// adds a file of its own; attempt 3 succeeds. seen records, at each
// attempt's start, what the tree had of the attempts before.
func notDone(seen *[]string) agentFunc {
	return func(dir, node, purpose string, attempt int, _ string) string {
		if node != "3" {
			return `{"answer": "Yes"}`
		}
		b, _ := os.ReadFile(filepath.Join(dir, "base.txt"))
		*seen = append(*seen, fmt.Sprintf("attempt %d saw base %q a1 %t a2 %t", attempt, b, exists(dir, "a1.txt"), exists(dir, "a2.txt")))
		os.WriteFile(filepath.Join(dir, "base.txt"), append(b, fmt.Sprintf("edit %d\n", attempt)...), 0o644)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("a%d.txt", attempt)), []byte("x\n"), 0o644)
		if attempt < 3 {
			return `{"completed": false, "comments": ["not yet"]}`
		}
		return done
	}
}

func TestRollbackAttempt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, setting, node string
	}{
		{name: "setting", setting: "attempt"},
		{name: "node wins", setting: "keep", node: "attempt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var seen []string
			r := walkGit(t, guardCSV("", tt.node, 2, false), map[string]string{"base.txt": "base\n"}, true, tt.setting, notDone(&seen))
			require.NoError(t, r.err)
			// Each retry started from the tree before the first attempt.
			assert.Equal(t, []string{
				`attempt 1 saw base "base\n" a1 false a2 false`,
				`attempt 2 saw base "base\n" a1 false a2 false`,
				`attempt 3 saw base "base\n" a1 false a2 false`,
			}, seen)
			assert.Equal(t, "base\nedit 3\n", readText(t, r.dir, "base.txt"))
			assert.True(t, exists(r.dir, "a3.txt"))
			rb := eventsOf[runlog.Rollback](r.events)
			require.Len(t, rb, 2)
			for i, e := range rb {
				assert.Equal(t, i+1, e.Attempt)
				assert.Equal(t, 2, e.Change.Files)
				assert.Equal(t, e.Checkpoint, e.Change.From)
			}
			retries := eventsOf[runlog.Retry](r.events)
			require.Len(t, retries, 2)
			assert.Equal(t, "attempt", retries[0].Rollback)
			assert.Len(t, r.undone, 2)
			assert.Contains(t, r.undone[0], "rolled back: undid its change to 2 files")
			// node_end's change is the visit's, from before its first attempt.
			end := eventsOf[runlog.NodeEnd](r.events)[0]
			assert.Equal(t, 2, end.Change.Files)
			assert.Equal(t, rb[0].Checkpoint, end.Change.From)
		})
	}
}

// keep, the default, lets the retry build on the failed attempt, and the
// retry event says what it kept.
func TestRollbackKeep(t *testing.T) {
	t.Parallel()
	var seen []string
	r := walkGit(t, guardCSV("", "", 2, false), map[string]string{"base.txt": "base\n"}, true, "", notDone(&seen))
	require.NoError(t, r.err)
	assert.Equal(t, `attempt 3 saw base "base\nedit 1\nedit 2\n" a1 true a2 true`, seen[2])
	assert.Empty(t, eventsOf[runlog.Rollback](r.events))
	retries := eventsOf[runlog.Retry](r.events)
	require.Len(t, retries, 2)
	assert.Equal(t, "keep", retries[1].Rollback)
	require.NotNil(t, retries[1].Change)
	assert.Equal(t, 2, retries[1].Change.Files) // base.txt and a2.txt
}

// The last attempt's change stays, rollback or not: the node failed.
func TestRollbackLeavesTheLastAttempt(t *testing.T) {
	t.Parallel()
	var seen []string
	r := walkGit(t, guardCSV("", "attempt", 1, false), map[string]string{"base.txt": "base\n"}, true, "", notDone(&seen))
	require.Error(t, r.err)
	assert.Equal(t, "base\nedit 2\n", readText(t, r.dir, "base.txt"))
	assert.False(t, exists(r.dir, "a1.txt"))
	assert.True(t, exists(r.dir, "a2.txt"))
	assert.Len(t, eventsOf[runlog.Rollback](r.events), 1)
}

func TestScope(t *testing.T) {
	t.Parallel()
	var seen []string
	r := walkGit(t, guardCSV("src/, !src/gen/", "", 1, true), map[string]string{"src/a.go": "a\n", "README": "r\n"}, true, "",
		func(dir, node, purpose string, attempt int, _ string) string {
			switch {
			case node != "3":
				return `{"answer": "Yes"}`
			case purpose == "validate":
				return valid
			}
			seen = append(seen, fmt.Sprintf("attempt %d: out %t, gen %t, README %q", attempt, exists(dir, "out.txt"), exists(dir, "src/gen/x.go"), readText(t, dir, "README")))
			writeFile(t, dir, fmt.Sprintf("src/b%d.go", attempt), "b\n")
			if attempt == 1 {
				writeFile(t, dir, "out.txt", "o\n")
				writeFile(t, dir, "src/gen/x.go", "g\n")
				writeFile(t, dir, "README", "changed\n")
			}
			return done
		})
	require.NoError(t, r.err)
	assert.Equal(t, []string{`attempt 1: out false, gen false, README "r\n"`, `attempt 2: out false, gen false, README "r\n"`}, seen)
	assert.True(t, exists(r.dir, "src/b1.go"), "the change inside the paths is kept")
	assert.True(t, exists(r.dir, "src/b2.go"))
	oos := eventsOf[runlog.OutOfScope](r.events)
	require.Len(t, oos, 1)
	assert.Equal(t, 3, oos[0].Files)
	var got []string
	for _, p := range oos[0].Paths {
		got = append(got, p.Status+" "+p.Path)
	}
	assert.ElementsMatch(t, []string{"A out.txt", "A src/gen/x.go", "M README"}, got)
	// No validation was spent on the attempt out of scope; the retry's
	// critique names the files.
	var validations, retryPrompt int
	for _, p := range r.prompts {
		if strings.HasPrefix(p, "3 validate") {
			validations++
		}
		if strings.HasPrefix(p, "3 run") && strings.Contains(p, `outside the paths this step may change (src/, !src/gen/): "README", "out.txt", "src/gen/x.go"`) {
			retryPrompt++
		}
	}
	assert.Equal(t, 1, validations)
	assert.Equal(t, 1, retryPrompt, "%v", r.prompts)
	require.Len(t, r.undone, 1)
	assert.Contains(t, r.undone[0], "3 1 true: undid the change to 3 files outside the step's paths")
}

// A change out of scope on the last attempt fails the node, and is undone.
func TestScopeLastAttempt(t *testing.T) {
	t.Parallel()
	r := walkGit(t, guardCSV("docs/", "", 0, false), map[string]string{"a": "a\n"}, true, "",
		func(dir, node, purpose string, attempt int, _ string) string {
			writeFile(t, dir, "docs/d.md", "d\n")
			writeFile(t, dir, "a", "changed\n")
			return done
		})
	require.Error(t, r.err)
	assert.Contains(t, r.err.Error(), `you changed 1 file outside the paths this step may change (docs/): "a"`)
	assert.Equal(t, "a\n", readText(t, r.dir, "a"))
	assert.True(t, exists(r.dir, "docs/d.md"))
}

// A decision and a validation leave the tree as they found it.
func TestDecisionAndValidationLeaveTheTree(t *testing.T) {
	t.Parallel()
	r := walkGit(t, guardCSV("", "", 0, true), map[string]string{"a": "a\n"}, true, "",
		func(dir, node, purpose string, attempt int, _ string) string {
			switch purpose {
			case "validate":
				writeFile(t, dir, "by-validator", "v\n")
				return valid
			case "decide":
				writeFile(t, dir, "a", "by decision\n")
				return `{"answer": "Yes"}`
			}
			writeFile(t, dir, "work", "w\n")
			return done
		})
	require.NoError(t, r.err)
	assert.True(t, exists(r.dir, "work"))
	assert.False(t, exists(r.dir, "by-validator"))
	assert.Equal(t, "a\n", readText(t, r.dir, "a"))
	tr := eventsOf[runlog.TreeRestored](r.events)
	require.Len(t, tr, 2)
	assert.Equal(t, "validation", tr[0].By)
	assert.Equal(t, "decision", tr[1].By)
	assert.Equal(t, "4", tr[1].Node)
	require.Len(t, r.undone, 2)
	assert.Contains(t, r.undone[1], "4 1 true: the decision changed 1 file; undone")
	// The process step's node_end has its own work, not the validator's.
	ends := eventsOf[runlog.NodeEnd](r.events)
	require.Len(t, ends, 2)
	assert.Equal(t, 1, ends[0].Change.Files)
	assert.Equal(t, "work", ends[0].Change.Paths[0].Path)
	assert.Equal(t, 0, ends[1].Change.Files)
}

// Without checkpoints, paths and rollback attempt fail the node before
// any agent runs.
func TestGuardNeedsGit(t *testing.T) {
	t.Parallel()
	calls := 0
	a := func(string, string, string, int, string) string { calls++; return done }
	r := walkGit(t, guardCSV("src/", "", 0, false), nil, false, "", a)
	require.ErrorIs(t, r.err, ErrNeedsGit)
	assert.Contains(t, r.err.Error(), "node 3: paths needs a git repository, and the run is not in a git repository")
	r = walkGit(t, guardCSV("", "", 0, false), nil, false, "attempt", a)
	require.ErrorIs(t, r.err, ErrNeedsGit)
	assert.Zero(t, calls)
}

// An attempt stopped by an interrupt has its change outside its paths
// undone all the same; its change inside stays.
func TestScopeOnInterrupt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := walkGitCtx(ctx, t, guardCSV("src/", "", 2, false), map[string]string{"a": "a\n"}, true, "",
		func(dir, node, purpose string, attempt int, _ string) string {
			writeFile(t, dir, "src/in.go", "i\n")
			writeFile(t, dir, "a", "changed\n")
			cancel()
			return done
		})
	require.ErrorIs(t, r.err, context.Canceled)
	assert.Equal(t, "a\n", readText(t, r.dir, "a"))
	assert.True(t, exists(r.dir, "src/in.go"))
	require.Len(t, eventsOf[runlog.OutOfScope](r.events), 1)
}

// When a checkpoint cannot be taken (here an agent holds the lock of
// dtree's index), a step with paths stops, saying why: what it was asked
// cannot be done. A decision, which asked nothing of the guard, goes on,
// and the workspace event says checkpoints failed.
func TestGuardCheckpointFails(t *testing.T) {
	t.Parallel()
	lock := func(dir string) {
		matches, _ := filepath.Glob(filepath.Join(dir, ".git", "dtree", "*.index"))
		for _, m := range matches {
			writeFile(t, filepath.Dir(m), filepath.Base(m)+".lock", "")
		}
	}
	r := walkGit(t, guardCSV("src/", "", 1, false), map[string]string{"a": "a\n"}, true, "",
		func(dir, node, purpose string, attempt int, _ string) string {
			writeFile(t, dir, "out.txt", "o\n")
			lock(dir)
			return done
		})
	require.Error(t, r.err)
	assert.Contains(t, r.err.Error(), "node 3: undoing the change outside its paths: checkpoint: git add")
	assert.Len(t, r.prompts, 1, "no retry")

	r = walkGit(t, guardCSV("", "", 0, false), map[string]string{"a": "a\n"}, true, "",
		func(dir, node, purpose string, attempt int, _ string) string {
			if purpose == "decide" {
				lock(dir)
				writeFile(t, dir, "by-decision", "d\n")
				return `{"answer": "Yes"}`
			}
			return done
		})
	require.NoError(t, r.err)
	var off []string
	for _, ev := range eventsOf[runlog.Workspace](r.events) {
		off = append(off, ev.Off)
	}
	assert.Contains(t, strings.Join(off, "\n"), "index.lock")
}
