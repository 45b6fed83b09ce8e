// Command benchstream measures what reading an agent's event stream costs
// dtree's memory (readme/performance.md#memory-while-an-agent-streams):
// a one-node chart whose agent (the fake agent, internal/testagent, as a
// CLI with output: stream-json) streams 1 GiB of Claude Code's stream-json,
// Edit tool calls of a 4 KiB input each, against the same agent printing 1
// GiB of plain text (output: text), the figure from before streams were
// read (17 MB). It reports each run's wall and CPU time, dtree's peak RSS
// (getrusage of the child), and what the stream run wrote: its
// tool_call events, its stream file and long.log. It asserts nothing.
//
//	go run ./internal/testchart/benchstream [-bytes 1073741824] [-runs 1]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dtree-dev/dtree/internal/testchart"
)

const chart = `nodes:
  - id: work
    text: Do the work.
    tags: [NoValidation]
`

const settings = `clis:
  streamy:
    binary: fakeagent
    args: ["{prompt}"]
    output: stream-json
  texty:
    binary: fakeagent
    args: ["{prompt}"]
    output: text
`

func main() {
	size := flag.Int64("bytes", 1<<30, "what the agent prints")
	runs := flag.Int("runs", 1, "runs of each")
	flag.Parse()
	if err := bench(*size, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "benchstream:", err)
		os.Exit(1)
	}
}

type result struct {
	wall, cpu time.Duration
	rss       int64
	dir       string
}

func bench(size int64, runs int) error {
	dir, err := os.MkdirTemp("", "dtree-benchstream-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := testchart.BuildTools(dir)
	if err != nil {
		return err
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	for name, text := range map[string]string{
		"chart.yaml":  chart,
		"dtree.yaml":  settings,
		"stream.json": fmt.Sprintf(`[{"stream": true, "stream_bytes": %d}]`, size),
		"text.json":   fmt.Sprintf(`[{"print_bytes": %d}]`, size),
	} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("an agent printing %s, %d run(s) each, interleaved\n", mib(size), runs)
	for i := range runs {
		for _, c := range []struct{ cli, script, what string }{
			{"texty", "text.json", "plain text (output: text)"},
			{"streamy", "stream.json", "stream-json, Edit calls of 4 KiB"},
		} {
			r, err := runOnce(bin, work, c.cli, c.script, i)
			if err != nil {
				return err
			}
			fmt.Printf("  %-34s wall %6.2fs  CPU %6.2fs  peak RSS %s\n", c.what, r.wall.Seconds(), r.cpu.Seconds(), mib(r.rss))
			if c.cli == "streamy" && i == runs-1 {
				describe(r.dir)
			}
		}
	}
	return nil
}

func runOnce(bin, work, cli, script string, i int) (result, error) {
	logs := filepath.Join(work, fmt.Sprintf("logs-%s-%d", cli, i))
	cmd := exec.Command(filepath.Join(bin, "dtree"), "run", "--cli", cli, "--log-dir", logs, "chart.yaml")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DTREE_TRUST=1",
		"FAKEAGENT_SCRIPT="+filepath.Join(work, script), "DTREE_WRITE_LOG_GRAPH=false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start), dir: filepath.Join(logs, "latest")}
	if err != nil {
		return r, fmt.Errorf("dtree run --cli %s: %v\n%s", cli, err, stderr.Bytes())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = int64(ru.Maxrss) * 1024 // KB on Linux
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, nil
}

// describe says what the stream run kept.
func describe(dir string) {
	b, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	fmt.Printf("    events.jsonl: %d tool_call events, %d tool_calls_left_out, %s\n",
		bytes.Count(b, []byte(`"event":"tool_call"`)), bytes.Count(b, []byte(`"event":"tool_calls_left_out"`)), mib(int64(len(b))))
	if i := bytes.Index(b, []byte(`"left_out":`)); i >= 0 {
		end := bytes.IndexByte(b[i:], ',')
		fmt.Printf("    %s\n", b[i:i+end])
	}
	for _, f := range []string{"streams/work.v1.a1.run.jsonl", "long.log"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			fmt.Printf("    %s: %s\n", f, mib(st.Size()))
		}
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
