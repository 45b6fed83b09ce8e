package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/types"
)

// planned is what plan --matrix prints.
type planned struct {
	Include []matrixBranch `json:"include"`
}

func planMatrix(t *testing.T, args ...string) (planned, string, int) {
	t.Helper()
	out, stderr, code := runDtree(t, append([]string{"plan", "--matrix"}, args...)...)
	var m planned
	if code == types.ExitOK {
		assert.Equal(t, 1, strings.Count(out, "\n"), "one line, for $GITHUB_OUTPUT")
		require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	} else {
		assert.Empty(t, out, "nothing on stdout when it fails")
	}
	return m, stderr, code
}

// The fork chart of every format gives the same three jobs, in the
// fork's line order, each with the id dtree run --branch takes.
func TestPlanMatrixEveryFormat(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "charts", "fork")
	for _, tc := range []struct {
		file, fork string
		names      []string
	}{
		{"fork.yaml", "plan", []string{"tests", "docs", "lint"}},
		{"fork.csv", "4", []string{"tests", "docs", "lint"}},
		{"fork.json", "Pl4nF0rkKq2c", []string{"tests", "docs", "lint"}},
		{"fork.drawio", "Fk7wQ2pLm9xRt4Zb1sVe-2", []string{"tests", "docs", "lint"}},
		{"fork.mmd", "Plan", []string{"tests", "Docs", "Lint"}},
	} {
		m, stderr, code := planMatrix(t, filepath.Join(dir, tc.file))
		require.Equal(t, types.ExitOK, code, "%s: %s", tc.file, stderr)
		assert.Empty(t, stderr, tc.file)
		require.Len(t, m.Include, len(tc.names), tc.file)
		for i, b := range m.Include {
			assert.Equal(t, tc.names[i], b.Name, tc.file)
			assert.Equal(t, tc.fork+"/"+tc.names[i], b.ID, tc.file)
			assert.Equal(t, tc.fork, b.Fork, tc.file)
			assert.NotEmpty(t, b.First, tc.file)
			assert.Equal(t, fmt.Sprintf("dtree-branch-%d-%s", i+1, tc.names[i]), b.Artifact, tc.file)
		}
	}
}

const twoForks = `title: Two forks one after the other
nodes:
  - {id: start, kind: start, text: Start, next: build}
  - {id: build, text: Build both halves., parallel: [api, web]}
  - {id: api, text: Build the API., next: check}
  - {id: web, text: Build the web app., next: check}
  - {id: check, text: Check the build., next: release}
  - id: release
    text: Release to both regions.
    parallel: {"eu \"west\"\t/ ##[error]x": eu, us: us}
  - {id: eu, text: Release in the EU., next: done}
  - {id: us, text: Release in the US., next: done}
  - {id: done, kind: end, text: Done}
`

const nestedFork = `title: A fork inside a branch
nodes:
  - {id: start, kind: start, text: Start, next: plan}
  - {id: plan, text: Plan the change., parallel: [code, docs]}
  - {id: code, text: Split the code work., parallel: [unit, e2e]}
  - {id: unit, text: Write the unit tests., next: merge}
  - {id: e2e, text: Write the end-to-end tests., next: merge}
  - {id: merge, text: Merge the tests., next: review}
  - {id: docs, text: Update the docs., next: review}
  - {id: review, text: Review it all., next: done}
  - {id: done, kind: end, text: Done}
`

const loopFork = `title: A fork a loop comes back to
nodes:
  - {id: start, kind: start, text: Start, next: plan}
  - {id: plan, text: Plan the change., parallel: [tests, docs]}
  - {id: tests, text: Write the tests., next: review}
  - {id: docs, text: Update the docs., next: review}
  - id: review
    kind: decision
    text: Is it good?
    branches: {"Yes": done, "No": plan}
  - {id: done, kind: end, text: Done}
`

const noFork = `title: No fork
nodes:
  - {id: start, kind: start, text: Start, next: work}
  - {id: work, text: Do the work., next: done}
  - {id: done, kind: end, text: Done}
`

