package ci

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The fork's workflow (testdata/ci/fork-matrix.yml, readme/ci.md#branches-on-separate-machines)
// played as GitHub's runner plays it: jobs in the order their needs give,
// a job's run: steps with bash as the runner runs them, with the
// variables and files it sets (GITHUB_OUTPUT per step, GITHUB_PATH,
// GITHUB_STEP_SUMMARY, RUNNER_TEMP), job outputs from step outputs, and
// the matrix job expanded from fromJSON of the plan's output, once per
// entry with its ${{ matrix.* }} put in.

type wfStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
	With map[string]string `yaml:"with"`
}

type wfJob struct {
	Name     string            `yaml:"name"`
	Needs    string            `yaml:"needs"`
	RunsOn   string            `yaml:"runs-on"`
	Outputs  map[string]string `yaml:"outputs"`
	Strategy struct {
		Matrix string `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []wfStep `yaml:"steps"`
}

type wfFile struct {
	Env  map[string]string `yaml:"env"`
	Jobs yaml.Node         `yaml:"jobs"` // a mapping, read in order below
}

// jobs returns the workflow's jobs in file order.
func (w wfFile) jobs(t *testing.T) ([]string, map[string]wfJob) {
	t.Helper()
	require.Equal(t, yaml.MappingNode, w.Jobs.Kind)
	var names []string
	jobs := map[string]wfJob{}
	for i := 0; i+1 < len(w.Jobs.Content); i += 2 {
		var j wfJob
		require.NoError(t, w.Jobs.Content[i+1].Decode(&j))
		names = append(names, w.Jobs.Content[i].Value)
		jobs[w.Jobs.Content[i].Value] = j
	}
	return names, jobs
}

// wfRunner plays one job at a time.
type wfRunner struct {
	t         *testing.T
	origin    string // the repository actions/checkout clones
	artifacts string // where upload-artifact keeps them, a directory each
	work      string // GITHUB_WORKSPACE: the job's checkout
	temp      string // RUNNER_TEMP: the job's own
	bin       string // the directory of the dtree under test
	env       map[string]string
	needs     map[string]map[string]string // job → its outputs
	matrix    map[string]any               // the entry this job runs, nil outside a matrix
	steps     map[string]map[string]string // step id → its outputs, in this job
	path      []string                     // added by GITHUB_PATH, in this job
}

var wfExpression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// value is an expression's value; the runner knows only the expressions
// the workflow uses, so that one it grows fails here until taught.
func (r *wfRunner) value(e string) (any, bool) {
	p := strings.Split(e, ".")
	switch {
	case len(p) == 2 && p[0] == "matrix" && r.matrix != nil:
		v, ok := r.matrix[p[1]]
		return v, ok
	case len(p) == 4 && p[0] == "steps" && p[2] == "outputs":
		return r.steps[p[1]][p[3]], true
	case len(p) == 4 && p[0] == "needs" && p[2] == "outputs":
		return r.needs[p[1]][p[3]], true
	case len(p) == 2 && p[0] == "secrets":
		return "", true
	case e == "runner.temp":
		return r.temp, true
	}
	return nil, false
}

func (r *wfRunner) eval(s string) string {
	return wfExpression.ReplaceAllStringFunc(s, func(m string) string {
		e := wfExpression.FindStringSubmatch(m)[1]
		v, ok := r.value(e)
		if !ok {
			r.t.Fatalf("the workflow uses an expression the runner does not know: %s", m)
		}
		switch v := v.(type) {
		case string:
			return v
		case nil:
			return ""
		}
		b, err := json.Marshal(v)
		require.NoError(r.t, err)
		return string(b)
	})
}

// when is a step's if: the runner's conditions the workflow uses.
func (r *wfRunner) when(cond string, failed bool) bool {
	if cond == "" {
		return !failed
	}
	if m := regexp.MustCompile(`^always\(\) && steps\.(\w+)\.outputs\.([\w-]+) != ''$`).FindStringSubmatch(cond); m != nil {
		return r.steps[m[1]][m[2]] != ""
	}
	r.t.Fatalf("the workflow uses a condition the runner does not know: %s", cond)
	return false
}

// runJob plays job's steps on a fresh runner: it returns the exit status
// of the first that fails (0 when none does), all they printed, and the
// job's outputs. actions/checkout clones the origin into the workspace,
// setup-go is done (go is on PATH), upload-artifact copies its path into
// the run's artifacts and download-artifact copies those its pattern
// matches into its path, a directory each, as v4 does; "Install dtree"
// puts the dtree under test on the PATH as its script's last line does,
// and "Install the agent CLI" is skipped: the chart's steps are commands.
func (r *wfRunner) runJob(job wfJob) (int, string, map[string]string) {
	r.steps, r.path = map[string]map[string]string{}, nil
	r.work, r.temp = r.t.TempDir(), r.t.TempDir()
	r.env["RUNNER_TEMP"], r.env["GITHUB_WORKSPACE"] = r.temp, r.work
	r.env["GITHUB_STEP_SUMMARY"] = filepath.Join(r.temp, "summary.md")
	var out bytes.Buffer
	code := 0
	for i, s := range job.Steps {
		if !r.when(s.If, code != 0) {
			continue
		}
		if s.Uses != "" {
			r.uses(s)
			continue
		}
		switch s.Name {
		case "Install dtree":
			require.Contains(r.t, s.Run, `echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"`)
			r.path = append(r.path, r.bin)
			continue
		case "Install the agent CLI":
			continue
		}
		dir := filepath.Join(r.temp, "steps", strings.Repeat("s", i+1))
		require.NoError(r.t, os.MkdirAll(dir, 0o755))
		outputs, paths := filepath.Join(dir, "output"), filepath.Join(dir, "path")
		for _, f := range []string{outputs, paths} {
			require.NoError(r.t, os.WriteFile(f, nil, 0o644))
		}
		script := filepath.Join(dir, "step.sh")
		require.NoError(r.t, os.WriteFile(script, []byte(r.eval(s.Run)), 0o644))
		// GitHub runs a run: step as bash --noprofile --norc -eo pipefail {0}.
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = r.work
		env := map[string]string{}
		for k, v := range r.env {
			env[k] = v
		}
		for k, v := range s.Env {
			env[k] = r.eval(v)
		}
		env["PATH"] = strings.Join(append(append([]string{}, r.path...), env["PATH"]), string(os.PathListSeparator))
		env["GITHUB_OUTPUT"], env["GITHUB_PATH"] = outputs, paths
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if s.ID != "" {
			r.steps[s.ID] = readOutputs(r.t, outputs)
		}
		b, rerr := os.ReadFile(paths)
		require.NoError(r.t, rerr)
		for _, p := range strings.Fields(string(b)) {
			r.path = append([]string{p}, r.path...)
		}
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			require.True(r.t, ok, "%v: %s", err, out.String())
			code = ee.ExitCode()
		}
	}
	outs := map[string]string{}
	for k, v := range job.Outputs {
		outs[k] = r.eval(v)
	}
	return code, out.String(), outs
}

