// Command fakeagent stands in for an agent CLI in the runner's tests. The
// tests build it once and drive it through Definitions; FAKE_MODE picks
// what it does:
//
//	echo         print a JSON report: args, stdin, env, cwd, and the
//	             content of any argument naming a file
//	print        print FAKE_STDOUT to stdout and FAKE_STDERR to stderr, then
//	             the files FAKE_STDOUT_FILE and FAKE_STDERR_FILE, then,
//	             when FAKE_SLEEP_AFTER is set, sleep that long (a CLI
//	             that answers and never exits)
//	print-bytes  print FAKE_BYTES bytes of filler to stdout
//	sleep        sleep (FAKE_SLEEP, default a minute)
//	spawn        start a sleeping child that shares stdout, write "pid
//	             childpid" to FAKE_PIDFILE, then sleep, or with
//	             FAKE_LEADER_EXIT=1 print FAKE_STDOUT and exit
//
// FAKE_IGNORE_TERM=1 ignores SIGTERM (children too); FAKE_TERM_EXIT=N
// exits with status N on SIGTERM, as CLIs that catch it and shut down
// cleanly do; FAKE_EXIT is the exit status at the end.
package main

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

func main() {
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
	switch mode := os.Getenv("FAKE_MODE"); mode {
	case "echo":
		echo()
	case "print":
		fmt.Print(os.Getenv("FAKE_STDOUT"))
		fmt.Fprint(os.Stderr, os.Getenv("FAKE_STDERR"))
		printFile(os.Stdout, os.Getenv("FAKE_STDOUT_FILE"))
		printFile(os.Stderr, os.Getenv("FAKE_STDERR_FILE"))
		if d := os.Getenv("FAKE_SLEEP_AFTER"); d != "" {
			_ = os.Setenv("FAKE_SLEEP", d)
			sleep()
		}
	case "print-bytes":
		printBytes()
	case "sleep":
		sleep()
	case "spawn":
		spawn()
	default:
		fmt.Fprintf(os.Stderr, "fakeagent: unknown FAKE_MODE %q\n", mode)
		os.Exit(2)
	}
	code, _ := strconv.Atoi(os.Getenv("FAKE_EXIT"))
	os.Exit(code)
}

// Report is what echo prints.
type Report struct {
	Args  []string          `json:"args"`
	Stdin string            `json:"stdin"`
	Env   []string          `json:"env"`
	Dir   string            `json:"dir"`
	Files map[string]string `json:"files"`
}

func echo() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	dir, _ := os.Getwd()
	r := Report{Args: os.Args[1:], Stdin: string(in), Env: os.Environ(), Dir: dir, Files: map[string]string{}}
	for _, a := range r.Args {
		if b, err := os.ReadFile(a); err == nil {
			r.Files[a] = string(b)
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fail(err)
	}
}

// printFile copies a file in small writes, as a CLI streams its output.
func printFile(w io.Writer, path string) {
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	for len(b) > 0 {
		k := min(len(b), 97)
		if _, err := w.Write(b[:k]); err != nil {
			fail(err)
		}
		b = b[k:]
	}
}

func printBytes() {
	n, err := strconv.ParseInt(os.Getenv("FAKE_BYTES"), 10, 64)
	if err != nil {
		fail(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	chunk := []byte(strings.Repeat(line, 655)) // 65500 bytes
	for n > 0 {
		k := min(n, int64(len(chunk)))
		if _, err := os.Stdout.Write(chunk[:k]); err != nil {
			fail(err)
		}
		n -= k
	}
}

func sleep() {
	d, err := time.ParseDuration(os.Getenv("FAKE_SLEEP"))
	if err != nil {
		d = time.Minute
	}
	time.Sleep(d)
}

func spawn() {
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), "FAKE_MODE=sleep")
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	if err := child.Start(); err != nil {
		fail(err)
	}
	pids := fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)
	path := os.Getenv("FAKE_PIDFILE")
	if err := os.WriteFile(path+".tmp", []byte(pids), 0o600); err != nil {
		fail(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		fail(err)
	}
	if os.Getenv("FAKE_LEADER_EXIT") == "1" {
		fmt.Print(os.Getenv("FAKE_STDOUT"))
		return
	}
	sleep()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fakeagent:", err)
	os.Exit(2)
}
