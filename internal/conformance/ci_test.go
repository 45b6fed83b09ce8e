package conformance

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

// junitSchemaModule carries, in its fixtures, the JUnit schema of
// Jenkins' xunit plugin (junit-4.xsd: the one Jenkins and GitLab read). It
// comes through the Go module proxy at test time; dtree neither imports
// nor ships it.
const junitSchemaModule = "github.com/yannh/kubeconform@v0.8.0"

// TestConformanceCIOutputs checks what dtree writes for CI
// (readme/ci.md) with the real parsers: the Mermaid of a GitHub job
// summary with mermaid from npm, the JUnit report with libxml2
// (xmllint-wasm) against the JUnit schema, and draw.io files (convert
// --to drawio, graph --run --to drawio) as XML by libxml2. The runs are a
// hostile chart of command steps that fails, the quickstart's Lucid export
// replayed, a Mermaid chart replayed (its summary shows the author's
// text), and a
// chart with an error, which does not run.
func TestConformanceCIOutputs(t *testing.T) {
	if dtreeBin == "" {
		t.Skipf("%s is not set: `make conformance` installs the npm packages and runs these tests", cliDirEnv)
	}
	modules := filepath.Dir(os.Getenv(cliDirEnv)) // …/node_modules/.bin
	for _, pkg := range []string{"mermaid", "jsdom", "xmllint-wasm"} {
		_, err := os.Stat(filepath.Join(modules, pkg, "package.json"))
		require.NoError(t, err, "%s is not installed in %s: testdata/conformance/npm-packages.txt lists it", pkg, modules)
	}
	root := repoRoot(t)
	schema := junitSchema(t)

	work := t.TempDir()
	summary := filepath.Join(work, "summary.md")
	outputs := filepath.Join(work, "outputs.txt")
	runIn := func(dir string, wantExit int, args ...string) string {
		t.Helper()
		cmd := exec.Command(dtreeBin, append([]string{"run", "--log-dir", "logs"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + work, "LANG=C.UTF-8",
			"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT=" + outputs}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, wantExit, code, "dtree %s: %s", strings.Join(args, " "), stderr.String())
		return stderr.String()
	}
	run := func(wantExit int, args ...string) string {
		t.Helper()
		return runIn(work, wantExit, args...)
	}
	copyFile(t, filepath.Join(root, "testdata", "ci", "hostile.yaml"), filepath.Join(work, "hostile.yaml"))
	stderr := run(1, "--junit", "reports/hostile.xml", "hostile.yaml")
	assert.Contains(t, stderr, "::error file=hostile.yaml,line=25,")
	run(0, "--junit", "reports/quickstart.xml",
		"--answers", filepath.Join(root, "testdata", "quickstart", "update-deps.answers.yaml"),
		filepath.Join(root, "testdata", "quickstart", "update-deps.csv"))
	// draw.io files: the hostile chart converted, the quickstart's run
	// drawn on its conversion (readme/drawio.md).
	dtree := func(args ...string) {
		t.Helper()
		cmd := exec.Command(dtreeBin, args...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "dtree %s: %s", strings.Join(args, " "), out)
	}
	dtree("convert", "hostile.yaml", "-o", "hostile.drawio")
	// The Mermaid chart convert writes (readme/mermaid.md#convert-to-mermaid)
	// of the hostile charts: Mermaid parses it, and reads from it what
	// dtree reads.
	copyFile(t, filepath.Join(root, "testdata", "ci", "hostile-mermaid.yaml"), filepath.Join(work, "hostile-mermaid.yaml"))
	dtree("convert", "hostile.yaml", "-o", "hostile.mmd")
	dtree("convert", "hostile-mermaid.yaml", "-o", "hostile-mermaid.mmd")
	// A 1 MB label and command of what would break Mermaid's syntax.
	big := strings.Repeat(`]"%% --> `+"`x` $(y)\n", 1<<20/16)
	bigYAML, err := json.Marshal(map[string]any{"nodes": []map[string]any{
		{"id": "start", "kind": "start", "text": "Start", "next": "big"},
		{"id": "big", "text": big, "command": big, "next": "end"},
		{"id": "end", "kind": "end", "text": "End"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(work, "big.yaml"), bigYAML, 0o644)) // JSON is YAML
	dtree("convert", "big.yaml", "-o", "big.mmd")
	written := []string{filepath.Join(work, "hostile.mmd"), filepath.Join(work, "hostile-mermaid.mmd"), filepath.Join(work, "big.mmd")}
	dtree("graph", "--log-dir", "logs", "--run", "latest", "-o", "quickstart-run.drawio",
		filepath.Join(root, "testdata", "quickstart", "update-deps.csv"))

	// A Mermaid chart's run: the summary shows the author's own text with
	// the run's classes after it, in a fence of four backticks (its first
	// line holds three).
	copyFile(t, filepath.Join(root, "testdata", "ci", "release.mmd"), filepath.Join(work, "release.mmd"))
	run(1, "--answers", filepath.Join(root, "testdata", "ci", "release.answers.yaml"), "release.mmd")

	// A fork's run (readme/parallel.md), in a git repository of its own:
	// the summary draws its branches side by side, and its JUnit cases
	// are named with them.
	repo := filepath.Join(work, "forkrepo")
	require.NoError(t, os.Mkdir(repo, 0o755))
	copyFile(t, filepath.Join(root, "testdata", "ci", "fork.yaml"), filepath.Join(repo, "fork.yaml"))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	}
	runIn(repo, 0, "--junit", filepath.Join(work, "reports", "fork.xml"), "fork.yaml")

	// A run that never started: its report says why.
	require.NoError(t, os.WriteFile(filepath.Join(work, "broken.yaml"),
		[]byte("nodes:\n  - id: start\n    kind: start\n    text: Start\n    next: nowhere\n"), 0o644))
	run(3, "--junit", "reports/broken.xml", "broken.yaml")

	// The check script runs beside node_modules, where Node's ES module
	// resolution finds the packages.
	script := copyFile(t, filepath.Join(root, "testdata", "ci", "check-outputs.mjs"), filepath.Join(filepath.Dir(modules), "check-outputs.mjs"))
	node := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("node", append([]string{script}, args...)...)
		cmd.Dir = filepath.Dir(modules)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "node %s: %s", strings.Join(args, " "), out)
		t.Logf("%s", out)
		return string(out)
	}
	out := node("mermaid", summary)
	assert.Equal(t, 4, strings.Count(out, ": ok (flowchart"), "the four runs' diagrams parse: %s", out)
	sum, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(sum), "````mermaid\n%% Release checklist", "the Mermaid chart's own text")
	assert.Contains(t, string(sum), "  linkStyle 0,1,2,3,4,6,7 stroke:#2e7d32", "every line of the fork run taken, into each branch and to the join; not the loop back")
	assert.Contains(t, string(sum), "| plan/tests › tests Write the missing tests for the change. |", "a branch's step named with its branch")
	// Every Mermaid picture the tests pin (dtree convert --to mermaid and
	// dtree graph of each test chart, those with errors marked included,
	// and graph --run drawn onto a Mermaid chart's text: golden/graph-run)
	// parses too.
	all, err := filepath.Glob(filepath.Join(root, "testdata", "golden", "*", "*.mmd"))
	require.NoError(t, err)
	// convert --to mermaid of a chart of several pages: Markdown.
	pages, err := filepath.Glob(filepath.Join(root, "testdata", "golden", "*", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	var mmd []string
	for _, f := range append(append(all, pages...), written...) {
		if st, err := os.Stat(f); err == nil && st.Size() > 0 { // a chart of no page draws nothing
			mmd = append(mmd, f)
		}
	}
	require.NotEmpty(t, mmd)
	blocks := 0
	for _, f := range mmd {
		if strings.HasSuffix(f, ".md") {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			blocks += bytes.Count(b, []byte("```mermaid\n"))
		} else {
			blocks++
		}
	}
	out = node(append([]string{"mermaid"}, mmd...)...)
	assert.Equal(t, blocks, strings.Count(out, ": ok (flowchart"), "every golden picture and chart parses: %s", out)
	// Every Mermaid test chart with custom data (%% dtree: lines,
	// readme/mermaid.md) still parses with Mermaid's own parser: GitHub
	// draws it as before.
	charts, err := filepath.Glob(filepath.Join(root, "testdata", "charts", "mermaid", "*"))
	require.NoError(t, err)
	var custom []string
	blocks = 0
	for _, f := range charts {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if filepath.Base(f) == "README.md" || !bytes.Contains(b, []byte("%% dtree:")) {
			continue
		}
		custom = append(custom, f)
		if strings.HasSuffix(f, ".mmd") {
			blocks++
		} else {
			blocks += bytes.Count(b, []byte("```mermaid\n"))
		}
	}
	require.NotEmpty(t, custom)
	out = node(append([]string{"mermaid"}, custom...)...)
	assert.Equal(t, blocks, strings.Count(out, ": ok (flowchart"), "every Mermaid test chart with custom data parses: %s", out)
	mermaidAgrees(t, node, append(charts, written...))
	takenLinksAgree(t, node, root)
	reports := filepath.Join(work, "reports")
	out = node("junit", schema, filepath.Join(reports, "hostile.xml"), filepath.Join(reports, "quickstart.xml"), filepath.Join(reports, "broken.xml"),
		filepath.Join(reports, "fork.xml"))
	assert.Equal(t, 4, strings.Count(out, "valid against"), out)
	out = node("wellformed", filepath.Join(work, "hostile.drawio"), filepath.Join(work, "quickstart-run.drawio"))
	assert.Equal(t, 2, strings.Count(out, ": well-formed"), out)
}

// junitSchema is the path of the JUnit schema, downloaded with its module.
func junitSchema(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", junitSchemaModule)
	cmd.Dir = t.TempDir() // outside dtree's module: go.mod stays as it is
	out, err := cmd.Output()
	require.NoError(t, err, "go mod download %s: %s", junitSchemaModule, out)
	var m struct{ Dir string }
	require.NoError(t, json.Unmarshal(out, &m))
	path := filepath.Join(m.Dir, "fixtures", "junit.xsd")
	_, err = os.Stat(path)
	require.NoError(t, err)
	return path
}

func copyFile(t *testing.T, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o644))
	return to
}

