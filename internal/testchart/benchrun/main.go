// Command benchrun measures what dtree adds to the agents it runs: a chain
// of 200 NoValidation process nodes through `dtree run` with an agent that
// answers at once, against a shell loop calling the same agent 200 times
// with the same prompts. It prints both medians and their ratio.
//
//	go run ./internal/testchart/benchrun [-runs 7] [-nodes 200]
package main

import (
	"flag"
	"fmt"
	"github.com/dtree-dev/dtree/internal/testchart"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 7, "timed runs of each")
	nodes := flag.Int("nodes", 200, "process nodes in the chain")
	flag.Parse()
	if err := bench(*runs, *nodes); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

func bench(runs, nodes int) error {
	dir, err := os.MkdirTemp("", "dtree-benchrun-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := testchart.BuildTools(dir)
	if err != nil {
		return err
	}
	var csv strings.Builder
	csv.WriteString("Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments\n1,Page,,,,,,,,,,,P,\n")
	for i := range nodes {
		fmt.Fprintf(&csv, "%d,Process,Flowchart Shapes/Containers,1,,,,,,,NoValidation,,Step %d: summarise the change,\n", 2+i, i)
	}
	for i := range nodes - 1 {
		fmt.Fprintf(&csv, "%d,Line,,1,,,%d,%d,None,Arrow,,,,\n", 2+nodes+i, 2+i, 3+i)
	}
	write := func(name, content string) error {
		return os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	if err := write("chain.csv", csv.String()); err != nil {
		return err
	}
	if err := write("dtree.yaml", "default_cli: fake\nclis:\n  fake:\n    binary: fakeagent\n    args: [\"{prompt}\"]\n    output: text\n"); err != nil {
		return err
	}
	// The shell loop gets the same prompt text dtree sends.
	prompt := "Step 0: summarise the change\n\nWhen you have finished, end your reply with one JSON object."
	loop := fmt.Sprintf(`for i in $(seq %d); do fakeagent %q >/dev/null; done`, nodes, prompt)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	timeIt := func(name string, args ...string) (time.Duration, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%s: %v\n%s", name, err, out)
		}
		return time.Since(start), nil
	}
	var dt, sh []time.Duration
	for range runs { // interleaved, so drift hits both alike
		d, err := timeIt(filepath.Join(bin, "dtree"), "run", "--quiet", "--log-dir", filepath.Join(dir, "logs"), "chain.csv")
		if err != nil {
			return err
		}
		s, err := timeIt("bash", "-c", loop)
		if err != nil {
			return err
		}
		dt, sh = append(dt, d), append(sh, s)
	}
	md, ms := median(dt), median(sh)
	fmt.Printf("%d-node chain, %d runs each, interleaved\n", nodes, runs)
	fmt.Printf("dtree run:  median %s (min %s)\n", md.Round(time.Millisecond), slices.Min(dt).Round(time.Millisecond))
	fmt.Printf("shell loop: median %s (min %s)\n", ms.Round(time.Millisecond), slices.Min(sh).Round(time.Millisecond))
	// The ratio of the minima is the least touched by other work on the
	// machine; the ratio of the medians is the one the target is set on.
	fmt.Printf("ratio: %.2fx of medians, %.2fx of minima (target at most 1.15x)\n",
		float64(md)/float64(ms), float64(slices.Min(dt))/float64(slices.Min(sh)))
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