// uses plays the actions the workflow uses.
func (r *wfRunner) uses(s wfStep) {
	action, _, _ := strings.Cut(s.Uses, "@")
	with := map[string]string{}
	for k, v := range s.With {
		with[k] = r.eval(v)
	}
	switch action {
	case "actions/checkout":
		mustRun(r.t, "", "git", "clone", "-q", r.origin, r.work)
	case "actions/setup-go":
	case "actions/upload-artifact":
		require.NotEmpty(r.t, with["name"])
		dst := filepath.Join(r.artifacts, with["name"])
		_, err := os.Stat(dst)
		require.True(r.t, os.IsNotExist(err), "artifact %s uploaded twice: its name must be unique in the workflow run", with["name"])
		require.NoError(r.t, os.CopyFS(dst, os.DirFS(with["path"])))
	case "actions/download-artifact":
		entries, err := os.ReadDir(r.artifacts)
		require.NoError(r.t, err)
		for _, e := range entries {
			if ok, _ := filepath.Match(with["pattern"], e.Name()); ok {
				require.NoError(r.t, os.CopyFS(filepath.Join(with["path"], e.Name()), os.DirFS(filepath.Join(r.artifacts, e.Name()))))
			}
		}
	default:
		r.t.Fatalf("the workflow uses an action the runner does not play: %s", s.Uses)
	}
}