// takenLinksAgree: the linkStyle line of a run drawn onto a Mermaid text
// (readme/graph.md#a-mermaid-chart) styles, as Mermaid's own parser
// numbers the links, the links the run took (chains, "&" and an edge id
// among them: golden/graph-run/links.run.mmd).
func takenLinksAgree(t *testing.T, node func(args ...string) string, root string) {
	t.Helper()
	dir := filepath.Join(root, "testdata", "golden", "graph-run")
	want := map[string][]string{
		"links.run.mmd":           {"start > plan", "plan > check", "check > plan", "check > ship", "ship > done"},
		"release.mmd.run.mmd":     {"start > run.tests", "run.tests > tests-ok", "tests-ok > fix_tests", "fix_tests > run.tests"},
		"README.md.page2.run.mmd": {"START > REPRO", "REPRO > LABEL", "LABEL > END"},
	}
	var files []string
	for f := range want {
		files = append(files, filepath.Join(dir, f))
	}
	for _, line := range strings.Split(strings.TrimSpace(node(append([]string{"flowdb"}, files...)...)), "\n") {
		var block struct {
			File, Error string
			Edges       []struct{ From, To, Style string }
		}
		require.NoError(t, json.Unmarshal([]byte(line), &block), line)
		require.Empty(t, block.Error, block.File)
		var styled []string
		for _, e := range block.Edges {
			if strings.Contains(e.Style, "stroke:#2e7d32") {
				styled = append(styled, e.From+" > "+e.To)
			}
		}
		assert.Equal(t, want[filepath.Base(block.File)], styled, "%s: the links the run took", block.File)
	}
}

