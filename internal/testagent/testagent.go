// Package testagent is a stand-in for an LLM agent CLI in dtree's tests: a
// program (the test binary run under the name fakeagent) that answers
// dtree's prompts from a script, records every call, and can misbehave on
// cue — sleep, spawn a child, print a flood, exit non-zero.
//
// It takes its prompt from its last argument, or from stdin when it has no
// arguments. FAKEAGENT_SCRIPT names a JSON file of rules, FAKEAGENT_STATE a
// directory where it counts calls, FAKEAGENT_LOG a file it appends one JSON
// line per call to. A rule matches on node (DTREE_NODE_ID), purpose (run,
// decide or validate, told from the prompt) and call (the nth call for that
// node and purpose, across visits and attempts; 0 matches any); the first
// matching rule acts. With no rule, it succeeds: completed, fully
// completed, or the first allowed answer.
package testagent

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Rule is one scripted behaviour.
type Rule struct {
	Node    string `json:"node"`
	Purpose string `json:"purpose"`
	Call    int    `json:"call"`
	// Reply is printed to stdout as is; Answer, for a decision, is wrapped
	// in the JSON dtree asks for; Completed/Fully set the process and
	// validation JSON (pointers: unset means true).
	Reply     string   `json:"reply"`
	Answer    string   `json:"answer"`
	Completed *bool    `json:"completed"`
	Fully     *bool    `json:"fully_completed"`
	Warnings  []string `json:"warnings"`
	Exit      int      `json:"exit"`
	Sleep     string   `json:"sleep"`
	// Events are lines written to stdout, one at a time, before the
	// filler, the wait and the sleep: a CLI's event stream (stream-json)
	// reporting usage and turns, then hanging as a runaway agent does.
	// EventGap is the pause after each (a duration).
	Events   []string `json:"events"`
	EventGap string   `json:"event_gap"`
	// WaitFile holds the call until this file exists (relative to the
	// agent's directory; at most a minute), after its pid is recorded: a
	// test holds a step mid-call, and lets it go, without a sleep.
	WaitFile string `json:"wait_file"`
	// SpawnChild starts a child that sleeps an hour in the agent's group,
	// its output on /dev/null (sleep 3600 >/dev/null 2>&1 &).
	SpawnChild bool `json:"spawn_child"`
	// RecordPid writes the agent's pid to FAKEAGENT_PIDS, as every rule
	// that starts something (or handles SIGTERM) does.
	RecordPid bool `json:"record_pid"`
	// PidsFile, when set, takes FAKEAGENT_PIDS's place for this rule
	// (relative to the agent's directory), so each node can have its own.
	PidsFile string `json:"pids_file"`
	// Processes that leave the agent's reach, as agents' tools do; each
	// sleeps an hour, and its pid goes to FAKEAGENT_PIDS with the agent's.
	SpawnSetsid bool `json:"spawn_setsid"`  // a grandchild in a session of its own (setsid), holding no output
	SpawnOnTerm bool `json:"spawn_on_term"` // on SIGTERM, start a setsid process, then exit
	IgnoreTerm  bool `json:"ignore_term"`   // SIGTERM does nothing: only SIGKILL ends it
	// StubbornChildren makes the spawn_* processes ignore SIGTERM too.
	StubbornChildren bool  `json:"stubborn_children"`
	PrintBytes       int64 `json:"print_bytes"` // write this many bytes of filler to stdout first
	// PrintStderr writes this many bytes of filler to stderr, after the
	// sleep.
	PrintStderr int64 `json:"print_stderr"`
	// Stderr is written to stderr, after the sleep: a CLI's complaint.
	Stderr string `json:"stderr"`
	// Stream prints Claude Code's stream-json instead of the bare reply
	// (a custom CLI with output: stream-json reads it; stream.go): Tools,
	// ToolRepeat times over, before the wait and the sleep; then
	// StreamBytes of Edit calls; then the result event with the reply.
	Stream      bool   `json:"stream"`
	Tools       []Tool `json:"tools"`
	ToolRepeat  int    `json:"tool_repeat"`
	StreamBytes int64  `json:"stream_bytes"`
	// Write are files the agent writes before it answers, path (relative
	// to its directory) to content, as an agent's edits do; Remove are
	// files (or directories) it removes.
	Write  map[string]string `json:"write"`
	Remove []string          `json:"remove"`
}