func writeChart(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestPlanMatrixChoosesTheFork(t *testing.T) {
	t.Parallel()
	two := writeChart(t, "two.yaml", twoForks)
	nested := writeChart(t, "nested.yaml", nestedFork)

	// Without --fork, the first in chart order, and stderr says so.
	m, stderr, code := planMatrix(t, two)
	require.Equal(t, types.ExitOK, code, stderr)
	assert.Equal(t, []string{"build/api", "build/web"}, ids(m))
	assert.Contains(t, stderr, "dtree: note: "+two+` has 2 forks (build, release): the matrix is the first's, build "Build both halves."; pass --fork ID for another`)

	// --fork names another; a label of any text is JSON, and its
	// artifact's name has only what upload-artifact takes.
	m, stderr, code = planMatrix(t, "--fork", "release", two)
	require.Equal(t, types.ExitOK, code, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, []string{"release/eu \"west\"\t/ ##[error]x", "release/us"}, ids(m))
	assert.Equal(t, "dtree-branch-1-eu--west-------error-x", m.Include[0].Artifact)
	assert.Equal(t, "eu", m.Include[0].First)

	// The fork by its text, as --start takes a node.
	m, _, code = planMatrix(t, "--fork", "Release to both regions.", two)
	require.Equal(t, types.ExitOK, code)
	assert.Equal(t, "release", m.Include[0].Fork)

	// A fork nested in a branch: the outer one is the matrix.
	m, stderr, code = planMatrix(t, nested)
	require.Equal(t, types.ExitOK, code, stderr)
	assert.Empty(t, stderr, "the nested fork is not counted as a second")
	assert.Equal(t, []string{"plan/code", "plan/docs"}, ids(m))
}

func ids(m planned) []string {
	var s []string
	for _, b := range m.Include {
		s = append(s, b.ID)
	}
	return s
}

func TestPlanMatrixErrors(t *testing.T) {
	t.Parallel()
	two := writeChart(t, "two.yaml", twoForks)
	nested := writeChart(t, "nested.yaml", nestedFork)
	loop := writeChart(t, "loop.yaml", loopFork)
	plain := writeChart(t, "plain.yaml", noFork)
	bad := filepath.Join("..", "..", "testdata", "charts", "fork", "bad", "fork_without_join.yaml")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no --matrix", []string{"plan", two}, types.ExitUsage, []string{
			"dtree: error: plan prints a job matrix and needs --matrix\n",
			"dtree: hint: dtree plan --matrix " + two}},
		{"no fork", []string{"plan", "--matrix", plain}, types.ExitUsage, []string{
			"dtree: error: " + plain + " has no fork: no step is marked parallel: true, so there are no branches to plan\n",
			"dtree: hint: 'dtree docs parallel' says how to draw a fork"}},
		{"nested", []string{"plan", "--matrix", "--fork", "code", nested}, types.ExitUsage, []string{
			"dtree: error: " + nested + `: fork code "Split the code work." is inside branch "code" of fork plan "Plan the change.": a nested fork is not a matrix; it runs on its branch's machine`,
			"dtree: hint: plan the outer fork: --fork plan\n"}},
		{"loop", []string{"plan", "--matrix", loop}, types.ExitUsage, []string{
			"dtree: error: " + loop + `: fork plan "Plan the change." is in a loop: a line after its join review leads back to it, and a matrix runs the branches once`}},
		{"not a fork", []string{"plan", "--matrix", "--fork", "check", two}, types.ExitUsage, []string{
			"dtree: error: " + two + `: --fork "check": node check "Check the build." is not a fork`,
			"dtree: hint: the page's forks: build, release\n"}},
		{"no such node", []string{"plan", "--matrix", "--fork", "Build", two}, types.ExitUsage, []string{
			"dtree: error: " + two + `: --fork "Build": no node on page 1 has that id or text; did you mean build?`}},
		{"chart errors", []string{"plan", "--matrix", bad}, types.ExitChart, []string{
			": error: fork_without_join: "}},
		{"page", []string{"plan", "--matrix", "--page", "9", two}, types.ExitUsage, []string{
			"dtree: hint: pass --page with a page's id, title or number"}},
	} {
		out, stderr, code := runDtree(t, tc.args...)
		assert.Equal(t, tc.code, code, "%s: %s", tc.name, stderr)
		assert.Empty(t, out, tc.name)
		for _, w := range tc.want {
			assert.Contains(t, stderr, w, tc.name)
		}
	}
}

// bigFork is a chart whose fork has n branches of one step each.
func bigFork(n int) string {
	var b strings.Builder
	b.WriteString("title: Big fork\nnodes:\n  - {id: start, kind: start, text: Start, next: fork}\n  - id: fork\n    text: Fan out.\n    parallel: [")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "b%d", i)
	}
	b.WriteString("]\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: b%d, text: Branch %d., next: join}\n", i, i)
	}
	b.WriteString("  - {id: join, text: Join., next: done}\n  - {id: done, kind: end, text: Done}\n")
	return b.String()
}

