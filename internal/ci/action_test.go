package ci

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runner plays GitHub's part in running action.yml's steps: it puts the
// expressions' values in, runs each run: script with bash as a composite
// step does, in its working directory, with the variables GitHub sets.
type runner struct {
	t       *testing.T
	root    string            // the action's directory: the repository
	work    string            // the workspace
	temp    string            // RUNNER_TEMP
	inputs  map[string]string // given, over the defaults
	outputs map[string]map[string]string
	env     []string
}

// expression is one ${{ … }} the action uses; the runner knows these only,
// so a step that grows another fails the test until it is taught here.
var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

func (r *runner) eval(s string) string {
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		e := expression.FindStringSubmatch(m)[1]
		switch {
		case e == "github.action_path":
			return r.root
		case e == "inputs.artifact || format('dtree-run-{0}', steps.run.outputs.run-id)":
			if a := r.inputs["artifact"]; a != "" {
				return a
			}
			return "dtree-run-" + r.outputs["run"]["run-id"]
		case strings.HasPrefix(e, "inputs."):
			return r.inputs[strings.TrimPrefix(e, "inputs.")]
		case strings.HasPrefix(e, "steps."):
			p := strings.Split(e, ".") // steps.ID.outputs.NAME
			require.Len(r.t, p, 4, e)
			return r.outputs[p[1]][p[3]]
		}
		r.t.Fatalf("action.yml uses an expression the test does not know: %s", m)
		return ""
	})
}

// run runs the action's run: steps; it returns the exit status of the
// first that fails (0 when none does) and the output of all.
func (r *runner) run() (int, string) {
	a := readAction(r.t)
	require.Equal(r.t, "composite", a.Runs.Using)
	var out bytes.Buffer
	for _, s := range a.Runs.Steps {
		if s.Run == "" {
			continue
		}
		require.Equal(r.t, "bash", s.Shell, "a composite step names its shell")
		outputs := filepath.Join(r.temp, "output-"+s.ID)
		require.NoError(r.t, os.WriteFile(outputs, nil, 0o644))
		// GitHub runs bash --noprofile --norc -eo pipefail {0}.
		script := filepath.Join(r.temp, "step.sh")
		require.NoError(r.t, os.WriteFile(script, []byte(r.eval(s.Run)), 0o644))
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = r.work
		if s.WorkingDirectory != "" {
			cmd.Dir = filepath.Join(r.work, r.eval(s.WorkingDirectory))
		}
		cmd.Env = append(append([]string{}, r.env...), "GITHUB_OUTPUT="+outputs)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+r.eval(v))
		}
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		b, rerr := os.ReadFile(outputs)
		require.NoError(r.t, rerr)
		if s.ID != "" {
			r.outputs[s.ID] = map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					r.outputs[s.ID][k] = v
				}
			}
		}
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			require.True(r.t, ok, "%v: %s", err, out.String())
			return ee.ExitCode(), out.String()
		}
	}
	return 0, out.String()
}

func newRunner(t *testing.T, inputs map[string]string) *runner {
	root := repoRoot(t)
	r := &runner{t: t, root: root, work: t.TempDir(), temp: t.TempDir(), inputs: map[string]string{},
		outputs: map[string]map[string]string{}}
	for name, in := range readAction(t).Inputs {
		r.inputs[name] = in.Default
	}
	for k, v := range inputs {
		r.inputs[k] = v
	}
	// The runner's variables; go, HOME and the module cache from the
	// test's environment, so that the build works offline as it does here.
	for _, v := range os.Environ() {
		name, _, _ := strings.Cut(v, "=")
		switch name {
		case "PATH", "HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GOTOOLCHAIN":
			r.env = append(r.env, v)
		}
	}
	r.env = append(r.env, "GITHUB_ACTIONS=true", "RUNNER_TEMP="+r.temp, "LANG=C.UTF-8",
		"GITHUB_STEP_SUMMARY="+filepath.Join(r.temp, "summary.md"), "GITHUB_WORKSPACE="+r.work)
	quick := filepath.Join(root, "testdata", "quickstart")
	for _, f := range []string{"update-deps.csv", "update-deps.answers.yaml"} {
		b, err := os.ReadFile(filepath.Join(quick, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(r.work, f), b, 0o644))
	}
	return r
}

