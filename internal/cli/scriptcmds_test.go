package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dtree-dev/dtree/internal/testagent"
)

// cmdPromptCheck: promptcheck LOG NODE PURPOSE FILE — the first prompt the
// fake agent logged for NODE and PURPOSE starts with FILE's content, byte
// for byte (the node text goes first, then dtree's instruction).
func cmdPromptCheck(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: promptcheck LOG NODE PURPOSE FILE")
	}
	want := ts.ReadFile(args[3])
	want = strings.TrimSuffix(want, "\n")
	r, found := loggedCall(ts, args[0], func(r testagent.Record) bool { return r.Node == args[1] && r.Purpose == args[2] })
	if !found {
		ts.Fatalf("no %s call for node %s in %s", args[2], args[1], args[0])
	}
	if ok := strings.HasPrefix(r.Prompt, want); ok == neg {
		ts.Fatalf("prompt of node %s (%d bytes, stdin %v) starts with the %d bytes of %s: %v", args[1], len(r.Prompt), r.Stdin, len(want), args[3], ok)
	}
}

// loggedCall is the first call the fake agent logged in LOG that match
// takes.
func loggedCall(ts *testscript.TestScript, log string, match func(testagent.Record) bool) (testagent.Record, bool) {
	f, err := os.Open(ts.MkAbs(log))
	ts.Check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r testagent.Record
		ts.Check(json.Unmarshal(sc.Bytes(), &r))
		if match(r) {
			return r, true
		}
	}
	ts.Check(sc.Err())
	return testagent.Record{}, false
}

// cmdPromptSize: promptsize LOG NODE PURPOSE CALL MAX — the prompt of the
// CALLth call the fake agent logged for NODE and PURPOSE is at most MAX
// bytes.
func cmdPromptSize(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 5 {
		ts.Fatalf("usage: promptsize LOG NODE PURPOSE CALL MAX")
	}
	call, err := strconv.Atoi(args[3])
	ts.Check(err)
	limit, err := strconv.Atoi(args[4])
	ts.Check(err)
	r, found := loggedCall(ts, args[0], func(r testagent.Record) bool {
		return r.Node == args[1] && r.Purpose == args[2] && r.Call == call
	})
	if !found {
		ts.Fatalf("no %s call %d for node %s in %s", args[2], call, args[1], args[0])
	}
	if (len(r.Prompt) <= limit) == neg {
		ts.Fatalf("prompt of call %d of node %s: %d bytes, bound %d", call, args[1], len(r.Prompt), limit)
	}
}