// Record is what the log says of one call.
type Record struct {
	Node    string   `json:"node"`
	Attempt string   `json:"attempt"`
	RunID   string   `json:"run_id"`
	Purpose string   `json:"purpose"`
	Call    int      `json:"call"`
	Args    []string `json:"args"`
	Stdin   bool     `json:"stdin"`
	Prompt  string   `json:"prompt"`
	Dir     string   `json:"dir"`
	Pid     int      `json:"pid"`
	NoColor string   `json:"no_color"`
}

// Main is the fake agent's main; it returns the exit code.
//
// FAKEAGENT_PIDS names a file where the agent appends its pid and its
// children's (spawn_*); FAKEAGENT_PARENT one where it writes its parent's
// pid (dtree's), so that a script can signal dtree itself;
// FAKEAGENT_TERMS one where a process that ignores SIGTERM (ignore_term,
// stubborn_children) notes each it gets.
func Main() int {
	if os.Getenv("FAKE_MODE") != "" {
		return modeMain()
	}
	switch os.Getenv("FAKEAGENT_CHILD") {
	case "stubborn":
		// FAKEAGENT_CHILD_DELAY: slow to start, as a test binary built
		// with -race is on a loaded machine.
		if d, err := time.ParseDuration(os.Getenv("FAKEAGENT_CHILD_DELAY")); err == nil {
			time.Sleep(d)
		}
		ignoreTerm()
		fallthrough
	case "sleep":
		signalReady()
		time.Sleep(time.Hour)
		return 0
	}
	if path := os.Getenv("FAKEAGENT_PARENT"); path != "" {
		_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getppid())+"\n"), 0o644)
	}
	prompt, fromStdin, err := readPrompt()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		return 2
	}
	node := os.Getenv("DTREE_NODE_ID")
	purpose := purposeOf(prompt)
	call := countCall(node, purpose)
	dir, _ := os.Getwd()
	logCall(Record{Node: node, Attempt: os.Getenv("DTREE_ATTEMPT"), RunID: os.Getenv("DTREE_RUN_ID"),
		Purpose: purpose, Call: call, Args: os.Args[1:], Stdin: fromStdin, Prompt: prompt, Dir: dir,
		Pid: os.Getpid(), NoColor: os.Getenv("NO_COLOR")})
	r := findRule(node, purpose, call)
	if r.PidsFile != "" {
		os.Setenv("FAKEAGENT_PIDS", r.PidsFile)
	}
	if r.IgnoreTerm || r.SpawnOnTerm {
		onTerm(r.SpawnOnTerm)
	}
	pids := []int{os.Getpid()}
	if r.SpawnChild {
		pids = append(pids, spawn(childSame, r.StubbornChildren))
	}
	if r.SpawnSetsid {
		pids = append(pids, spawn(childSetsid, r.StubbornChildren))
	}
	if r.SpawnChild || r.SpawnSetsid || r.SpawnOnTerm || r.IgnoreTerm || r.RecordPid {
		recordPids(pids...)
	}
	for name, content := range r.Write {
		_ = os.MkdirAll(filepath.Dir(name), 0o755)
		_ = os.WriteFile(name, []byte(content), 0o644)
	}
	for _, name := range r.Remove {
		_ = os.RemoveAll(name)
	}
	gap, _ := time.ParseDuration(r.EventGap)
	for _, e := range r.Events {
		fmt.Println(e)
		time.Sleep(gap)
	}
	if r.PrintBytes > 0 {
		flood(os.Stdout, r.PrintBytes)
	}
	var st *streamer
	if r.Stream {
		st = newStreamer(os.Stdout)
		for range max(r.ToolRepeat, 1) {
			for _, t := range r.Tools {
				st.tool(t, r.ToolRepeat <= 1)
			}
		}
		st.flood(r.StreamBytes)
	}
	if r.WaitFile != "" {
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(r.WaitFile); err == nil {
				break
			}
		}
	}
	if r.Sleep != "" {
		if d, err := time.ParseDuration(r.Sleep); err == nil {
			time.Sleep(d)
		}
	}
	if r.PrintStderr > 0 {
		flood(os.Stderr, r.PrintStderr)
	}
	if r.Stderr != "" {
		fmt.Fprintln(os.Stderr, r.Stderr)
	}
	if st != nil {
		st.result(reply(r, purpose, prompt))
		return r.Exit
	}
	fmt.Println(reply(r, purpose, prompt))
	return r.Exit
}

