package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/mockllm"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// workspaceTools are the tool calls by which each CLI edits the working
// tree in TestConformanceWorkspace: the first creates notes.txt with its
// file-writing tool (its shell where it has none), the second changes
// README.md through its shell. work is the working directory, absolute.
var workspaceTools = map[string]func(work string) [2]mockllm.ToolCall{
	"claude": func(work string) [2]mockllm.ToolCall {
		return [2]mockllm.ToolCall{
			{Name: "Write", Input: map[string]any{"file_path": filepath.Join(work, "notes.txt"), "content": "written by the agent\n"}},
			{Name: "Bash", Input: map[string]any{"command": "printf 'edited by the agent\\n' >> README.md", "description": "Append to README"}},
		}
	},
	"gemini": func(work string) [2]mockllm.ToolCall {
		return [2]mockllm.ToolCall{
			{Name: "write_file", Input: map[string]any{"file_path": filepath.Join(work, "notes.txt"), "content": "written by the agent\n"}},
			{Name: "run_shell_command", Input: map[string]any{"command": "printf 'edited by the agent\\n' >> README.md", "description": "Append to README"}},
		}
	},
	"codex": func(work string) [2]mockllm.ToolCall {
		return [2]mockllm.ToolCall{
			{Name: "exec_command", Input: map[string]any{"cmd": "printf 'written by the agent\\n' > notes.txt"}},
			{Name: "exec_command", Input: map[string]any{"cmd": "printf 'edited by the agent\\n' >> README.md"}},
		}
	},
}

// gitIn runs git in dir with a test identity and no machine config.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/local/bin:/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// gitWork makes the sandbox's working directory a git repository with
// README.md committed, and returns `git status` and HEAD to compare with.
func gitWork(t *testing.T, e *env) {
	t.Helper()
	gitIn(t, e.work, "init", "-q", "-b", "main")
	e.write("README.md", "# project\n")
	e.write(".gitignore", "dtree.yaml\n")
	gitIn(t, e.work, "add", "README.md", ".gitignore")
	gitIn(t, e.work, "commit", "-q", "-m", "first")
}

// nodeEnds are the run's node_end events.
func (r result) nodeEnds() []runlog.NodeEnd {
	var out []runlog.NodeEnd
	for _, ev := range r.events {
		if n, ok := ev.(runlog.NodeEnd); ok {
			out = append(out, n)
		}
	}
	return out
}

// workspaceEvent is the run's workspace event, nil when there is none.
func (r result) workspaceEvent() *runlog.Workspace {
	for _, ev := range r.events {
		if w, ok := ev.(runlog.Workspace); ok {
			return &w
		}
	}
	return nil
}

// paths are a change's paths with their status letters.
func paths(c *types.Change) []string {
	var out []string
	if c != nil {
		for _, p := range c.Paths {
			out = append(out, p.Status+" "+p.Path)
		}
	}
	return out
}

