// Command benchfork measures forks (readme/parallel.md): the wall time of
// a fork of two branches against the same steps drawn as one branch, and
// dtree's peak memory with a fork of 16 branches against one of 2. Each
// branch is -steps steps long; each step is either the lean agent
// (installed as claude, answering at once: what dtree itself costs a
// branch) or a command step that sleeps -sleep (work that takes time: the
// branches overlap or they do not). Every run is in a fresh git
// repository, as a fork needs.
//
//	go run ./internal/testchart/benchfork [-runs 5] [-steps 3] [-sleep 500ms]
//
// Peak memory is the ru_maxrss of the dtree process as wait4 reports it:
// the largest of dtree and the git commands it ran (each far smaller).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dtree-dev/dtree/internal/testchart"
)

func main() {
	runs := flag.Int("runs", 5, "timed runs of each")
	steps := flag.Int("steps", 3, "steps in each branch")
	sleep := flag.Duration("sleep", 500*time.Millisecond, "what a command step takes")
	flag.Parse()
	if err := bench(*runs, *steps, *sleep); err != nil {
		fmt.Fprintln(os.Stderr, "benchfork:", err)
		os.Exit(1)
	}
}

// chart is a YAML chart: plan, then branches of steps each (one branch:
// no fork, the steps one after another), then review. step is a step's
// YAML body after its id line.
func chart(branches, steps int, step string) string {
	var b strings.Builder
	b.WriteString("title: bench fork\nnodes:\n  - id: plan\n    text: Plan.\n")
	var firsts []string
	for i := range branches {
		firsts = append(firsts, fmt.Sprintf("b%d_0", i))
	}
	if branches == 1 {
		b.WriteString("    next: b0_0\n")
	} else {
		fmt.Fprintf(&b, "    parallel: [%s]\n", strings.Join(firsts, ", "))
	}
	for i := range branches {
		for s := range steps {
			fmt.Fprintf(&b, "  - id: b%d_%d\n    text: Step %d of branch %d.\n%s", i, s, s, i, step)
			if s+1 < steps {
				fmt.Fprintf(&b, "    next: b%d_%d\n", i, s+1)
			} else {
				b.WriteString("    next: review\n")
			}
		}
	}
	b.WriteString("  - id: review\n    text: Review.\n    next: done\n  - id: done\n    kind: end\n    text: Done\n")
	return b.String()
}

type result struct {
	wall []time.Duration
	rss  []int64 // KiB
}

func bench(runs, steps int, sleep time.Duration) error {
	dir, err := os.MkdirTemp("", "dtree-benchfork-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := testchart.BuildTools(dir)
	if err != nil {
		return err
	}
	agent := ""
	command := fmt.Sprintf("    command: sleep %g\n", sleep.Seconds())
	cases := []struct {
		name     string
		branches int
		step     string
	}{
		{"instant agents, 1 branch", 1, agent},
		{"instant agents, 2 branches", 2, agent},
		{"instant agents, 16 branches", 16, agent},
		{fmt.Sprintf("%s steps, 1 branch", sleep), 1, command},
		{fmt.Sprintf("%s steps, 2 branches", sleep), 2, command},
	}
	results := make([]result, len(cases))
	for r := range runs {
		for i, c := range cases {
			wall, rss, err := once(dir, bin, fmt.Sprintf("%d-%d", i, r), chart(c.branches, steps, c.step))
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			results[i].wall = append(results[i].wall, wall)
			results[i].rss = append(results[i].rss, rss)
		}
	}
	fmt.Printf("%d steps a branch, %d runs each, medians\n", steps, runs)
	fmt.Printf("%-32s %10s %14s\n", "case", "wall", "peak RSS")
	for i, c := range cases {
		fmt.Printf("%-32s %10s %11d KiB\n", c.name, median(results[i].wall).Round(time.Millisecond), median(results[i].rss))
	}
	return nil
}

// once runs the chart in a new git repository, and returns the run's wall
// time and dtree's peak RSS.
func once(dir, bin, name, yaml string) (time.Duration, int64, error) {
	repo := filepath.Join(dir, "repo-"+name)
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return 0, 0, err
	}
	if err := os.WriteFile(filepath.Join(repo, "chart.yaml"), []byte(yaml), 0o644); err != nil {
		return 0, 0, err
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"IS_SANDBOX=1", "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, 0, fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command(filepath.Join(bin, "dtree"), "run", "--quiet", "--no-validate", "chart.yaml")
	cmd.Dir, cmd.Env = repo, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("dtree run: %v\n%s", err, out)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return wall, rss, os.RemoveAll(repo)
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