func readPrompt() (string, bool, error) {
	if len(os.Args) > 1 {
		return os.Args[len(os.Args)-1], false, nil
	}
	b, err := io.ReadAll(os.Stdin)
	return string(b), true, err
}

// purposeOf is what is asked: validate, decide or run. dtree says a
// validation in DTREE_PURPOSE; a decision is told by the end of its
// instruction, which is the prompt's end, so that the run so far quoting
// an earlier decision or validation does not change what is asked.
func purposeOf(prompt string) string {
	switch os.Getenv("DTREE_PURPOSE") {
	case "validate":
		return "validate"
	case "run":
		if strings.HasSuffix(strings.TrimSpace(prompt), `"reasons": ["why, one point per string"]}`) {
			return "decide"
		}
		return "run"
	}
	switch { // called by hand, not by dtree
	case strings.Contains(prompt, `"fully_completed"`):
		return "validate"
	case strings.Contains(prompt, `"answer"`):
		return "decide"
	}
	return "run"
}

func countCall(node, purpose string) int {
	dir := os.Getenv("FAKEAGENT_STATE")
	if dir == "" {
		return 1
	}
	path := filepath.Join(dir, fmt.Sprintf("%s.%s", sanitize(node), purpose))
	n := 0
	if b, err := os.ReadFile(path); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	n++
	_ = os.WriteFile(path, []byte(strconv.Itoa(n)), 0o644)
	return n
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == 0 {
			return '_'
		}
		return r
	}, s)
}

func logCall(rec Record) {
	path := os.Getenv("FAKEAGENT_LOG")
	if path == "" {
		return
	}
	b, _ := json.Marshal(rec)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func findRule(node, purpose string, call int) Rule {
	path := os.Getenv("FAKEAGENT_SCRIPT")
	if path == "" {
		return Rule{}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Rule{}
	}
	var rules []Rule
	if err := json.Unmarshal(b, &rules); err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent: bad script:", err)
		os.Exit(2)
	}
	for _, r := range rules {
		if (r.Node == "" || r.Node == node) && (r.Purpose == "" || r.Purpose == purpose) && (r.Call == 0 || r.Call == call) {
			return r
		}
	}
	return Rule{}
}

func reply(r Rule, purpose, prompt string) string {
	if r.Reply != "" {
		return r.Reply
	}
	yes := func(b *bool) bool { return b == nil || *b }
	warnings, _ := json.Marshal(append([]string{}, r.Warnings...))
	switch purpose {
	case "validate":
		return fmt.Sprintf(`{"fully_completed": %t, "partially_completed": false, "should_retry": %t, "warnings": %s}`,
			yes(r.Fully), !yes(r.Fully), warnings)
	case "decide":
		answer := r.Answer
		if answer == "" {
			answer = firstChoice(prompt)
		}
		a, _ := json.Marshal(answer)
		return fmt.Sprintf(`{"choices": [], "answer": %s, "reasons": ["scripted"]}`, a)
	}
	return fmt.Sprintf(`{"completed": %t, "secs_taken": 0, "tokens_used": 0, "comments": ["scripted"]}`, yes(r.Completed))
}

