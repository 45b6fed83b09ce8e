package ci

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/document"
)

// The examples readme/ci.md shows are files under testdata/ci, checked
// here and by `make lint` (actionlint); the tests below prove the doc holds
// them as they are, and what each needs to work.

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

func readFile(t *testing.T, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts...))
	require.NoError(t, err)
	return string(b)
}

func TestDocShowsTheExamplesAsTheyAre(t *testing.T) {
	root := repoRoot(t)
	doc := readFile(t, root, "readme", "ci.md")
	for _, ex := range []struct{ file, lang string }{
		{"workflow.yml", "yaml"}, {"fleet.yml", "yaml"}, {"fork-matrix.yml", "yaml"}, {"k8s-job.yaml", "yaml"}, {"Containerfile", "dockerfile"},
	} {
		body := readFile(t, root, "testdata", "ci", ex.file)
		assert.True(t, strings.Contains(doc, "```"+ex.lang+"\n"+body+"```\n"),
			"readme/ci.md shows testdata/ci/%s whole, in a ```%s block", ex.file, ex.lang)
	}
}

// action is what the tests read of action.yml.
type action struct {
	Inputs map[string]struct {
		Required bool   `yaml:"required"`
		Default  string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID               string            `yaml:"id"`
			If               string            `yaml:"if"`
			Shell            string            `yaml:"shell"`
			WorkingDirectory string            `yaml:"working-directory"`
			Env              map[string]string `yaml:"env"`
			Run              string            `yaml:"run"`
			Uses             string            `yaml:"uses"`
			With             map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) action {
	t.Helper()
	var a action
	require.NoError(t, yaml.Unmarshal([]byte(readFile(t, repoRoot(t), "action.yml")), &a))
	return a
}

type workflow struct {
	Jobs map[string]struct {
		RunsOn string `yaml:"runs-on"`
		Steps  []struct {
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// pinnedClaude is the Claude Code version the conformance tests prove.
func pinnedClaude(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^claude\s+(@anthropic-ai/claude-code@\S+)`).FindStringSubmatch(
		readFile(t, repoRoot(t), "testdata", "conformance", "npm-packages.txt"))
	require.NotNil(t, m)
	return m[1]
}

// The example workflows give dtree's action only inputs it has, every
// one it requires, and install the agent CLI at the version the
// conformance tests prove. (actionlint checks the rest, but not the
// inputs of an action it cannot fetch.)
func TestWorkflowsUseTheAction(t *testing.T) {
	a := readAction(t)
	for _, file := range []string{"workflow.yml", "fleet.yml"} {
		var w workflow
		require.NoError(t, yaml.Unmarshal([]byte(readFile(t, repoRoot(t), "testdata", "ci", file)), &w), file)
		used := 0
		for name, job := range w.Jobs {
			assert.NotEmpty(t, job.RunsOn, "%s: job %s", file, name)
			for _, s := range job.Steps {
				if strings.HasPrefix(s.Run, "npm install") {
					assert.Contains(t, s.Run, pinnedClaude(t), "%s installs the CLI version conformance proves", file)
				}
				if !strings.HasPrefix(s.Uses, "dtree-dev/dtree@") {
					continue
				}
				used++
				for in := range s.With {
					_, ok := a.Inputs[in]
					assert.True(t, ok, "%s: input %q is not one of action.yml's", file, in)
				}
				for in, def := range a.Inputs {
					if def.Required {
						assert.Contains(t, s.With, in, "%s: the required input %q", file, in)
					}
				}
			}
		}
		assert.Equal(t, 1, used, "%s runs dtree's action once a job", file)
	}
}

func TestKubernetesJob(t *testing.T) {
	root := repoRoot(t)
	dec := yaml.NewDecoder(strings.NewReader(readFile(t, root, "testdata", "ci", "k8s-job.yaml")))
	var configMap, job map[string]any
	for {
		var d map[string]any
		if err := dec.Decode(&d); err != nil {
			break
		}
		switch d["kind"] {
		case "ConfigMap":
			configMap = d
		case "Job":
			job = d
		}
	}
	require.NotNil(t, configMap, "a ConfigMap")
	require.NotNil(t, job, "a Job")
	assert.Equal(t, "batch/v1", job["apiVersion"])
	get := func(m any, path ...string) any {
		for _, k := range path {
			mm, ok := m.(map[string]any)
			require.True(t, ok, "%s is a map", k)
			m = mm[k]
		}
		return m
	}
	spec := get(job, "spec")
	assert.Equal(t, "Indexed", get(spec, "completionMode"), "indexed completion: each pod has JOB_COMPLETION_INDEX")
	completions, ok := get(spec, "completions").(int)
	require.True(t, ok)
	assert.Contains(t, []any{"Never", "OnFailure"}, get(spec, "template", "spec", "restartPolicy"), "a Job's pods do not restart always")

	repos := strings.Fields(get(configMap, "data", "repositories").(string))
	assert.Len(t, repos, completions, "one repository per index")

	pod := get(spec, "template", "spec").(map[string]any)
	containers := pod["containers"].([]any)
	require.Len(t, containers, 1)
	c := containers[0].(map[string]any)
	assert.NotEmpty(t, c["name"])
	assert.NotEmpty(t, c["image"])
	volumes := map[string]bool{}
	for _, v := range pod["volumes"].([]any) {
		volumes[v.(map[string]any)["name"].(string)] = true
		if cm, ok := v.(map[string]any)["configMap"]; ok {
			assert.Equal(t, get(configMap, "metadata", "name"), get(cm, "name"), "the volume is the ConfigMap")
		}
	}
	for _, m := range c["volumeMounts"].([]any) {
		assert.True(t, volumes[m.(map[string]any)["name"].(string)], "mount %v has its volume", m)
	}

	// The container's script is valid sh, uses the index, and runs the
	// chart the ConfigMap holds, which dtree reads without error.
	args := c["args"].([]any)
	script := args[len(args)-1].(string)
	assert.Contains(t, script, "JOB_COMPLETION_INDEX")
	assert.Contains(t, script, "dtree run ")
	out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput()
	assert.NoError(t, err, "sh -n: %s", out)
	doc, err := document.FromYAML(strings.NewReader(get(configMap, "data", "update-deps.yaml").(string)))
	require.NoError(t, err)
	assert.Empty(t, doc.Errors, "the ConfigMap's chart reads without error")
	assert.NotEmpty(t, doc.Nodes)
}

func TestContainerfile(t *testing.T) {
	root := repoRoot(t)
	var stages []string
	entry := ""
	sc := bufio.NewScanner(strings.NewReader(readFile(t, root, "testdata", "ci", "Containerfile")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				stages = append(stages, f[3])
			}
		case "COPY":
			if from, ok := strings.CutPrefix(f[1], "--from="); ok {
				assert.True(t, slices.Contains(stages, from), "COPY --from=%s names an earlier stage", from)
			}
		case "RUN":
			if i := slices.Index(f, "./cmd/dtree"); i >= 0 {
				_, err := os.Stat(filepath.Join(root, "cmd", "dtree", "main.go"))
				assert.NoError(t, err, "it builds dtree's main package")
			}
			if slices.Contains(f, "npm") {
				assert.Contains(t, f, pinnedClaude(t), "the CLI version conformance proves")
			}
		case "ENTRYPOINT":
			entry = strings.Join(f[1:], " ")
		}
	}
	assert.Equal(t, []string{"build"}, stages)
	assert.Equal(t, `["dtree"]`, entry)
}
