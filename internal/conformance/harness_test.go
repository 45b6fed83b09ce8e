package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/mockllm"
	"github.com/dtree-dev/dtree/internal/runlog"
)

// cliDirEnv names the directory holding the real CLIs' binaries.
const cliDirEnv = "DTREE_CONFORMANCE_CLIS"

// dtreeBin is the dtree binary built once by TestMain; "" when the tests
// are skipped. fakeAgentBin is dtree's fake agent, the CLI a fallback
// list goes on with after a real one fails.
var dtreeBin, fakeAgentBin string

func TestMain(m *testing.M) {
	if os.Getenv(cliDirEnv) == "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "dtree-conformance-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dtreeBin = filepath.Join(dir, "dtree")
	fakeAgentBin = filepath.Join(dir, "fakeagent")
	for _, b := range [][2]string{{dtreeBin, "github.com/dtree-dev/dtree/cmd/dtree"}, {fakeAgentBin, "github.com/dtree-dev/dtree/internal/testagent/fakeagent"}} {
		build := exec.Command("go", "build", "-o", b[0], b[1])
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "conformance: go build", b[1]+":", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is the repository's root, from this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return filepath.Join(wd, "..", "..")
}

// env is one CLI's sandbox: a fresh HOME, the mock, the environment.
type env struct {
	t    *testing.T
	c    cliCase
	home string
	work string // the working directory the agents run in
	logs string // --log-dir
	mock *mockllm.Server
	vars []string
}

// newEnv starts a mock and makes a fresh HOME for the CLI, with PATH
// holding the real binary's directory and the system's, nothing else from
// the test's environment, and the CLI's own setup.
func newEnv(t *testing.T, c cliCase) *env {
	t.Helper()
	dir := os.Getenv(cliDirEnv)
	bin := filepath.Join(dir, c.binary)
	_, err := os.Stat(bin)
	require.NoError(t, err, "%s is not installed in %s", c.binary, dir)
	mock, err := mockllm.Start(nil)
	require.NoError(t, err)
	t.Cleanup(func() { mock.Close() })
	home := t.TempDir()
	e := &env{t: t, c: c, home: home, work: filepath.Join(home, "work"), logs: filepath.Join(home, "logs"), mock: mock}
	for _, d := range []string{e.work, filepath.Join(home, "tmp")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	e.vars = []string{
		"HOME=" + home,
		"PATH=" + dir + ":/usr/local/bin:/usr/bin:/bin",
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"LANG=C.UTF-8",
		// The test's own dtree.yaml defines CLIs (readme/settings.md#trust).
		"DTREE_TRUST=1",
	}
	e.vars = append(e.vars, c.setup(t, home, mock.URL)...)
	if c.settings != "" {
		e.write("dtree.yaml", c.settings)
	}
	// The processes of this test carry its HOME: none may outlive it.
	t.Cleanup(func() { e.assertNoProcessLeft(t) })
	return e
}

// without drops variables from the sandbox's environment.
func (e *env) without(names ...string) {
	e.vars = slices.DeleteFunc(e.vars, func(v string) bool {
		name, _, _ := strings.Cut(v, "=")
		return slices.Contains(names, name)
	})
}

// write puts a file in the working directory and returns its path.
func (e *env) write(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.work, name)
	require.NoError(e.t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// result is one dtree run.
type result struct {
	exit    int
	stdout  string
	stderr  string
	elapsed time.Duration
	summary summary
	events  []runlog.Event
}

// summary is the part of `dtree run --json` the tests read.
type summary struct {
	Status string   `json:"status"`
	Path   []string `json:"path"`
	Usage  usage    `json:"usage"`
	Error  string   `json:"error"`
	// Branches are a run's parallel branches (readme/parallel.md).
	Branches []branchSummary `json:"branches"`
}

// branchSummary is one branch of --json's branches.
type branchSummary struct {
	ID     string   `json:"id"`
	Fork   string   `json:"fork"`
	Name   string   `json:"name"`
	Path   []string `json:"path"`
	Status string   `json:"status"`
}

type usage struct {
	InputTokens  *int     `json:"input_tokens"`
	OutputTokens *int     `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd"`
	DurationMS   *int     `json:"duration_ms"`
	Calls        int      `json:"calls"`
}

// run runs dtree with the CLI as default, in the working directory, with
// the sandbox's environment only, and reads its summary and events.
func (e *env) run(args ...string) result {
	e.t.Helper()
	full := append([]string{"run", "--json", "--cli", e.c.name, "--log-dir", e.logs}, args...)
	cmd := exec.Command(dtreeBin, full...)
	cmd.Dir, cmd.Env = e.work, e.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(began)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else {
		require.NoError(e.t, err)
	}
	e.t.Logf("dtree %s: exit %d in %s; stderr:\n%s", strings.Join(args, " "), r.exit, r.elapsed.Round(time.Millisecond), r.stderr)
	if r.exit == 2 || r.exit == 3 {
		return r // stopped before the run began: no summary, no events
	}
	require.NoError(e.t, json.Unmarshal(out.Bytes(), &r.summary), "dtree run --json printed: %s", r.stdout)
	r.events = readEvents(e.t, filepath.Join(e.logs, "latest", "events.jsonl"))
	return r
}

// readEvents reads events.jsonl with dtree's own reader: every line must
// be a whole event.
func readEvents(t *testing.T, path string) []runlog.Event {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := runlog.NewEventReader(f)
	evs, err := r.All()
	require.NoError(t, err)
	require.False(t, r.Torn(), "events.jsonl ends in a torn line")
	return evs
}

// calls are the run's agent_call events.
func (r result) calls() []runlog.AgentCall {
	var out []runlog.AgentCall
	for _, ev := range r.events {
		if c, ok := ev.(runlog.AgentCall); ok {
			out = append(out, c)
		}
	}
	return out
}

// answered are the requests the mock answered with a reply.
func answered(reqs []mockllm.Request) []mockllm.Request {
	var out []mockllm.Request
	for _, r := range reqs {
		if r.Status == 200 && r.API != mockllm.Other {
			out = append(out, r)
		}
	}
	return out
}

// procsOf lists the live processes whose environment carries home
// (HOME=home) or whose command line names a path under it, with their
// command lines: the CLIs of one test and everything they started.
// Zombies have neither, and are not listed.
func procsOf(home string) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	inEnv := []byte("HOME=" + home + "\x00")
	inArgs := []byte(home + "/")
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "environ"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if !bytes.Contains(environ, inEnv) && !bytes.Contains(cmdline, inArgs) {
			continue
		}
		out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")))
	}
	return out
}

// assertNoProcessLeft fails when a process of this sandbox is still
// running a few seconds after dtree ended, and kills it so that it does not
// outlive the test.
func (e *env) assertNoProcessLeft(t *testing.T) {
	t.Helper()
	var left []string
	for range 50 {
		if left = procsOf(e.home); len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("%s: processes left running after dtree ended:\n%s", e.c.name, strings.Join(left, "\n"))
	for _, p := range left {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			if proc, err := os.FindProcess(pid); err == nil {
				proc.Kill()
			}
		}
	}
}

// expect runs one check of a CLI. When the case lists the check in
// knownFailures (dtree is wrong against the real binary and the fix is
// someone else's), its failures are logged instead, and the check fails
// if it passes: then the entry must go.
func expect(t *testing.T, c cliCase, check string, body func(a *assert.Assertions)) {
	t.Helper()
	why, known := c.knownFailures[check]
	if !known {
		body(assert.New(t))
		return
	}
	rec := &recorder{}
	body(assert.New(rec))
	if len(rec.errs) == 0 {
		t.Errorf("%s %s passes now: remove it from knownFailures (%s)", c.name, check, why)
		return
	}
	t.Logf("KNOWN FAILURE %s %s: %s\n%s", c.name, check, why, strings.Join(rec.errs, "\n"))
}

// recorder collects assertion failures without failing the test.
type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