// firstChoice finds the first "- label" line of dtree's decision
// instruction, which comes after the run so far and its bullets.
func firstChoice(prompt string) string {
	if i := strings.LastIndex(prompt, "written exactly as given:"); i >= 0 {
		prompt = prompt[i:]
	}
	for _, line := range strings.Split(prompt, "\n") {
		if l, ok := strings.CutPrefix(line, "- "); ok {
			return l
		}
	}
	return ""
}

// How a spawned process is started; its output goes to /dev/null.
const (
	childSame   = iota // in the agent's group
	childSetsid        // in a session of its own
)

// spawn starts a process that sleeps an hour, ignoring SIGTERM when
// stubborn, and returns its pid (0 when it could not start) once the
// process is ready: its signal handling is in place (signalReady). A pid
// returned earlier would let a test signal a process that does not yet
// ignore SIGTERM.
func spawn(how int, stubborn bool) int {
	self, err := os.Executable()
	if err != nil {
		return 0
	}
	cmd := exec.Command(self)
	mode := "sleep"
	if stubborn {
		mode = "stubborn"
	}
	cmd.Env = append(os.Environ(), "FAKEAGENT_CHILD="+mode)
	if how == childSetsid {
		newSession(cmd)
	}
	pid, err := startReady(cmd)
	if err != nil {
		return 0
	}
	return pid
}

// readyFD is the variable that names the descriptor a spawned process
// writes one byte to once it is ready (signalReady).
const readyFD = "FAKEAGENT_READY_FD"

// readyWait bounds the wait for a spawned process to say it is ready: a
// test binary built with -race can take seconds to start on a loaded
// machine.
const readyWait = 2 * time.Minute

// startReady starts cmd and waits until it has said it is ready (or has
// exited without saying so, an error).
func startReady(cmd *exec.Cmd) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", readyFD, 2+len(cmd.ExtraFiles)))
	err = cmd.Start()
	w.Close()
	if err != nil {
		return 0, err
	}
	_ = r.SetReadDeadline(time.Now().Add(readyWait))
	if _, err := r.Read(make([]byte, 1)); err != nil {
		return 0, fmt.Errorf("pid %d did not say it was ready: %w", cmd.Process.Pid, err)
	}
	return cmd.Process.Pid, nil
}

// signalReady tells the process that spawned this one that its signal
// handling is in place.
func signalReady() {
	fd, err := strconv.Atoi(os.Getenv(readyFD))
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "ready")
	_, _ = f.Write([]byte{1})
	f.Close()
}

// recordTerm appends "PID TERM" to FAKEAGENT_TERMS: a process that ignores
// SIGTERM has had one. A test waits for it to know that dtree has begun a
// stop, instead of sleeping a while.
func recordTerm() {
	path := os.Getenv("FAKEAGENT_TERMS")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		_, _ = fmt.Fprintf(f, "%d TERM\n", os.Getpid())
		f.Close()
	}
}

// recordPids appends pids to FAKEAGENT_PIDS, in one write.
func recordPids(pids ...int) {
	path := os.Getenv("FAKEAGENT_PIDS")
	if path == "" {
		return
	}
	var b strings.Builder
	for _, p := range pids {
		if p > 0 {
			fmt.Fprintf(&b, "%d\n", p)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		_, _ = f.WriteString(b.String())
		f.Close()
	}
}

func flood(w io.Writer, n int64) {
	line := []byte(strings.Repeat("x", 1023) + "\n")
	for n > 0 {
		k := min(n, int64(len(line)))
		if _, err := w.Write(line[:k]); err != nil {
			return
		}
		n -= k
	}
}