// TestConformanceWorkspace (readme/workspace.md): the real CLI, in a git
// repository, creates a file with its own write tool and edits another
// through its shell; the step's node_end lists both in its change, the
// run's checkpoints are on its private ref, and the user's HEAD and index
// are as they were.
func TestConformanceWorkspace(t *testing.T) {
	if dtreeBin == "" {
		t.Skipf("%s is not set: `make conformance` installs the real CLIs and runs these tests", cliDirEnv)
	}
	only := os.Getenv("DTREE_CONFORMANCE_ONLY")
	for _, c := range cases() {
		tools, ok := workspaceTools[c.name]
		if !ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			if only != "" && !slices.Contains(strings.Split(only, ","), c.name) {
				t.Skipf("not in DTREE_CONFORMANCE_ONLY=%s", only)
			}
			t.Run("change", func(t *testing.T) {
				e := newEnv(t, c)
				gitWork(t, e)
				head := gitIn(t, e.work, "rev-parse", "HEAD")
				index, err := os.ReadFile(filepath.Join(e.work, ".git", "index"))
				require.NoError(t, err)
				calls := tools(e.work)
				e.mock.SetRules(c.rules(
					mockllm.Rule{Turn: 3, Reply: processReply("wrote the notes")},
					mockllm.Rule{Turn: 2, Tools: calls[1:], Times: 1},
					mockllm.Rule{Turn: 1, Match: "conformance workspace", Tools: calls[:1], Times: 1},
				))
				chart := filepath.Join(e.home, "chart.yaml")
				require.NoError(t, os.WriteFile(chart, []byte(oneNode("Write the notes (conformance workspace).")), 0o644))
				r := e.run("--retries", "0", chart)
				for _, q := range answered(e.mock.Requests()) {
					t.Logf("mock: %s turn=%d rule=%d asked=%v results=%.200q", q.API, q.Turn, q.Rule, q.Tools, q.Results)
				}
				expect(t, c, "workspace change", func(a *assert.Assertions) {
					a.Equal(0, r.exit, "exit status")
					a.Equal("written by the agent\n", readFile(e.work, "notes.txt"), "the agent's write tool ran")
					a.Equal("# project\nedited by the agent\n", readFile(e.work, "README.md"), "the agent's shell ran")
					ends := r.nodeEnds()
					if a.Len(ends, 1) && a.NotNil(ends[0].Change, "node_end has the change") {
						a.ElementsMatch([]string{"A notes.txt", "M README.md"}, paths(ends[0].Change))
						a.Equal(2, ends[0].Change.Files)
						a.Equal(2, ends[0].Change.Added)
					}
					ws := r.workspaceEvent()
					if a.NotNil(ws, "the workspace event") && ends[0].Change != nil {
						a.Empty(ws.Off)
						a.Equal(e.work, ws.Repo)
						a.Equal(ws.Checkpoint, ends[0].Change.From, "the step's change starts at the checkpoint before the run")
						a.Equal(ends[0].Change.To+"\n", gitIn(t, e.work, "rev-parse", ws.Ref), "the run's ref is at the step's checkpoint")
						a.Contains(gitIn(t, e.work, "show", "--format=", "--name-status", ws.Ref), "notes.txt")
					}
					a.Equal(head, gitIn(t, e.work, "rev-parse", "HEAD"), "HEAD did not move")
					after, _ := os.ReadFile(filepath.Join(e.work, ".git", "index"))
					a.Equal(index, after, "the user's index is untouched")
				})
			})
			t.Run("scope", func(t *testing.T) { workspaceScope(t, c, tools) })
			t.Run("rollback", func(t *testing.T) { workspaceRollback(t, c, tools) })
		})
	}
}

// retryMark is in the prompt of an attempt after the first: the previous
// attempt's critique.
const retryMark = "## Previous attempt feedback (attempt 1)"

// workspaceScope (readme/workspace.md#scope): the step may change
// notes.txt only; the agent's first attempt also edits README.md through
// its shell. That edit is undone, the attempt fails, the retry's prompt
// names README.md, and the retry, which writes notes.txt only, succeeds.
func workspaceScope(t *testing.T, c cliCase, tools func(string) [2]mockllm.ToolCall) {
	e := newEnv(t, c)
	gitWork(t, e)
	calls := tools(e.work)
	e.mock.SetRules(c.rules(
		// A later turn's prompt is its tool results: the first turn 2 is
		// the first attempt's, the second the retry's.
		mockllm.Rule{Match: retryMark, Turn: 1, Tools: calls[:1], Times: 1},
		mockllm.Rule{Turn: 3, Reply: processReply("wrote the notes and the README")},
		mockllm.Rule{Turn: 2, Tools: calls[1:], Times: 1},
		mockllm.Rule{Turn: 2, Reply: processReply("wrote the notes only")},
		mockllm.Rule{Turn: 1, Match: "conformance scope", Tools: calls[:1], Times: 1},
	))
	chart := filepath.Join(e.home, "chart.yaml")
	require.NoError(t, os.WriteFile(chart, []byte("nodes:\n  - id: notes\n    tags: NoValidation\n    text: Write the notes (conformance scope).\n    metadata: {retries: 1, paths: notes.txt}\n"), 0o644))
	r := e.run(chart)
	reqs := answered(e.mock.Requests())
	var retry []string
	for _, q := range reqs {
		t.Logf("mock: %s turn=%d rule=%d asked=%v results=%.200q", q.API, q.Turn, q.Rule, q.Tools, q.Results)
		if strings.Contains(q.Prompt, retryMark) {
			retry = append(retry, q.Prompt)
		}
	}
	expect(t, c, "workspace scope", func(a *assert.Assertions) {
		a.Equal(0, r.exit, "exit status")
		a.Equal("written by the agent\n", readFile(e.work, "notes.txt"), "the change inside the paths stays")
		a.Equal("# project\n", readFile(e.work, "README.md"), "the change outside the paths is undone")
		var out []runlog.OutOfScope
		for _, ev := range r.events {
			if o, ok := ev.(runlog.OutOfScope); ok {
				out = append(out, o)
			}
		}
		if a.Len(out, 1, "one out_of_scope event") {
			a.Equal(1, out[0].Attempt)
			if a.Len(out[0].Paths, 1) {
				a.Equal("M README.md", out[0].Paths[0].Status+" "+out[0].Paths[0].Path)
			}
		}
		if a.NotEmpty(retry, "the retry reached the model") {
			a.Contains(retry[0], "README.md", "the retry's critique names the file changed outside the paths")
		}
	})
}