// The action builds dtree, runs the chart with the inputs as flags, and
// dtree writes the summary, the report and the outputs the upload step
// reads.
func TestActionRunsAChart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dtree")
	}
	r := newRunner(t, map[string]string{
		"chart": "update-deps.csv", "cli": "replay", "vars": "version=1.2.0\n\nname=it's \"$(x)\"\r\n",
		"max-cost": "5", "args": "--answers update-deps.answers.yaml  --retries 1", "junit": "reports/j.xml",
	})
	code, out := r.run()
	require.Equal(t, 0, code, out)
	got := r.outputs["run"]
	assert.Equal(t, "succeeded", got["status"])
	assert.Equal(t, "0", got["exit-code"])
	assert.Equal(t, filepath.Join(r.work, "reports", "j.xml"), got["junit"])
	assert.FileExists(t, got["junit"])
	assert.DirExists(t, got["run-dir"])
	assert.Equal(t, filepath.Join(r.work, ".dtree", "runs", got["run-id"]), got["run-dir"])
	summary := readFile(t, r.temp, "summary.md")
	assert.Contains(t, summary, "```mermaid\n")
	assert.Contains(t, out, "::group::→ ")

	// What the run got from the inputs, as run_start records it.
	events := readFile(t, got["run-dir"], "events.jsonl")
	assert.Contains(t, events, `"vars":{"name":"it's \"$(x)\"","version":"1.2.0"}`)
	assert.Contains(t, events, `"max_cost":"5"`)
	assert.Contains(t, events, `"default_retry_count":"1"`)

	// The upload step: it runs, and every path it gives exists.
	a := readAction(t)
	up := a.Runs.Steps[len(a.Runs.Steps)-1]
	require.True(t, strings.HasPrefix(up.Uses, "actions/upload-artifact@"))
	assert.Equal(t, "dtree-run-"+got["run-id"], r.eval(up.With["name"]))
	for _, p := range strings.Fields(r.eval(up.With["path"])) {
		assert.True(t, filepath.IsAbs(p), p)
		_, err := os.Stat(p)
		assert.NoError(t, err)
	}
	// The action's outputs are the run step's.
	for name, o := range a.Outputs {
		assert.NotEmpty(t, r.eval(o.Value), "output %s", name)
	}
}

// A chart that fails fails the step with dtree's exit status, after dtree
// wrote the outputs the upload step needs; hostile inputs run nothing.
func TestActionFailsWithTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dtree")
	}
	r := newRunner(t, map[string]string{"chart": "update-deps.csv", "cli": "replay",
		"args": "--answers update-deps.answers.yaml --max-steps 3", "artifact": "mine"})
	code, out := r.run()
	assert.Equal(t, 4, code, "dtree's exit status for --max-steps: %s", out)
	assert.Equal(t, "limit_reached", r.outputs["run"]["status"])
	assert.NotEmpty(t, r.outputs["run"]["run-dir"])
	a := readAction(t)
	assert.Equal(t, "mine", r.eval(a.Runs.Steps[len(a.Runs.Steps)-1].With["name"]))

	r = newRunner(t, map[string]string{"chart": "$(touch pwned1).csv", "cli": "`touch pwned2`",
		"vars": "a=$(touch pwned3)", "max-cost": ";touch pwned4", "args": "--retries $(touch${IFS}pwned5)"})
	code, out = r.run()
	assert.Equal(t, 2, code, out)
	for i := 1; i <= 5; i++ {
		assert.NoFileExists(t, filepath.Join(r.work, "pwned"+string(rune('0'+i))))
	}
}