// mustRun runs a command that must succeed.
func mustRun(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v: %s", name, args, out)
}

// readOutputs reads a GITHUB_OUTPUT file's NAME=VALUE lines (the
// heredoc form, NAME<<EOF, is not used by this workflow's steps).
func readOutputs(t *testing.T, file string) map[string]string {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		require.NotContains(t, line, "<<", "a heredoc output")
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// expand is the runner's matrix of a job: fromJSON(…) of the expression,
// then, for a matrix of include only, one job per object.
func (r *wfRunner) expand(matrix string) []map[string]any {
	e := wfExpression.FindStringSubmatch(matrix)
	require.NotNil(r.t, e, "the matrix is an expression: %s", matrix)
	arg, ok := strings.CutPrefix(e[1], "fromJSON(")
	require.True(r.t, ok, "the matrix is fromJSON(…): %s", matrix)
	arg, ok = strings.CutSuffix(arg, ")")
	require.True(r.t, ok)
	v, ok := r.value(arg)
	require.True(r.t, ok, "the matrix's argument: %s", arg)
	var m map[string][]map[string]any
	require.NoError(r.t, json.Unmarshal([]byte(v.(string)), &m), "fromJSON: %q", v)
	require.Len(r.t, m, 1, "a matrix of include only: %v", m)
	require.Contains(r.t, m, "include")
	require.NotEmpty(r.t, m["include"], "GitHub fails a matrix with no job")
	return m["include"]
}

// buildDtree builds the dtree under test into a directory of its own.
func buildDtree(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "dtree"), "./cmd/dtree")
	build.Dir = repoRoot(t)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// newWfRunner is a runner whose origin repository holds chart at the path
// the workflow's CHART names, and whose dtree is the one in bin.
func newWfRunner(t *testing.T, w wfFile, bin string, chart []byte) *wfRunner {
	r := &wfRunner{t: t, origin: t.TempDir(), artifacts: t.TempDir(), bin: bin, env: map[string]string{},
		needs: map[string]map[string]string{}}
	for _, v := range os.Environ() {
		name, value, _ := strings.Cut(v, "=")
		switch name {
		case "PATH", "HOME":
			r.env[name] = value
		}
	}
	for k, v := range w.Env {
		r.env[k] = v
	}
	r.env["GITHUB_ACTIONS"], r.env["LANG"], r.env["GIT_CONFIG_NOSYSTEM"] = "true", "C.UTF-8", "1"
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		r.env[k] = "runner"
	}
	for _, k := range []string{"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"} {
		r.env[k] = "runner@example.com"
	}
	// The repository the jobs check out: the chart, at its path.
	dst := filepath.Join(r.origin, r.env["CHART"])
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, chart, 0o644))
	mustRun(t, r.origin, "git", "init", "-q")
	mustRun(t, r.origin, "git", "add", "-A")
	mustRun(t, r.origin, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "the chart")
	return r
}

// shipChart is a fork of three branches whose steps are commands, so the
// workflow plays with no agent: each writes its file, and the join's step
// reads them all.
const shipChart = `title: Ship
nodes:
  - {id: plan, text: Plan., command: echo plan > plan.txt, parallel: [tests, docs, lint]}
  - {id: tests, text: Tests., command: echo tests > tests.txt, next: review}
  - {id: docs, text: Docs., command: echo docs > docs.txt, next: review}
  - {id: lint, text: Lint., command: echo lint > lint.txt, next: review}
  - {id: review, text: Review., command: cat plan.txt tests.txt docs.txt lint.txt > review.out, next: done}
  - {id: done, kind: end, text: Done}
`

func readWorkflow(t *testing.T, file string) wfFile {
	var w wfFile
	require.NoError(t, yaml.Unmarshal([]byte(readFile(t, repoRoot(t), "testdata", "ci", file)), &w))
	return w
}

