// Command benchlong measures how dtree's cost grows with the length of a
// run (readme/performance.md#long-runs): a loop of two instant steps (the
// replay agent, which answers inside dtree, so no process is started per
// step) run for 1,000 and for 100,000 steps, and a resume of the long run.
// It reports the time per step of each run and their ratio, wall and CPU
// (user and system: on a shared machine the wall time is the load's), each
// run's peak RSS (getrusage of the child), the sizes of its logs, and the
// resume's times and peak RSS. It asserts nothing.
//
//	go run ./internal/testchart/benchlong [-steps 1000,100000] [-old BIN]
//
// -old BIN measures another dtree binary the same way, after this one.
//
// A replay is not resumed (readme/resume.md), so the resume reads a copy of
// the long run's log whose run_start names no answers file: the run is the
// same, and it goes on at its --max-steps limit, so the resume takes every
// step, calls no agent and stops (exit 4).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The chart: two NoValidation process steps that lead to each other, each
// allowed as many visits as the run has steps. Their CLI, fake, is only
// for the resume's check that the CLIs it would call exist; the replay
// answers every call of the runs.
const chart = `title: Long loop
nodes:
  - id: start
    kind: start
    text: Start
    next: a
  - id: a
    text: Step a
    tags: [NoValidation]
    metadata:
      cli: fake
      max_visits: 100000000
    next: b
  - id: b
    text: Step b
    tags: [NoValidation]
    metadata:
      cli: fake
      max_visits: 100000000
    next: a
`

const settings = "clis:\n  fake:\n    binary: true\n    prompt_via: stdin\n    output: text\n"

func main() {
	steps := flag.String("steps", "1000,100000", "run lengths, comma-separated; the first is the base of the ratio, the last is resumed")
	old := flag.String("old", "", "another dtree binary to measure the same way")
	flag.Parse()
	var ns []int
	for _, s := range strings.Split(*steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 2 {
			fmt.Fprintf(os.Stderr, "benchlong: -steps: %q is not a number of steps, 2 or more\n", s)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	if err := bench(ns, *old); err != nil {
		fmt.Fprintln(os.Stderr, "benchlong:", err)
		os.Exit(1)
	}
}

func bench(ns []int, old string) error {
	dir, err := os.MkdirTemp("", "dtree-benchlong-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "dtree")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/dtree").CombinedOutput(); err != nil {
		return fmt.Errorf("build dtree: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(chart), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "dtree.yaml"), []byte(settings), 0o644); err != nil {
		return err
	}
	for _, n := range ns {
		if err := writeAnswers(filepath.Join(dir, fmt.Sprintf("answers-%d.yaml", n)), n); err != nil {
			return err
		}
	}
	bins := [][2]string{{"this dtree", bin}}
	if old != "" {
		abs, err := filepath.Abs(old)
		if err != nil {
			return err
		}
		bins = append(bins, [2]string{old, abs})
	}
	for _, b := range bins {
		if err := benchOne(dir, b[0], b[1], ns); err != nil {
			return err
		}
	}
	return nil
}

// writeAnswers writes the replies of a run of n steps: one "ok" for each
// visit of a and of b.
func writeAnswers(path string, n int) error {
	var b bytes.Buffer
	for _, node := range []string{"a", "b"} {
		fmt.Fprintf(&b, "%q: [ok", node)
		for range n / 2 {
			b.WriteString(", ok")
		}
		b.WriteString("]\n")
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// result is one child process: its wall time, CPU time (user and
// system) and peak RSS.
type result struct {
	wall, cpu time.Duration
	rss       int64 // bytes
	exit      int
}

func (r result) String() string {
	return fmt.Sprintf("%8.2f s %8.2f s  %6.0f MB", r.wall.Seconds(), r.cpu.Seconds(), float64(r.rss)/1e6)
}

func benchOne(dir, name, bin string, ns []int) error {
	fmt.Printf("%s (%s)\n", name, bin)
	fmt.Printf("%-22s %10s %10s %9s %12s %12s %12s %12s\n", "", "wall", "CPU", "peak RSS", "per step", "events.jsonl", "short.json", "long.log")
	var base, baseCPU float64
	var lastLogs string
	for i, n := range ns {
		logs := filepath.Join(dir, fmt.Sprintf("logs-%s-%d", filepath.Base(bin), n))
		r, err := run(dir, bin, "run", "--quiet", "--log-dir", logs, "--max-steps", strconv.Itoa(n),
			"--answers", fmt.Sprintf("answers-%d.yaml", n), "loop.yaml")
		if err != nil {
			return err
		}
		if r.exit != 4 {
			return fmt.Errorf("the run of %d steps ended with exit status %d, not 4 (its --max-steps)", n, r.exit)
		}
		per, perCPU := float64(r.wall.Microseconds())/float64(n), float64(r.cpu.Microseconds())/float64(n)
		if i == 0 {
			base, baseCPU = per, perCPU
		}
		fmt.Printf("%-22s %s %9.1f µs %12s %12s %12s   %.2fx the first (CPU %.1f µs a step, %.2fx)\n", fmt.Sprintf("run, %d steps", n), r, per,
			size(logs, "events.jsonl"), size(logs, "short.json"), size(logs, "long.log"), per/base, perCPU, perCPU/baseCPU)
		lastLogs = logs
	}
	if err := unreplay(filepath.Join(lastLogs, "latest", "events.jsonl")); err != nil {
		return err
	}
	r, err := run(dir, bin, "resume", "--quiet", "--log-dir", lastLogs)
	if err != nil {
		return err
	}
	if r.exit != 4 {
		return fmt.Errorf("the resume ended with exit status %d, not 4 (the run's --max-steps)", r.exit)
	}
	fmt.Printf("%-22s %s\n\n", fmt.Sprintf("resume, %d steps", ns[len(ns)-1]), r)
	return nil
}

// run runs dtree in dir and measures it; a failure to start is an error,
// an exit status is not.
func run(dir, bin string, args ...string) (result, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	// The CLI fake of ./dtree.yaml is trusted (readme/settings.md#trust);
	// an older dtree ignores the variable.
	cmd.Env = append(os.Environ(), "DTREE_TRUST=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start)}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return r, fmt.Errorf("%s %s: %v", bin, args[0], err)
	}
	r.exit = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = int64(ru.Maxrss) * 1024 // KB on Linux
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if r.exit != 4 {
		fmt.Fprint(os.Stderr, stderr.String())
	}
	return r, nil
}

// unreplay rewrites the first line of events.jsonl, run_start, without its
// answers file, so that dtree resume takes the run.
func unreplay(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := bufio.NewReaderSize(f, 1<<20)
	first, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	i := strings.Index(first, `"answers":"`)
	if i < 0 {
		return fmt.Errorf("%s: run_start names no answers file", path)
	}
	j := strings.Index(first[i+len(`"answers":"`):], `"`)
	first = first[:i] + first[i+len(`"answers":"`)+j+2:] // and its comma
	tmp := path + ".new"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := out.WriteString(first); err != nil {
		out.Close()
		return err
	}
	if _, err := io.Copy(out, rd); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func size(logs, name string) string {
	st, err := os.Stat(filepath.Join(logs, "latest", name))
	if err != nil {
		return "-"
	}
	return fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
}