// workspaceRollback (readme/workspace.md#rollback): with rollback:
// attempt, the agent's first attempt writes notes.txt, edits README.md
// and reports the task not completed; before the retry both are undone,
// which the retry's own shell sees.
func workspaceRollback(t *testing.T, c cliCase, tools func(string) [2]mockllm.ToolCall) {
	e := newEnv(t, c)
	gitWork(t, e)
	calls := tools(e.work)
	look := calls[1]
	look.Input = map[string]any{}
	for k, v := range calls[1].Input {
		look.Input[k] = v
	}
	for _, k := range []string{"command", "cmd"} {
		if _, ok := look.Input[k]; ok {
			look.Input[k] = "if test -e notes.txt; then echo notes-still-there; else echo notes-gone; fi; cat README.md"
		}
	}
	e.mock.SetRules(c.rules(
		mockllm.Rule{Match: retryMark, Turn: 1, Tools: []mockllm.ToolCall{look}, Times: 1},
		mockllm.Rule{Result: "notes-", Reply: processReply("the tree was as before")},
		mockllm.Rule{Turn: 3, Reply: "Half done.\n\n{\"completed\": false, \"secs_taken\": 3, \"tokens_used\": 0, \"comments\": [\"gave up half way\"]}"},
		mockllm.Rule{Turn: 2, Tools: calls[1:], Times: 1},
		mockllm.Rule{Turn: 1, Match: "conformance rollback", Tools: calls[:1], Times: 1},
	))
	chart := filepath.Join(e.home, "chart.yaml")
	require.NoError(t, os.WriteFile(chart, []byte("nodes:\n  - id: notes\n    tags: NoValidation\n    text: Write the notes (conformance rollback).\n    metadata: {retries: 1, rollback: attempt}\n"), 0o644))
	r := e.run(chart)
	var seen string
	for _, q := range answered(e.mock.Requests()) {
		t.Logf("mock: %s turn=%d rule=%d asked=%v results=%.200q", q.API, q.Turn, q.Rule, q.Tools, q.Results)
		if r := strings.Join(q.Results, "\n"); strings.Contains(r, "notes-") {
			seen = r
		}
	}
	expect(t, c, "workspace rollback", func(a *assert.Assertions) {
		a.Equal(0, r.exit, "exit status")
		a.Contains(seen, "notes-gone", "the retry's shell found no notes.txt")
		a.Contains(seen, "# project", "the retry's shell read README.md")
		a.NotContains(seen, "edited by the agent", "the failed attempt's edit was undone before the retry")
		var rb []runlog.Rollback
		for _, ev := range r.events {
			if o, ok := ev.(runlog.Rollback); ok {
				rb = append(rb, o)
			}
		}
		if a.Len(rb, 1, "one rollback event") {
			a.Equal(1, rb[0].Attempt)
			a.ElementsMatch([]string{"A notes.txt", "M README.md"}, paths(rb[0].Change))
		}
		a.NoFileExists(filepath.Join(e.work, "notes.txt"))
		a.Equal("# project\n", readFile(e.work, "README.md"))
	})
}

// readFile is a file's text in dir, "" when it cannot be read.
func readFile(dir, name string) string {
	b, _ := os.ReadFile(filepath.Join(dir, name))
	return string(b)
}