// The plan job's output, through fromJSON, makes one branch job per branch
// of the fork, each with its own id and artifact; the branch's id reaches
// its script as a variable only. A chart without a fork fails the plan
// job with dtree's error in its log, and leaves no matrix: the branch jobs
// never start.
func TestForkMatrixWorkflow(t *testing.T) {
	w := readWorkflow(t, "fork-matrix.yml")
	names, jobs := w.jobs(t)
	require.Equal(t, []string{"plan", "branch", "join"}, names)
	assert.Equal(t, "plan", jobs["branch"].Needs)
	assert.Equal(t, "branch", jobs["join"].Needs)
	for _, name := range names {
		for _, s := range jobs[name].Steps {
			if strings.HasPrefix(s.Run, "npm install") {
				assert.Contains(t, s.Run, pinnedClaude(t), "job %s installs the CLI version conformance proves", name)
			}
		}
	}
	bin := buildDtree(t)

	t.Run("plan, branch, join", func(t *testing.T) {
		r := newWfRunner(t, w, bin, []byte(shipChart))
		code, out, outputs := r.runJob(jobs["plan"])
		require.Equal(t, 0, code, out)
		r.needs["plan"] = outputs

		// A job per matrix entry, each on its own runner, in any order:
		// backwards here.
		entries := r.expand(jobs["branch"].Strategy.Matrix)
		var got []string
		for k := len(entries) - 1; k >= 0; k-- {
			e := entries[k]
			r.matrix = e
			got = append([]string{r.eval(jobs["branch"].Name)}, got...)
			for _, s := range jobs["branch"].Steps {
				assert.NotContains(t, s.Run, "${{", "step %q: an expression in a script is script text", s.Name)
				if s.Name == "Run the branch" {
					assert.Equal(t, e["id"], r.eval(s.Env["BRANCH"]))
				}
			}
			code, out, _ := r.runJob(jobs["branch"])
			require.Equal(t, 0, code, "branch %v: %s", e["id"], out)
			assert.NoFileExists(t, filepath.Join(r.work, "review.out"), "a branch ends before the join")
		}
		assert.Equal(t, []string{"branch tests", "branch docs", "branch lint"}, got, "a job per branch, in the fork's order")
		var artifacts []string
		entries2, err := os.ReadDir(r.artifacts)
		require.NoError(t, err)
		for _, e := range entries2 {
			artifacts = append(artifacts, e.Name())
		}
		assert.Equal(t, []string{"dtree-branch-1-tests", "dtree-branch-2-docs", "dtree-branch-3-lint"}, artifacts)

		r.matrix = nil
		for _, s := range jobs["join"].Steps {
			assert.NotContains(t, s.Run, "${{", "step %q", s.Name)
		}
		code, out, _ = r.runJob(jobs["join"])
		require.Equal(t, 0, code, out)
		assert.Contains(t, out, "dtree: joined 3 branches of fork plan")
		b, err := os.ReadFile(filepath.Join(r.work, "review.out"))
		require.NoError(t, err)
		assert.Equal(t, "plan\ntests\ndocs\nlint\n", string(b), "the join's step sees the trunk's and every branch's change")
		assert.NotEmpty(t, r.steps["join"]["run-dir"], "the joined run's directory, for its upload")
		_, err = os.Stat(filepath.Join(r.artifacts, "dtree-join", "events.jsonl"))
		assert.NoError(t, err, "the joined run uploaded")
	})

	t.Run("no fork", func(t *testing.T) {
		chart := []byte("title: No fork\nnodes:\n  - {id: start, kind: start, text: Start, next: work}\n" +
			"  - {id: work, text: Do the work., next: done}\n  - {id: done, kind: end, text: Done}\n")
		r := newWfRunner(t, w, bin, chart)
		code, out, outputs := r.runJob(jobs["plan"])
		assert.Equal(t, 2, code)
		assert.Contains(t, out, "has no fork: no step is marked parallel: true")
		assert.Empty(t, outputs["matrix"])
	})
}
