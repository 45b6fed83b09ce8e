package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/golden"
)

// TestDocExamples runs every console example of README.md and readme/*.md
// and compares what it prints with what the doc shows, so that the docs
// cannot drift from the tool (readme/dev.md#doc-examples says how to write
// one). An example is a fenced block whose first line is a command,
// `$ dtree …`: each `$ ` line runs in bash, in one shell per block, and
// the lines under it are its output, stdout and stderr as a terminal shows
// them. The blocks of one doc run in order in one directory, so a file one
// example writes is there for the next.
//
// Before a block, the doc may say, in lines that Markdown does not show:
//
//	<!-- example: COMMAND -->      run COMMAND first (copy a chart in, …)
//	<!-- example: skip: REASON --> do not run the next block, and why
//	<!-- example: file NAME -->    the next block is a file, NAME
//	<!-- example: stdout -->       the next block shows stdout only
//
// and a file shown in the doc is written for the examples when the line
// before its fence names it, "`broken.csv`:", too. Files are written
// before the doc's first example runs. `$ cat FILE` of a file that is not
// there yet, or was written so before, writes it with the output the doc
// shows, first.
//
// Output is compared line by line after what changes from run to run is
// steadied on both sides: run ids, times, durations, the directory the
// examples run in (shown as /tmp/demo), dtree's version and pids. A line
// that is only "…" stands for any number of lines.
//
// With -update, a block whose output differs is rewritten with the output
// it printed (its "…" lines are lost: put them back where the output is
// long).
func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example of the docs")
	}
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	docs, err := filepath.Glob(filepath.Join(repo, "readme", "*.md"))
	require.NoError(t, err)
	docs = append([]string{filepath.Join(repo, "README.md")}, docs...)
	for _, doc := range docs {
		name, _ := filepath.Rel(repo, doc)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runDocExamples(t, repo, doc)
		})
	}
}

// docBlock is one example: its commands and the output the doc shows.
type docBlock struct {
	start, end int    // the lines of its content, [start, end), 0-based
	indent     string // of its fence, in a list
	cmds       []docCmd
	setup      []string // commands to run first
	skip       string   // why it is not run
	stdout     bool     // the doc shows stdout only: stderr is dropped
}

type docCmd struct {
	line int      // 0-based line of the "$ " line
	cmd  string   // without "$ "
	want []string // the output shown
}

var (
	fenceRE   = regexp.MustCompile("^(\\s*)```+\\s*([A-Za-z0-9_-]*)\\s*$")
	fileRE    = regexp.MustCompile("^`([A-Za-z0-9_./-]+)`:\\s*$")
	setupRE   = regexp.MustCompile(`^\s*<!-- example: (.*) -->\s*$`)
	docRunID  = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{6}`)
	docTime   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	docDur    = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`)
	docVer    = regexp.MustCompile(`dtree (devel|v\S+)( \(go[^)]*\))?`)
	docPID    = regexp.MustCompile(`\bpid \d+`)
	docMS     = regexp.MustCompile(`"(duration_ms|wall_ms|secs_taken)": ?\d+`)
	docMarker = "\x1edtree-doc-example-%d\x1e"
	jqRE      = regexp.MustCompile(`(^|[|;&(]\s*)jq\s`)
	catRE     = regexp.MustCompile(`^cat ([^\s|;&<>]+)(\s+#.*)?$`)
)