// cmdBigChart: bigchart FILE KIB — a one-node chart whose text is KIB KiB
// of varied, hostile text.
func cmdBigChart(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: bigchart CHART TEXTFILE KIB")
	}
	kib, err := strconv.Atoi(args[2])
	ts.Check(err)
	var text strings.Builder
	for i := 0; text.Len() < kib<<10; i++ {
		fmt.Fprintf(&text, "line %d: $(touch X) `id` \"q\" 'q' ünï %d\n", i, i*i)
	}
	t := strings.TrimSpace(text.String())
	csvText := `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	chart := "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments\n" +
		"1,Page,,,,,,,,,,,P,\n2,Process,Flowchart Shapes/Containers,1,,,,,,,NoValidation,," + csvText + ",\n"
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(chart), 0o644))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(t), 0o644))
}

// cmdTokenChart: tokenchart CHART KIB — writes a YAML chart start → big
// → end whose process node big has for text one unbroken token of KIB
// KiB.
func cmdTokenChart(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: tokenchart CHART KIB")
	}
	kib, err := strconv.Atoi(args[1])
	ts.Check(err)
	chart := "nodes:\n  - {id: start, kind: start, text: Start, next: big}\n" +
		"  - id: big\n    tags: [NoValidation]\n    next: end\n    text: " + strings.Repeat("x", kib<<10) + "\n" +
		"  - {id: end, kind: end, text: End}\n"
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(chart), 0o644))
}

// cmdAliasChart: aliaschart CHART KIB USES — writes a YAML chart whose
// first node has a text of KIB KiB with an anchor, reused by USES more
// nodes through an alias.
func cmdAliasChart(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: aliaschart CHART KIB USES")
	}
	kib, err := strconv.Atoi(args[1])
	ts.Check(err)
	uses, err := strconv.Atoi(args[2])
	ts.Check(err)
	var b strings.Builder
	fmt.Fprintf(&b, "nodes:\n  - id: n0\n    text: &big %s\n    next: n1\n", strings.Repeat("x", kib<<10))
	for i := 1; i <= uses; i++ {
		fmt.Fprintf(&b, "  - {id: n%d, text: *big, next: n%d}\n", i, i+1)
	}
	fmt.Fprintf(&b, "  - {id: n%d, text: End}\n", uses+1)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}

// cmdPidsGone: pidsgone [-wait SECONDS] FILE — every pid listed in FILE
// has exited (a zombie counts: it runs nothing); with -wait, within that
// time. Negated: some are still running. When it fails, it kills those
// that run, so that a failing test leaves no process behind.
func cmdPidsGone(ts *testscript.TestScript, neg bool, args []string) {
	wait := time.Duration(0)
	if len(args) == 3 && args[0] == "-wait" {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		wait, args = time.Duration(n)*time.Second, args[2:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: pidsgone [-wait SECONDS] FILE")
	}
	pids := strings.Fields(ts.ReadFile(args[0]))
	if len(pids) == 0 {
		ts.Fatalf("no pids in %s", args[0])
	}
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		var alive []string
		for _, pid := range pids {
			if pidAlive(pid) {
				alive = append(alive, pid)
			}
		}
		if (len(alive) == 0) != neg {
			return
		}
		if !time.Now().Before(deadline) {
			if !neg {
				// The test fails; it leaves nothing running all the same.
				for _, pid := range alive {
					if n, err := strconv.Atoi(pid); err == nil {
						_ = syscall.Kill(n, syscall.SIGKILL)
					}
				}
			}
			ts.Fatalf("of the processes in %s, %d are running: %v", args[0], len(alive), alive)
		}
	}
}

// pidAlive reports whether a process runs (a zombie runs nothing).
func pidAlive(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	return err == nil && !isZombie(string(stat))
}

// cmdSendSig: sendsig HUP|TERM|INT FILE — sends the signal to the pid in
// FILE (fakeagent's FAKEAGENT_PARENT: dtree). testscript's kill sends
// only INT and KILL.
func cmdSendSig(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sendsig HUP|TERM|INT FILE")
	}
	sig, ok := map[string]syscall.Signal{"HUP": syscall.SIGHUP, "TERM": syscall.SIGTERM, "INT": syscall.SIGINT}[args[0]]
	if !ok {
		ts.Fatalf("sendsig: unknown signal %s", args[0])
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[1])))
	ts.Check(err)
	ts.Check(syscall.Kill(pid, sig))
}

// cmdClock: clock start | clock under SECONDS — how long since clock
// start is under SECONDS. Only for a test whose point is time (a wait
// skipped); its bound is generous, and says why in the script. A wait for
// something to be ready is waitfile, never a sleep.
func cmdClock(ts *testscript.TestScript, neg bool, args []string) {
	start := ts.Value("clock").(*time.Time)
	switch {
	case len(args) == 1 && args[0] == "start":
		*start = time.Now()
	case len(args) == 2 && args[0] == "under":
		n, err := strconv.ParseFloat(args[1], 64)
		ts.Check(err)
		took := time.Since(*start)
		if (took < time.Duration(n*float64(time.Second))) == neg {
			ts.Fatalf("%s since clock start; under %ss: %v", took.Round(time.Millisecond), args[1], !neg)
		}
	default:
		ts.Fatalf("usage: clock start | clock under SECONDS")
	}
}

func isZombie(stat string) bool {
	// pid (comm) STATE ...; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// cmdWaitFile: waitfile [-match REGEXP] FILE [SECONDS] — waits until FILE
// exists and is not empty; with -match, until a line of it matches REGEXP.
// The wait is generous (20s unless told): it stands for a readiness the
// script needs, and ends as soon as that comes.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	var match *regexp.Regexp
	if len(args) > 2 && args[0] == "-match" {
		re, err := regexp.Compile("(?m)" + args[1])
		ts.Check(err)
		match, args = re, args[2:]
	}
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfile [-match REGEXP] FILE [SECONDS]")
	}
	limit := 20 * time.Second
	if len(args) == 2 {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		limit = time.Duration(n) * time.Second
	}
	ready := func() bool {
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		return err == nil && len(b) > 0 && (match == nil || match.Match(b))
	}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ready() {
			return
		}
	}
	if match != nil {
		ts.Fatalf("no line of %s matched %s within %s", args[0], match, limit)
	}
	ts.Fatalf("%s did not appear within %s", args[0], limit)
}

// cmdSameRun: samerun SHORT1 SHORT2 — two runs' short.json files took the
// same path, and each step ended the same way: status, retries, the
// branch taken and the next node.
func cmdSameRun(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: samerun SHORT1 SHORT2")
	}
	type step struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Retries int    `json:"retries"`
		Next    string `json:"next"`
		Label   string `json:"label"`
	}
	type short struct {
		Status string   `json:"status"`
		Path   []string `json:"path"`
		Nodes  []step   `json:"nodes"`
	}
	var runs [2]short
	for i, f := range args {
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(f)), &runs[i]))
	}
	a, b := fmt.Sprintf("%+v", runs[0]), fmt.Sprintf("%+v", runs[1])
	if (a == b) == neg {
		ts.Fatalf("%s: %s\n%s: %s", args[0], a, args[1], b)
	}
}

// cmdSameSummary: samesummary JSON1 JSON2 — two runs' --json summaries
// say the same of the run, but for times and ids: status, exit code,
// path, every step's visit, status, retries, response, validation, branch
// and next node, and the usage, the run's and each step's (calls, tokens,
// cost).
func cmdSameSummary(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: samesummary JSON1 JSON2")
	}
	type usage struct {
		Calls        int      `json:"calls"`
		InputTokens  *int64   `json:"input_tokens"`
		OutputTokens *int64   `json:"output_tokens"`
		CostUSD      *float64 `json:"cost_usd"`
	}
	type step struct {
		ID         string          `json:"id"`
		Visit      int             `json:"visit"`
		Status     string          `json:"status"`
		Retries    int             `json:"retries"`
		Response   json.RawMessage `json:"response"`
		Validation json.RawMessage `json:"validation"`
		Next       string          `json:"next"`
		Label      string          `json:"label"`
		Usage      usage           `json:"usage"`
	}
	type summary struct {
		Status   string   `json:"status"`
		ExitCode int      `json:"exit_code"`
		Path     []string `json:"path"`
		Nodes    []step   `json:"nodes"`
		Usage    usage    `json:"usage"`
	}
	var runs [2]string
	for i, f := range args {
		var s summary
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(f)), &s))
		b, err := json.MarshalIndent(s, "", " ")
		ts.Check(err)
		runs[i] = string(b)
	}
	if (runs[0] == runs[1]) == neg {
		ts.Fatalf("%s:\n%s\n%s:\n%s", args[0], runs[0], args[1], runs[1])
	}
}

// cmdSameJSONField: samejsonfield FILE1 FILE2 FIELD — the JSON object on
// each file's one line has the same string FIELD, not empty.
func cmdSameJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: samejsonfield FILE1 FILE2 FIELD")
	}
	var vals [2]string
	for i, f := range args[:2] {
		var m map[string]any
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(f)), &m))
		v, ok := m[args[2]].(string)
		if !ok || v == "" {
			ts.Fatalf("%s has no %s", f, args[2])
		}
		vals[i] = v
	}
	if (vals[0] == vals[1]) == neg {
		ts.Fatalf("%s of %s:\n%s\n%s of %s:\n%s", args[2], args[0], vals[0], args[2], args[1], vals[1])
	}
}

// cmdJSONL: jsonl FILE — every line of FILE is whole JSON, the last ends
// in a newline: the file is valid JSON Lines.
func cmdJSONL(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: jsonl FILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		ts.Fatalf("%s ends in a torn line: %q", args[0], b[max(0, len(b)-100):])
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(b) > 0 && !json.Valid(line) {
			ts.Fatalf("%s line %d is not JSON: %q", args[0], i+1, line[:min(len(line), 200)])
		}
	}
}
