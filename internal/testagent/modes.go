package testagent

// The runner's modes (FAKE_MODE): the agent runner's own tests
// (internal/agent) drive the fake agent through Definitions, one mode a
// call; Main runs them when FAKE_MODE is set.
//
//	echo         print a JSON report: args, stdin, env, cwd, and the
//	             content of any argument naming a file
//	print        print FAKE_STDOUT to stdout and FAKE_STDERR to stderr, then
//	             the files FAKE_STDOUT_FILE and FAKE_STDERR_FILE, then,
//	             when FAKE_SLEEP_AFTER is set, sleep that long (a CLI
//	             that answers and never exits)
//	print-bytes  print FAKE_BYTES bytes of filler to stdout
//	sleep        sleep (FAKE_SLEEP, default a minute)
//	spawn        start a sleeping child that shares stdout, wait until it
//	             handles its signals, write "pid childpid" to
//	             FAKE_PIDFILE, then sleep, or with
//	             FAKE_LEADER_EXIT=1 print FAKE_STDOUT and exit
//
// FAKE_IGNORE_TERM=1 ignores SIGTERM (children too); FAKE_TERM_EXIT=N
// exits with status N on SIGTERM, as CLIs that catch it and shut down
// cleanly do; FAKE_EXIT is the exit status at the end.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func modeMain() int {
	if os.Getenv("FAKE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if v := os.Getenv("FAKE_TERM_EXIT"); v != "" {
		code, _ := strconv.Atoi(v)
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		go func() {
			<-sigs
			os.Exit(code)
		}()
	}
	// A process modeSpawn started is ready once its signals are handled.
	signalReady()
	switch mode := os.Getenv("FAKE_MODE"); mode {
	case "echo":
		modeEcho()
	case "print":
		fmt.Print(os.Getenv("FAKE_STDOUT"))
		fmt.Fprint(os.Stderr, os.Getenv("FAKE_STDERR"))
		modePrintFile(os.Stdout, os.Getenv("FAKE_STDOUT_FILE"))
		modePrintFile(os.Stderr, os.Getenv("FAKE_STDERR_FILE"))
		if d := os.Getenv("FAKE_SLEEP_AFTER"); d != "" {
			_ = os.Setenv("FAKE_SLEEP", d)
			modeSleep()
		}
	case "print-bytes":
		modePrintBytes()
	case "sleep":
		modeSleep()
	case "spawn":
		modeSpawn()
	default:
		fmt.Fprintf(os.Stderr, "fakeagent: unknown FAKE_MODE %q\n", mode)
		return 2
	}
	code, _ := strconv.Atoi(os.Getenv("FAKE_EXIT"))
	return code
}

// modeReport is what echo prints.
type modeReport struct {
	Args  []string          `json:"args"`
	Stdin string            `json:"stdin"`
	Env   []string          `json:"env"`
	Dir   string            `json:"dir"`
	Files map[string]string `json:"files"`
}

func modeEcho() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		modeFail(err)
	}
	dir, _ := os.Getwd()
	r := modeReport{Args: os.Args[1:], Stdin: string(in), Env: os.Environ(), Dir: dir, Files: map[string]string{}}
	for _, a := range r.Args {
		if b, err := os.ReadFile(a); err == nil {
			r.Files[a] = string(b)
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		modeFail(err)
	}
}

// printFile copies a file in small writes, as a CLI streams its output.
func modePrintFile(w io.Writer, path string) {
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		modeFail(err)
	}
	for len(b) > 0 {
		k := min(len(b), 97)
		if _, err := w.Write(b[:k]); err != nil {
			modeFail(err)
		}
		b = b[k:]
	}
}

func modePrintBytes() {
	n, err := strconv.ParseInt(os.Getenv("FAKE_BYTES"), 10, 64)
	if err != nil {
		modeFail(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	chunk := []byte(strings.Repeat(line, 655)) // 65500 bytes
	for n > 0 {
		k := min(n, int64(len(chunk)))
		if _, err := os.Stdout.Write(chunk[:k]); err != nil {
			modeFail(err)
		}
		n -= k
	}
}

func modeSleep() {
	d, err := time.ParseDuration(os.Getenv("FAKE_SLEEP"))
	if err != nil {
		d = time.Minute
	}
	time.Sleep(d)
}

func modeSpawn() {
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), "FAKE_MODE=sleep")
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	// The pid file is written once the child handles its signals as
	// asked (FAKE_IGNORE_TERM), so a test that reads it can signal both.
	childPid, err := startReady(child)
	if err != nil {
		modeFail(err)
	}
	pids := fmt.Sprintf("%d %d", os.Getpid(), childPid)
	path := os.Getenv("FAKE_PIDFILE")
	if err := os.WriteFile(path+".tmp", []byte(pids), 0o600); err != nil {
		modeFail(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		modeFail(err)
	}
	if os.Getenv("FAKE_LEADER_EXIT") == "1" {
		fmt.Print(os.Getenv("FAKE_STDOUT"))
		return
	}
	modeSleep()
}

func modeFail(err error) {
	fmt.Fprintln(os.Stderr, "fakeagent:", err)
	os.Exit(2)
}