// GitHub makes at most 256 jobs of a matrix: 256 branches are a matrix,
// 257 are an error that says so, and a fork of 20,000 branches is read
// and refused in well under the time a quadratic walk would take.
func TestPlanMatrixBounds(t *testing.T) {
	t.Parallel()
	m, stderr, code := planMatrix(t, writeChart(t, "256.yaml", bigFork(256)))
	require.Equal(t, types.ExitOK, code, stderr)
	require.Len(t, m.Include, 256)
	assert.Equal(t, "fork/b255", m.Include[255].ID)
	assert.Equal(t, "dtree-branch-256-b255", m.Include[255].Artifact)

	_, stderr, code = planMatrix(t, writeChart(t, "257.yaml", bigFork(257)))
	assert.Equal(t, types.ExitUsage, code)
	assert.Contains(t, stderr, `257.yaml: fork fork "Fan out." has 257 branches, and a GitHub Actions matrix makes at most 256 jobs`)

	huge := writeChart(t, "huge.yaml", bigFork(20000))
	start := time.Now()
	_, stderr, code = planMatrix(t, huge)
	took := time.Since(start)
	assert.Equal(t, types.ExitUsage, code)
	assert.Contains(t, stderr, "has 20000 branches, and a GitHub Actions matrix makes at most 256 jobs")
	// Linear, it takes about a second (10 under -race on a busy
	// machine); a walk quadratic in the branches took minutes.
	assert.Less(t, took, 60*time.Second, "20,000 branches")
}

// nestedForks is a chart of forks nested depth deep: fork fK's branches
// are fork fK+1 and a step sK, and they meet at jK.
func nestedForks(depth int) string {
	var b strings.Builder
	b.WriteString("title: Deep forks\nnodes:\n  - {id: start, kind: start, text: Start, next: f0}\n")
	for k := range depth {
		next := fmt.Sprintf("f%d", k+1)
		if k == depth-1 {
			next = "leaf"
		}
		fmt.Fprintf(&b, "  - {id: f%d, text: Fork %d., parallel: [%s, s%d]}\n", k, k, next, k)
		fmt.Fprintf(&b, "  - {id: s%d, text: Side %d., next: j%d}\n", k, k, k)
		join := "done"
		if k > 0 {
			join = fmt.Sprintf("j%d", k-1)
		}
		fmt.Fprintf(&b, "  - {id: j%d, text: Join %d., next: %s}\n", k, k, join)
	}
	fmt.Fprintf(&b, "  - {id: leaf, text: Leaf., next: j%d}\n  - {id: done, kind: end, text: Done}\n", depth-1)
	return b.String()
}

// Forks nested 20,000 deep: the outer one is the matrix, and the innermost
// is refused as nested, each in one walk of the chart (timed without the
// load, which lint's own tests bound).
func TestPlanMatrixDeepNesting(t *testing.T) {
	t.Parallel()
	c, err := chart.Load(writeChart(t, "deep.yaml", nestedForks(20000)), nil, chart.Options{})
	require.NoError(t, err)
	require.Empty(t, c.Errors)
	var errb bytes.Buffer
	a := &App{Err: &errb, Getenv: noEnv}
	start := time.Now()
	fork, err := a.matrixFork(c, c.Doc.Pages[0], "")
	require.NoError(t, err)
	assert.Equal(t, "f0", c.Doc.Nodes[fork].ID)
	_, err = a.matrixFork(c, c.Doc.Pages[0], "f19999")
	assert.ErrorContains(t, err, `is inside branch "f1" of fork f0 "Fork 0."`)
	assert.Less(t, time.Since(start), 3*time.Second, "20,000 nested forks")
	assert.Empty(t, errb.String())
}

func TestArtifactName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		i          int
		name, want string
	}{
		{0, "tests", "dtree-branch-1-tests"},
		{9, "unit tests/e2e", "dtree-branch-10-unit-tests-e2e"},
		{0, `a"b:c<d>e|f*g?h\i/j` + "\r\n", "dtree-branch-1-a-b-c-d-e-f-g-h-i-j"},
		{1, "日本", "dtree-branch-2"},
		{2, strings.Repeat("x", 100), "dtree-branch-3-" + strings.Repeat("x", 40)},
		{3, "v1.2.", "dtree-branch-4-v1.2"},
	} {
		assert.Equal(t, tc.want, artifactName(tc.i, tc.name), tc.name)
	}
}