// parseDoc finds the examples of a doc, and the files it shows.
func parseDoc(lines []string) (blocks []docBlock, files map[string]string, order []string) {
	files = map[string]string{}
	var setup []string
	skip, file, stdout := "", "", false
	for i := 0; i < len(lines); i++ {
		if m := setupRE.FindStringSubmatch(lines[i]); m != nil {
			if r, ok := strings.CutPrefix(m[1], "skip: "); ok {
				skip = r
			} else if m[1] == "stdout" {
				stdout = true
			} else if f, ok := strings.CutPrefix(m[1], "file "); ok {
				file = strings.TrimSpace(f)
			} else {
				setup = append(setup, m[1])
			}
			continue
		}
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent := m[1]
		end := i + 1
		for end < len(lines) && !fenceRE.MatchString(lines[end]) {
			end++
		}
		body := make([]string, 0, end-i-1)
		for _, l := range lines[i+1 : min(end, len(lines))] {
			body = append(body, strings.TrimPrefix(l, indent))
		}
		if i > 0 && file == "" {
			prev := strings.TrimSpace(lines[i-1])
			if i > 1 && prev == "" {
				prev = strings.TrimSpace(lines[i-2])
			}
			if f := fileRE.FindStringSubmatch(prev); f != nil {
				file = f[1]
			}
		}
		if file != "" {
			if _, seen := files[file]; !seen {
				order = append(order, file)
			}
			files[file] = strings.Join(body, "\n") + "\n"
			file = ""
			i = end
			continue
		}
		if (m[2] == "console" || m[2] == "") && len(body) > 0 && strings.HasPrefix(body[0], "$ ") {
			b := docBlock{start: i + 1, end: end, indent: indent, setup: setup, skip: skip, stdout: stdout}
			for k, l := range body {
				if c, ok := strings.CutPrefix(l, "$ "); ok {
					b.cmds = append(b.cmds, docCmd{line: i + 1 + k, cmd: c})
					continue
				}
				last := &b.cmds[len(b.cmds)-1]
				last.want = append(last.want, l)
			}
			blocks = append(blocks, b)
		}
		setup, skip, stdout = nil, "", false
		i = end
	}
	return blocks, files, order
}

// haveJQ says whether jq, which many examples of logs.md pipe into, is
// installed.
var haveJQ = func() bool { _, err := exec.LookPath("jq"); return err == nil }()

// runDocExamples runs one doc's examples in order in one directory.
func runDocExamples(t *testing.T, repo, doc string) {
	data, err := os.ReadFile(doc)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	blocks, files, order := parseDoc(lines)
	if len(blocks) == 0 {
		return
	}
	dir := t.TempDir()
	for _, name := range order {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(files[name]), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "home"), 0o755))
	env := []string{
		// bin/ for programs a setup line writes (a stand-in claude for
		// dtree clis), then dtree and the fake agents (testscript.Main put
		// them first on the test's PATH).
		"PATH=" + filepath.Join(dir, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"REPO=" + repo,
		"LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "IS_SANDBOX=1",
		"TMPDIR=" + os.TempDir(),
		"GORACE=atexit_sleep_ms=0", // no second's sleep at each exit of a race-built dtree (script_test.go)
		// An example that links the repository's testdata in and runs
		// there (README's --workdir testdata/…) is in no git repository:
		// its checkpoints would be made in dtree's own.
		"GIT_CEILING_DIRECTORIES=" + repo,
	}
	// go, for an example that builds the fake agent, with the caches the
	// tests use rather than a new HOME's empty ones.
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN").Output(); err == nil {
		for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			env = append(env, []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN"}[i]+"="+v)
		}
	}
	steady := func(s string) string {
		s = strings.ReplaceAll(s, dir, "/tmp/demo")
		s = docRunID.ReplaceAllString(s, "RUN_ID")
		s = docTime.ReplaceAllString(s, "TIME")
		s = docDur.ReplaceAllString(s, "DUR")
		s = docVer.ReplaceAllString(s, "dtree VERSION")
		s = docPID.ReplaceAllString(s, "pid PID")
		s = docMS.ReplaceAllString(s, `"$1": N`)
		return strings.TrimRight(s, " \t")
	}
	rewrite := map[int][]string{} // line of a command → its output, for -update
	shown := map[string]bool{}    // files written from a `cat FILE` of the doc
	for _, b := range blocks {
		first := b.cmds[0]
		where := fmt.Sprintf("%s:%d", filepath.Base(doc), first.line+1)
		if b.skip != "" {
			t.Logf("%s: not run: %s", where, b.skip)
			continue
		}
		if !haveJQ && slices.ContainsFunc(b.cmds, func(c docCmd) bool { return jqRE.MatchString(c.cmd) }) {
			// .ci/run installs jq; a machine without it checks the rest.
			t.Logf("%s: not run: jq is not installed", where)
			continue
		}
		for _, s := range b.setup {
			out, err := docShell(dir, env, strings.ReplaceAll(s, "/tmp/demo", dir))
			require.NoError(t, err, "%s: setup %q: %s", where, s, out)
		} // `cat FILE` of a file not there yet shows the file: the doc's
		// output is its content.
		cwd := dir // where the block has cd'd to, for a relative FILE
		for _, c := range b.cmds {
			if to, ok := strings.CutPrefix(c.cmd, "cd "); ok && !strings.ContainsAny(to, " ;&|") {
				to = strings.ReplaceAll(to, "/tmp/demo", dir)
				if !filepath.IsAbs(to) {
					to = filepath.Join(cwd, to)
				}
				cwd = to
				continue
			}
			m := catRE.FindStringSubmatch(c.cmd)
			if m == nil || strings.HasPrefix(m[1], "/") && !strings.HasPrefix(m[1], "/tmp/demo/") || strings.Contains(m[1], ".dtree/") {
				continue // not a file the doc defines: another's, or a run's log
			}
			p := strings.ReplaceAll(m[1], "/tmp/demo", dir)
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			// A file an example made is what it shows; one the doc showed
			// before may be shown changed.
			if _, err := os.Stat(p); err == nil && !shown[p] {
				continue
			}
			shown[p] = true
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(c.want, "\n")+"\n"), 0o644))
		}

		// A marker before each command splits the output; the status is
		// kept across it, for an `echo $?`.
		// The blocks of a doc are one shell session: what one exports is
		// there for the next (.docenv); each starts in the doc's
		// directory, which the doc calls /tmp/demo.
		var script strings.Builder
		script.WriteString("[ -f .docenv ] && . ./.docenv\n__s=0\n")
		for k, c := range b.cmds {
			fmt.Fprintf(&script, "printf '"+docMarker+"'\n(exit $__s)\n%s\n__s=$?\n", k, strings.ReplaceAll(c.cmd, "/tmp/demo", dir))
		}
		fmt.Fprintf(&script, "export -p | grep -Ev '^(export|declare -x) (OLD)?PWD=' > %s/.docenv\n", dir)
		text := script.String()
		if b.stdout {
			text = "exec 2>/dev/null\n" + text
		}
		out, _ := docShell(dir, env, text)
		parts := strings.Split(out, "\x1edtree-doc-example-")
		got := make([][]string, len(b.cmds))
		for _, p := range parts[1:] {
			var k int
			n, _ := fmt.Sscanf(p, "%d\x1e", &k)
			if n != 1 || k >= len(got) {
				continue
			}
			_, text, _ := strings.Cut(p, "\x1e")
			text = strings.TrimSuffix(text, "\n")
			if text != "" {
				got[k] = strings.Split(text, "\n")
			}
		}
		for k, c := range b.cmds {
			if docMatch(c.want, got[k], steady) {
				continue
			}
			if golden.Update() {
				rewrite[c.line] = got[k]
				continue
			}
			t.Errorf("%s:%d: $ %s\n--- the doc shows:\n%s\n--- dtree printed:\n%s", filepath.Base(doc), c.line+1, c.cmd,
				strings.Join(c.want, "\n"), strings.Join(got[k], "\n"))
		}
	}
	if len(rewrite) > 0 {
		require.NoError(t, os.WriteFile(doc, []byte(rewriteDoc(lines, blocks, rewrite, dir)), 0o644))
	}
}

