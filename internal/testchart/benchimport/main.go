// Command benchimport measures how `dtree lint` scales with the size of a
// chart: it writes synthetic charts of 1k to 131k nodes (package testchart),
// builds ./cmd/dtree, runs `dtree lint` on each chart several times, and
// prints the wall time and the peak memory of the child process per chart.
// Timing the real binary, not the importer in a test, counts everything a
// user waits for: start-up, reading the file, import, lint and output.
//
// Run it from the repository root:
//
//	go run ./internal/testchart/benchimport [-runs N] [-keep DIR]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dtree-dev/dtree/internal/testchart"
)

// chart is one input to measure.
type chart struct {
	file  string
	nodes int
	gen   func(io.Writer) error
}

var charts = []chart{
	{"linear-1k.csv", 1000, func(w io.Writer) error { return testchart.LinearCSV(w, 1000) }},
	{"linear-10k.csv", 10000, func(w io.Writer) error { return testchart.LinearCSV(w, 10000) }},
	{"linear-100k.csv", 100000, func(w io.Writer) error { return testchart.LinearCSV(w, 100000) }},
	{"tree-d17.csv", 1<<17 - 1, func(w io.Writer) error { return testchart.BinaryTreeCSV(w, 17) }},
	{"linear-100k.json", 100000, func(w io.Writer) error { return testchart.LinearJSON(w, 100000) }},
}

// result is what the runs of one chart measured.
type result struct {
	chart
	size  int64
	walls []time.Duration
	rss   int64 // largest peak RSS of any run, in bytes
	codes []int // distinct exit codes seen
}

func main() {
	runs := flag.Int("runs", 5, "runs of `dtree lint` per chart")
	keep := flag.String("keep", "", "write the charts into `DIR` and leave them there")
	flag.Parse()
	if err := run(*runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "benchimport: error:", err)
		os.Exit(1)
	}
}

func run(runs int, keep string) error {
	if runs < 1 {
		return fmt.Errorf("-runs must be at least 1, got %d", runs)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "dtree-benchimport-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := tmp
	if keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			return err
		}
		dir = keep
	}

	bin := filepath.Join(tmp, "dtree")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dtree")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build ./cmd/dtree: %w", err)
	}

	var results []result
	var failures []string
	for _, c := range charts {
		path := filepath.Join(dir, c.file)
		size, err := write(path, c.gen)
		if err != nil {
			return err
		}
		r := result{chart: c, size: size}
		for i := range runs {
			wall, rss, code, out, err := lint(bin, path)
			if err != nil {
				return fmt.Errorf("run dtree lint %s: %w", c.file, err)
			}
			if code != 0 && code != 3 {
				failures = append(failures, fmt.Sprintf("%s run %d: exit %d\n%s", c.file, i+1, code, out))
			}
			fmt.Fprintf(os.Stderr, "%s: run %d/%d: %.3fs, %.1f MB, exit %d\n",
				c.file, i+1, runs, wall.Seconds(), mb(rss), code)
			r.walls = append(r.walls, wall)
			r.rss = max(r.rss, rss)
			if !slices.Contains(r.codes, code) {
				r.codes = append(r.codes, code)
			}
		}
		results = append(results, r)
	}

	report(os.Stdout, results)
	if keep != "" {
		fmt.Fprintf(os.Stderr, "charts kept in %s\n", keep)
	}
	if len(failures) > 0 {
		return fmt.Errorf("dtree lint exited other than 0 or 3:\n%s", strings.Join(failures, "\n"))
	}
	return nil
}

// moduleRoot returns the directory of the main module's go.mod, so the tool
// works from any directory inside the repository.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the dtree module: run from the repository root")
	}
	return filepath.Dir(gomod), nil
}

// write generates one chart into path and returns its size.
func write(path string, gen func(io.Writer) error) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	if err := gen(f); err != nil {
		f.Close()
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// lint runs `dtree lint path` once and returns its wall time, its peak RSS in
// bytes, its exit code and the tail of its output. err is set only when the
// child could not be run at all.
func lint(bin, path string) (wall time.Duration, rss int64, code int, out string, err error) {
	var tail tailBuffer
	cmd := exec.Command(bin, "lint", path)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = &tail, &tail
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return 0, 0, 0, "", err
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // KiB on Linux
	}
	return wall, rss, cmd.ProcessState.ExitCode(), tail.String(), nil
}

// report prints the table and the verdict on linear growth.
func report(w io.Writer, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "chart\tnodes\tsize MB\tmedian s\tmin s\tmax RSS MB\tµs/node\texit\t")
	perNode := map[string]float64{}
	for _, r := range results {
		med := median(r.walls)
		us := float64(med.Microseconds()) / float64(r.nodes)
		perNode[r.file] = us
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.3f\t%.3f\t%.1f\t%.2f\t%s\t\n",
			r.file, r.nodes, mb(r.size), med.Seconds(), slices.Min(r.walls).Seconds(),
			mb(r.rss), us, codes(r.codes))
	}
	tw.Flush()

	small, large := perNode["linear-1k.csv"], perNode["linear-100k.csv"]
	ratio := large / small
	verdict := "within 2x: linear growth"
	if ratio > 2 {
		verdict = "NOT within 2x: worse than linear"
	}
	fmt.Fprintf(w, "linear chain, time per node 1k -> 100k: %.2f -> %.2f µs (x%.2f), %s\n",
		small, large, ratio, verdict)
}

// mb converts bytes to megabytes (10^6 bytes).
func mb(n int64) float64 { return float64(n) / 1e6 }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func codes(cs []int) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprint(c)
	}
	return strings.Join(parts, ",")
}

// tailBuffer keeps the last 4 KiB written to it, enough to show why a run
// failed without holding a large report in memory.
type tailBuffer struct{ b []byte }

const tailSize = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailSize {
		t.b = append(t.b[:0], t.b[len(t.b)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