// mermaidAgrees holds dtree's Mermaid reader to Mermaid's own parser on
// the test charts Mermaid parses: the same nodes (a decision where Mermaid
// has a diamond) and the same edges with the same labels, page by page
// (readme/mermaid.md).
func mermaidAgrees(t *testing.T, node func(args ...string) string, charts []string) {
	t.Helper()
	var files []string
	for _, f := range charts {
		if strings.HasSuffix(f, ".mmd") || strings.HasSuffix(f, ".md") && filepath.Base(f) != "README.md" {
			files = append(files, f)
		}
	}
	compared := 0
	for _, line := range strings.Split(strings.TrimSpace(node(append([]string{"flowdb"}, files...)...)), "\n") {
		var block struct {
			File, Error string
			Block       int
			Nodes       []struct{ ID, Type string }
			Edges       []struct {
				From, To, Label string
				Invisible       bool
			}
		}
		require.NoError(t, json.Unmarshal([]byte(line), &block), line)
		if block.Error != "" {
			continue // a hostile chart, which Mermaid refuses too
		}
		doc, err := document.Read(block.File, "", nil)
		require.NoError(t, err)
		page := strconv.Itoa(block.Block)
		var want, got []string
		for _, n := range block.Nodes {
			switch n.Type {
			case "diamond", "diam", "decision", "question":
				want = append(want, n.ID+" decision")
			default:
				want = append(want, n.ID)
			}
		}
		for _, e := range block.Edges {
			if !e.Invisible {
				want = append(want, e.From+" > "+e.To+": "+mermaidShown(e.Label))
			}
		}
		renamed := mermaidIDLines(t, block.File)
		id := func(s string) string {
			if m, ok := renamed[s]; ok {
				return m // the Mermaid id dtree's writer gave the node
			}
			return strings.TrimPrefix(s, page+":")
		}
		for _, n := range doc.Nodes {
			if n.Page != page {
				continue
			}
			if n.Kind == types.KindDecision {
				got = append(got, id(n.ID)+" decision")
			} else {
				got = append(got, id(n.ID))
			}
		}
		for _, e := range doc.Edges {
			if e.Page == page {
				got = append(got, id(e.From)+" > "+id(e.To)+": "+strings.ReplaceAll(e.Label, "\n", "<br>"))
			}
		}
		assert.ElementsMatch(t, want, got, "%s, flowchart %d: dtree reads what Mermaid reads", block.File, block.Block)
		compared++
	}
	assert.GreaterOrEqual(t, compared, 4, "the test charts Mermaid parses are compared")
}

// mermaidIDLines are a Mermaid file's "%% dtree: X id: NAME" lines, by
// NAME: the node dtree reads as NAME is X to Mermaid.
func mermaidIDLines(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*%% dtree: (\S+) id: (.*)$`).FindAllStringSubmatch(string(b), -1) {
		name := strings.TrimSpace(m[2])
		var s string
		if json.Unmarshal([]byte(name), &s) == nil {
			name = s
		}
		out[name] = m[1]
	}
	return out
}

// mermaidShown is a label as Mermaid's parser keeps it with its entity
// codes decoded (it holds #60; as ﬂ°°60¶ß until it draws the label).
func mermaidShown(s string) string {
	return regexp.MustCompile(`ﬂ°(°?)(\w+)¶ß`).ReplaceAllStringFunc(s, func(m string) string {
		sub := regexp.MustCompile(`ﬂ°(°?)(\w+)¶ß`).FindStringSubmatch(m)
		if sub[1] != "" {
			if n, err := strconv.Atoi(sub[2]); err == nil {
				return string(rune(n))
			}
			return m
		}
		return html.UnescapeString("&" + sub[2] + ";")
	})
}
