package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nothingLeft runs the tests, then looks for processes of this test
// binary (dtree, fakeagent, fakecli and the other programs the scripts run
// are all this binary) still running: each is a process some test left
// behind. It names them, kills them, and fails the run.
type nothingLeft struct{ m *testing.M }

func (n nothingLeft) Run() int {
	code := n.m.Run()
	left := leftovers(3 * time.Second)
	for _, p := range left {
		fmt.Fprintf(os.Stderr, "FAIL: a test left process %s running\n", p)
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if len(left) > 0 && code == 0 {
		code = 1
	}
	return code
}

// leftovers lists the running processes, other than this one, of this
// test binary or of its copies that testscript puts on PATH as dtree,
// fakeagent… ("PID argv (WORK=…)"), waiting up to wait for them to end. A
// zombie runs nothing and does not count.
func leftovers(wait time.Duration) []string {
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil // no /proc: nothing to check with
	}
	bindir := ""
	if p, err := exec.LookPath("fakeagent"); err == nil {
		bindir = filepath.Dir(p)
	}
	ours := func(exe string) bool {
		exe = strings.TrimSuffix(exe, " (deleted)")
		return exe == self || bindir != "" && filepath.Dir(exe) == bindir
	}
	var left []string
	for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		left = left[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid := e.Name()
			if pid[0] < '0' || pid[0] > '9' || pid == strconv.Itoa(os.Getpid()) {
				continue
			}
			if exe, err := os.Readlink("/proc/" + pid + "/exe"); err != nil || !ours(exe) || !pidAlive(pid) {
				continue
			}
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			desc := pid + " " + strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
			environ, _ := os.ReadFile("/proc/" + pid + "/environ")
			for _, kv := range strings.Split(string(environ), "\x00") {
				if strings.HasPrefix(kv, "WORK=") {
					desc += " (" + kv + ")" // the script's directory names it
				}
			}
			left = append(left, desc)
		}
		if len(left) == 0 || !time.Now().Before(deadline) {
			return left
		}
	}
}

// The check finds a process of this binary left running, and stops
// finding it once it is gone: without this the check could not fail.
func TestLeftoversFindsAFakeAgent(t *testing.T) {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		t.Skip("needs /proc")
	}
	t.Parallel()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := &exec.Cmd{Path: exe, Args: []string{"fakeagent"}, Env: append(os.Environ(), "FAKEAGENT_CHILD=sleep")}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := strconv.Itoa(cmd.Process.Pid)
	found := func() bool {
		for _, l := range leftovers(0) {
			if strings.Fields(l)[0] == pid {
				return true
			}
		}
		return false
	}
	assert.Eventually(t, found, 5*time.Second, 20*time.Millisecond, "the sleeping fake agent is a leftover")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.False(t, found(), "a reaped process is not")
}

// pipeClose runs `pipeclose LINES CODE PROGRAM ARGS...`: the program's
// stdout and stderr go to one pipe, whose read end is closed after LINES
// lines (dtree run … 2>&1 | head -1); it succeeds only if the program then
// exits with CODE, not killed by SIGPIPE.
func pipeClose() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: pipeclose LINES CODE PROGRAM [ARGS...]")
		os.Exit(2)
	}
	lines, err1 := strconv.Atoi(os.Args[1])
	want, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "pipeclose: bad LINES or CODE")
		os.Exit(2)
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeclose:", err)
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[3], os.Args[4:]...)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "pipeclose:", err)
		os.Exit(2)
	}
	w.Close()
	br := bufio.NewReader(r)
	for i := 0; i < lines; i++ {
		line, err := br.ReadString('\n')
		fmt.Print(line) // the lines read, to the script's stdout
		if err == io.EOF {
			break
		}
	}
	r.Close()
	err = cmd.Wait()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			fmt.Fprintf(os.Stderr, "pipeclose: %s was killed by %s\n", os.Args[3], ws.Signal())
			os.Exit(1)
		}
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "pipeclose:", err)
		os.Exit(2)
	}
	if got != want {
		fmt.Fprintf(os.Stderr, "pipeclose: %s exited %d, want %d\n", os.Args[3], got, want)
		os.Exit(1)
	}
}
