// Command benchimport measures how `dtree lint` scales with the size of a
// chart: it writes synthetic charts of 1k to 131k nodes (package testchart),
// builds ./cmd/dtree, runs `dtree lint` on each chart several times, and
// prints the wall time and the peak memory of the child process per chart.
// Timing the real binary, not the importer in a test, counts everything a
// user waits for: start-up, reading the file, import, lint and output.
//
// Ratios put the times in scale: the 100,000-node chain as Lucid API JSON,
// as a draw.io file (plain and compressed) and as Mermaid against the same
// chain as CSV, and the 131,071-node tree CSV against
// a bare encoding/csv read of the same file (this program run as a child
// with -read-csv: open, read every record, exit). Runs are interleaved, one
// of each chart in turn, so that the VM's drift hits every row alike; -old
// times another dtree binary in the same rounds, for before and after.
//
// Run it from the repository root:
//
//	go run ./internal/testchart/benchimport [-runs N] [-keep DIR] [-old BIN]
package main

import (
	"bufio"
	"encoding/csv"
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
	{"linear-100k.drawio", 100000, func(w io.Writer) error { return testchart.LinearDrawio(w, 100000) }},
	{"linear-100k-compressed.drawio", 100000, func(w io.Writer) error { return testchart.LinearDrawioCompressed(w, 100000) }},
	{"linear-100k.mmd", 100000, func(w io.Writer) error { return testchart.LinearMermaid(w, 100000) }},
}

// job is one command timed on one chart.
type job struct {
	chart
	label string
	argv  []string
}

// result is what the runs of one job measured.
type result struct {
	job
	size  int64
	walls []time.Duration
	cpus  []time.Duration // user + system time of each run
	rss   int64           // largest peak RSS of any run, in bytes
	codes []int           // distinct exit codes seen
}

const (
	jsonChart       = "linear-100k.json"
	drawioChart     = "linear-100k.drawio"
	compressedChart = "linear-100k-compressed.drawio"
	mermaidChart    = "linear-100k.mmd"
	csvChart        = "linear-100k.csv"
	treeChart       = "tree-d17.csv"
	bareLabel       = treeChart + " encoding/csv"
	oldSuffix       = " (old)"
)

func main() {
	runs := flag.Int("runs", 5, "runs of `dtree lint` per chart")
	keep := flag.String("keep", "", "write the charts into `DIR` and leave them there")
	old := flag.String("old", "", "also time the dtree binary `BIN` on each chart, in the same rounds")
	readCSV := flag.String("read-csv", "", "read `FILE` with encoding/csv and exit (the reference the tree CSV is timed against)")
	flag.Parse()
	if *readCSV != "" {
		if err := bareRead(*readCSV); err != nil {
			fmt.Fprintln(os.Stderr, "benchimport: error:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*runs, *keep, *old); err != nil {
		fmt.Fprintln(os.Stderr, "benchimport: error:", err)
		os.Exit(1)
	}
}

// bareRead reads every record of a CSV file the plain way: encoding/csv on
// a buffered file, fields per record not fixed, strict quotes (what the
// importer accepts: RFC 4180 with no lenient quoting, a broken quote is
// malformed_csv; readme/lint.md#classes).
func bareRead(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 64<<10))
	r.FieldsPerRecord = -1
	fields := 0
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		fields += len(rec)
	}
	fmt.Println(fields, "fields")
	return nil
}