// The action trusts the working directory's dtree.yaml only when the
// workflow says so (trust: true): by default a checkout's CLIs are
// refused, exit 2, before anything runs (readme/ci.md#trust).
func TestActionTrust(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dtree")
	}
	for _, tt := range []struct {
		trust string
		code  int
		out   string
	}{
		{"false", 2, "dtree.yaml: not trusted, and it sets what only a trusted file may: clis.claude (line 2)"},
		{"true", 0, "succeeded"},
		{"yes", 2, "dtree action: the input trust must be true or false"},
	} {
		t.Run(tt.trust, func(t *testing.T) {
			r := newRunner(t, map[string]string{"chart": "update-deps.csv", "cli": "replay",
				"args": "--answers update-deps.answers.yaml", "trust": tt.trust, "upload": "false"})
			r.env = append(r.env, "XDG_CONFIG_HOME="+t.TempDir())
			require.NoError(t, os.WriteFile(filepath.Join(r.work, "dtree.yaml"),
				[]byte("clis:\n  claude:\n    binary: ./x.sh\n    prompt_via: stdin\n"), 0o644))
			code, out := r.run()
			assert.Equal(t, tt.code, code, out)
			assert.Contains(t, out, tt.out)
		})
	}
}

// The action answers a run that waits at an approval gate: a first job
// runs the chart and stops at the gate (exit 5, status
// waiting_for_approval); a later one, given approve or reject, resumes it
// with the answer and the reason (readme/ci.md#approval-gates).
func TestActionAnswersAGate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dtree")
	}
	const chart = `title: Ship
nodes:
  - id: start
    kind: start
    next: build
  - id: build
    text: Build the release
    next: gate
  - id: gate
    kind: approval
    text: Ship this release?
    branches:
      approved: ship
      rejected: fix
  - id: ship
    text: Push the tag
    next: end
  - id: fix
    text: Fix what the reviewer found
    next: end
  - id: end
    kind: end
`
	// An agent of the checkout's own: it does every task.
	const agent = "#!/bin/sh\ncase \"$(cat)\" in *fully_completed*) echo '{\"fully_completed\": true}' ;; *) echo '{\"completed\": true}' ;; esac\n"
	for _, tt := range []struct {
		name   string
		inputs map[string]string
		code   int
		want   string // in the second run's events
	}{
		{"approve", map[string]string{"approve": "true"}, 0, `"event":"approval_given","answer":"approved","label":"approved","next":"ship","node":"gate","reason":"","run_id":"`},
		{"reject", map[string]string{"reject": "true", "reason": "no changelog; $(touch pwned)"}, 0,
			`"event":"approval_given","answer":"rejected","label":"rejected","next":"fix","node":"gate","reason":"no changelog; $(touch pwned)"`},
		{"reject without a reason", map[string]string{"reject": "true"}, 2, ""},
		{"both", map[string]string{"approve": "true", "reject": "true"}, 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inputs := map[string]string{"chart": "gate.yaml", "cli": "sh-agent", "trust": "true", "upload": "false"}
			r := newRunner(t, inputs)
			r.env = append(r.env, "XDG_CONFIG_HOME="+t.TempDir())
			require.NoError(t, os.WriteFile(filepath.Join(r.work, "gate.yaml"), []byte(chart), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(r.work, "agent.sh"), []byte(agent), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(r.work, "dtree.yaml"),
				[]byte("clis:\n  sh-agent:\n    binary: ./agent.sh\n    prompt_via: stdin\n    output: text\n"), 0o644))
			code, out := r.run()
			require.Equal(t, 5, code, out)
			first := r.outputs["run"]
			assert.Equal(t, "waiting_for_approval", first["status"])
			assert.Equal(t, "5", first["exit-code"])
			assert.Contains(t, readFile(t, r.temp, "summary.md"), "**Waiting for approval** at gate Ship this release")

			for k, v := range tt.inputs {
				r.inputs[k] = v
			}
			code, out = r.run()
			assert.Equal(t, tt.code, code, out)
			assert.NoFileExists(t, filepath.Join(r.work, "pwned"))
			if tt.want == "" {
				return
			}
			got := r.outputs["run"]
			assert.Equal(t, "succeeded", got["status"])
			assert.NotEqual(t, first["run-id"], got["run-id"])
			events := readFile(t, got["run-dir"], "events.jsonl")
			assert.Contains(t, events, tt.want)
			// The answer came through the action's inputs, and the log says so.
			assert.Regexp(t, `"event":"approval_given".*"who":"ci_input"`, events)
		})
	}
}
