// Command benchcalls measures what the README's chart (build-green.csv)
// spends on agents: the agent calls it makes and the prompt bytes it sends
// them, on one scripted run, before and after its test step became a
// command step (readme/performance.md#what-a-step-sees). The same fake
// agent answers both runs alike: every decision takes "Yes", and the
// agent that ran the tests before reports what the command prints after.
//
//	go run ./internal/testchart/benchcalls
//
// Tokens are estimated as prompt bytes / 4; a real CLI adds its own system
// prompt to every call, so each call saved saves more than its share.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/dtree-dev/dtree/internal/testchart"
	"os"
	"os/exec"
	"path/filepath"
)

// The charts, from the repository root, and the module they run in.
const (
	before = "testdata/quickstart/bench/build-green-before.csv"
	after  = "testdata/charts/examples/build-green.csv"
	module = "testdata/quickstart/module"
)

// script answers both runs alike.
const script = `[
 {"node": "4", "purpose": "run", "reply": "{\"completed\": true, \"comments\": [\"make test: ok example.com/greet 0.002s\"]}"},
 {"purpose": "decide", "answer": "Yes"}
]`

func main() {
	if err := bench(); err != nil {
		fmt.Fprintln(os.Stderr, "benchcalls:", err)
		os.Exit(1)
	}
}

func bench() error {
	dir, err := os.MkdirTemp("", "dtree-benchcalls-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := testchart.BuildTools(dir)
	if err != nil {
		return err
	}
	write := func(name, content string) error {
		return os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	if err := write("dtree.yaml", "default_cli: fake\nclis:\n  fake:\n    binary: fakeagent\n    prompt_via: stdin\n    output: text\n"); err != nil {
		return err
	}
	if err := write("script.json", script); err != nil {
		return err
	}
	workdir, err := filepath.Abs(module)
	if err != nil {
		return err
	}
	fmt.Printf("%-8s %6s %13s %16s\n", "chart", "calls", "prompt bytes", "~tokens (B/4)")
	for _, c := range []struct{ name, path string }{{"before", before}, {"after", after}} {
		log := filepath.Join(dir, c.name+".jsonl")
		state := filepath.Join(dir, c.name+".state")
		if err := os.Mkdir(state, 0o755); err != nil {
			return err
		}
		cmd := exec.Command(filepath.Join(bin, "dtree"), "run", "--quiet", "--config", filepath.Join(dir, "dtree.yaml"),
			"--log-dir", filepath.Join(dir, "logs"), "--workdir", workdir, c.path)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"FAKEAGENT_SCRIPT="+filepath.Join(dir, "script.json"), "FAKEAGENT_LOG="+log, "FAKEAGENT_STATE="+state)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("dtree run %s: %v\n%s", c.path, err, out)
		}
		calls, bytes, err := count(log)
		if err != nil {
			return err
		}
		fmt.Printf("%-8s %6d %13d %16d\n", c.name, calls, bytes, bytes/4)
	}
	return nil
}

// count reads the fake agent's log: one line per call, with its prompt.
func count(path string) (calls, bytes int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return 0, 0, fmt.Errorf("%s: %v", path, err)
		}
		calls++
		bytes += len(rec.Prompt)
	}
	return calls, bytes, sc.Err()
}