func run(runs int, keep, old string) error {
	if runs < 1 {
		return fmt.Errorf("-runs must be at least 1, got %d", runs)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if old != "" {
		if old, err = filepath.Abs(old); err != nil {
			return err
		}
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

	var results []*result
	for _, c := range charts {
		path := filepath.Join(dir, c.file)
		size, err := write(path, c.gen)
		if err != nil {
			return err
		}
		add := func(label string, argv ...string) {
			results = append(results, &result{job: job{chart: c, label: label, argv: argv}, size: size})
		}
		add(c.file, bin, "lint", path)
		if old != "" {
			add(c.file+oldSuffix, old, "lint", path)
		}
		if c.file == treeChart {
			add(bareLabel, self, "-read-csv", path)
		}
	}

	var failures []string
	for i := range runs {
		for _, r := range results {
			wall, cpu, rss, code, out, err := measure(r.argv)
			if err != nil {
				return fmt.Errorf("run %s: %w", r.label, err)
			}
			if code != 0 && code != 3 {
				failures = append(failures, fmt.Sprintf("%s run %d: exit %d\n%s", r.label, i+1, code, out))
			}
			fmt.Fprintf(os.Stderr, "%s: run %d/%d: %.3fs, CPU %.3fs, %.1f MB, exit %d\n",
				r.label, i+1, runs, wall.Seconds(), cpu.Seconds(), mb(rss), code)
			r.walls = append(r.walls, wall)
			r.cpus = append(r.cpus, cpu)
			r.rss = max(r.rss, rss)
			if !slices.Contains(r.codes, code) {
				r.codes = append(r.codes, code)
			}
		}
	}

	report(os.Stdout, results, old != "")
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

// measure runs argv once and returns its wall time, its CPU time (user and
// system, which a loaded machine stretches far less than the wall time),
// its peak RSS in bytes, its exit code and the tail of its output. err is
// set only when the child could not be run at all.
func measure(argv []string) (wall, cpu time.Duration, rss int64, code int, out string, err error) {
	var tail tailBuffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = &tail, &tail
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return 0, 0, 0, 0, "", err
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // KiB on Linux
	}
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return wall, cpu, rss, cmd.ProcessState.ExitCode(), tail.String(), nil
}

// report prints the table, the verdict on linear growth, and the ratios.
func report(w io.Writer, results []*result, withOld bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "chart\tnodes\tsize MB\tmedian s\tmin s\tCPU s\tmax RSS MB\tµs/node\texit\t")
	byLabel := map[string]*result{}
	for _, r := range results {
		byLabel[r.label] = r
		med := median(r.walls)
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.3f\t%.3f\t%.3f\t%.1f\t%.2f\t%s\t\n",
			r.label, r.nodes, mb(r.size), med.Seconds(), slices.Min(r.walls).Seconds(),
			median(r.cpus).Seconds(), mb(r.rss), perNode(r), codes(r.codes))
	}
	tw.Flush()

	small, large := perNode(byLabel["linear-1k.csv"]), perNode(byLabel[csvChart])
	ratio := large / small
	verdict := "within 2x: linear growth"
	if ratio > 2 {
		verdict = "NOT within 2x: worse than linear"
	}
	fmt.Fprintf(w, "linear chain, time per node 1k -> 100k: %.2f -> %.2f µs (x%.2f), %s\n",
		small, large, ratio, verdict)
	ratios := func(suffix string) {
		compare(w, "JSON vs CSV, 100k chain"+suffix, byLabel[jsonChart+suffix], byLabel[csvChart+suffix])
		compare(w, "draw.io vs CSV, 100k chain"+suffix, byLabel[drawioChart+suffix], byLabel[csvChart+suffix])
		compare(w, "compressed draw.io vs CSV, 100k chain"+suffix, byLabel[compressedChart+suffix], byLabel[csvChart+suffix])
		compare(w, "Mermaid vs CSV, 100k chain"+suffix, byLabel[mermaidChart+suffix], byLabel[csvChart+suffix])
		compare(w, "CSV vs encoding/csv, 131k tree"+suffix, byLabel[treeChart+suffix], byLabel[bareLabel])
	}
	ratios("")
	if withOld {
		ratios(oldSuffix)
		for _, c := range charts {
			compare(w, "new vs old, "+c.file, byLabel[c.file], byLabel[c.file+oldSuffix])
		}
	}
}

// compare prints the ratio of a's median wall time to b's, of the minima,
// and of the median CPU times.
func compare(w io.Writer, what string, a, b *result) {
	ma, mb := median(a.walls), median(b.walls)
	fmt.Fprintf(w, "%s: median %.3f s / %.3f s = %.2fx (minima %.2fx; CPU %.2fx)\n", what, ma.Seconds(), mb.Seconds(),
		ma.Seconds()/mb.Seconds(), slices.Min(a.walls).Seconds()/slices.Min(b.walls).Seconds(),
		median(a.cpus).Seconds()/median(b.cpus).Seconds())
}

// perNode is a result's median wall time per node, in µs.
func perNode(r *result) float64 {
	return float64(median(r.walls).Microseconds()) / float64(r.nodes)
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
