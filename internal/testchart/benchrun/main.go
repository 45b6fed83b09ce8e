// Command benchrun measures what dtree adds to the agents it runs: a chain
// of 200 NoValidation process nodes through `dtree run` with an agent that
// answers at once, against a shell loop calling the same agent 200 times
// with the same prompt. It prints both medians and their ratio, for each
// of two agents: "fake", the scripted test agent (internal/testagent) as
// a custom CLI with text output, and "lean", a program that prints a fixed
// Claude Code envelope (internal/testchart/leanagent) run as the built-in
// claude. The lean agent takes less time a call, so dtree's own cost a
// step weighs more against it. A Go loop in benchrun itself, which starts
// the agent as dtree's runner does and does nothing else, is timed in the
// same rounds: the floor for a Go program (readme/performance.md).
//
//	go run ./internal/testchart/benchrun [-runs 7] [-nodes 200] [-agent fake,lean] [-old BIN]
//
// -old times another dtree binary in the same rounds (one built from an
// older commit), so that before and after meet the same machine.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/testchart"
)

func main() {
	runs := flag.Int("runs", 7, "timed runs of each")
	nodes := flag.Int("nodes", 200, "process nodes in the chain")
	agents := flag.String("agent", "fake,lean", "the agents to time, comma-separated: fake, lean")
	old := flag.String("old", "", "another dtree binary to time in the same rounds")
	flag.Parse()
	if err := bench(*runs, *nodes, strings.Split(*agents, ","), *old); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

// agentSetup is one agent's dtree.yaml and the command line the shell loop
// runs for one call.
var agentSetup = map[string]struct{ settings, call string }{
	"fake": {"default_cli: fake\nclis:\n  fake:\n    binary: fakeagent\n    args: [\"{prompt}\"]\n    output: text\n", "fakeagent %q"},
	"lean": {"default_cli: claude\n", "claude -p %q --output-format json"},
}

func bench(runs, nodes int, agents []string, old string) error {
	for _, a := range agents {
		if _, ok := agentSetup[a]; !ok {
			return fmt.Errorf("-agent %s: no such agent; the agents are fake and lean", a)
		}
	}
	if old != "" {
		abs, err := filepath.Abs(old)
		if err != nil {
			return err
		}
		old = abs
	}
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
	// The lean agent runs as the built-in claude, which refuses root
	// without IS_SANDBOX=1 (readme/clis.md#claude); the fake one is a CLI
	// of the bench's own dtree.yaml, which it trusts (DTREE_TRUST,
	// readme/settings.md#trust).
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "IS_SANDBOX=1", "DTREE_TRUST=1")
	// timeIt returns the wall time and the CPU time (user and system, of
	// the process and the children it waited for: the agents).
	timeIt := func(wd, name string, args ...string) (run, cpu time.Duration, err error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = wd, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %v\n%s", name, err, out)
		}
		return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	}
	for _, a := range agents {
		wd := filepath.Join(dir, a)
		if err := os.MkdirAll(wd, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(wd, "chain.csv"), []byte(csv.String()), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(wd, "dtree.yaml"), []byte(agentSetup[a].settings), 0o644); err != nil {
			return err
		}
		// The shell loop gets the same prompt text dtree sends the first
		// step (later steps' prompts add the run so far).
		prompt := "Step 0: summarise the change\n\nWhen you have finished, end your reply with one JSON object."
		loop := fmt.Sprintf(`for i in $(seq %d); do `+agentSetup[a].call+` >/dev/null; done`, nodes, prompt)
		dtreeRun := func(b string) (time.Duration, time.Duration, error) {
			return timeIt(wd, b, "run", "--quiet", "--log-dir", filepath.Join(dir, "logs"), "chain.csv")
		}
		var dt, ot, sh, dc, oc, sc, gl []time.Duration
		for range runs { // interleaved, so drift hits both alike
			d, c, err := dtreeRun(filepath.Join(bin, "dtree"))
			if err != nil {
				return err
			}
			dt, dc = append(dt, d), append(dc, c)
			if old != "" {
				o, c, err := dtreeRun(old)
				if err != nil {
					return err
				}
				ot, oc = append(ot, o), append(oc, c)
			}
			s, c, err := timeIt(wd, "bash", "-c", loop)
			if err != nil {
				return err
			}
			sh, sc = append(sh, s), append(sc, c)
			g, err := goLoop(wd, env, bin, a, prompt, nodes)
			if err != nil {
				return err
			}
			gl = append(gl, g)
		}
		fmt.Printf("%s agent: %d-node chain, %d runs each, interleaved\n", a, nodes, runs)
		fmt.Printf("  dtree run:  %s\n", stats(dt, sh))
		if old != "" {
			fmt.Printf("  old dtree:  %s\n", stats(ot, sh))
		}
		ms := median(sh)
		fmt.Printf("  shell loop: median %s (min %s)\n", ms.Round(time.Millisecond), slices.Min(sh).Round(time.Millisecond))
		fmt.Printf("  Go loop:    median %s (min %s): %.2fx of the shell loop's medians, the floor for a Go program that starts the agent as dtree does\n",
			median(gl).Round(time.Millisecond), slices.Min(gl).Round(time.Millisecond), float64(median(gl))/float64(ms))
		// CPU time moves less than wall time with the machine's load.
		line := fmt.Sprintf("  CPU, median, agents included: dtree %s (%.2fx the loop's)", median(dc).Round(time.Millisecond), float64(median(dc))/float64(median(sc)))
		if old != "" {
			line += fmt.Sprintf(", old dtree %s (%.2fx)", median(oc).Round(time.Millisecond), float64(median(oc))/float64(median(sc)))
		}
		fmt.Printf("%s, shell loop %s\n", line, median(sc).Round(time.Millisecond))
	}
	return nil
}

// goLoop times nodes calls of the agent from this process, started as
// dtree's runner starts one (internal/agent's Run: its own process group,
// the parent-death signal from a locked thread, stdin /dev/null, stdout
// and stderr read through pipes, a context and a wait delay), and nothing
// else: what a Go program pays to start the agent, against which dtree's
// own work a step shows.
func goLoop(wd string, env []string, bin, agent, prompt string, nodes int) (time.Duration, error) {
	argv := map[string][]string{
		"fake": {filepath.Join(bin, "fakeagent"), prompt},
		"lean": {filepath.Join(bin, "claude"), "-p", prompt, "--output-format", "stream-json", "--verbose"},
	}[agent]
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	start := time.Now()
	for range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdin, cmd.WaitDelay = wd, env, null, 5*time.Second
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = struct{ io.Writer }{&out}, struct{ io.Writer }{&errs} // through pipes, as dtree's
		cmd.SysProcAttr = procAttr()
		runtime.LockOSThread()
		err := cmd.Run()
		runtime.UnlockOSThread()
		cancel()
		if err != nil {
			return 0, fmt.Errorf("%s: %v\n%s%s", argv[0], err, out.Bytes(), errs.Bytes())
		}
	}
	return time.Since(start), nil
}

// stats says one dtree's median and minimum and their ratios to the shell
// loop's. The ratio of the minima is the least touched by other work on
// the machine; the ratio of the medians is the one the target is set on
// (readme/performance.md#running-a-chart).
func stats(d, sh []time.Duration) string {
	md, ms := median(d), median(sh)
	return fmt.Sprintf("median %s (min %s): %.2fx of medians, %.2fx of minima (target at most 1.10x)",
		md.Round(time.Millisecond), slices.Min(d).Round(time.Millisecond),
		float64(md)/float64(ms), float64(slices.Min(d))/float64(slices.Min(sh)))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