// docShell runs script in bash in dir, stdout and stderr together: the
// docs' sessions are bash's ($'\t').
func docShell(dir string, env []string, script string) (string, error) {
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// docMatch compares output line by line, steadied; a want line "…"
// matches any number of lines.
func docMatch(want, got []string, steady func(string) string) bool {
	if len(want) > 0 && strings.TrimSpace(want[0]) == "…" {
		for k := 0; k <= len(got); k++ {
			if docMatch(want[1:], got[k:], steady) {
				return true
			}
		}
		return false
	}
	if len(want) == 0 || len(got) == 0 {
		return len(want) == 0 && len(got) == 0
	}
	return steady(want[0]) == steady(got[0]) && docMatch(want[1:], got[1:], steady)
}

// rewriteDoc puts each rewritten command's output in place of what the doc
// showed.
func rewriteDoc(lines []string, blocks []docBlock, rewrite map[int][]string, dir string) string {
	var out []string
	next := 0
	for _, b := range blocks {
		for k, c := range b.cmds {
			got, ok := rewrite[c.line]
			if !ok {
				continue
			}
			end := b.end
			if k+1 < len(b.cmds) {
				end = b.cmds[k+1].line
			}
			out = append(out, lines[next:c.line+1]...)
			for _, l := range got {
				out = append(out, b.indent+strings.ReplaceAll(l, dir, "/tmp/demo"))
			}
			next = end
		}
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "\n")
}
