package agent_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/dtree-dev/dtree/internal/agent"
)

// maxRunBytes is what one agent.Run may allocate (BenchmarkRun).
const maxRunBytes = 32 << 10

// BenchmarkRun is one agent call through Run, against the same call made
// with a bare exec.Command: the difference is what the runner adds per
// call (lookup, process group, streaming, tails, reading the answer).
// benchrun measures the whole walk against a shell loop.
func BenchmarkRun(b *testing.B) {
	const answer = `{"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": []}` + "\n"
	env := append(os.Environ(), "FAKE_MODE=print", "FAKE_STDOUT="+answer)
	b.Run("agent.Run", func(b *testing.B) {
		def := agent.Definition{Name: "fake", Binary: fakeAgent, Args: []string{"{prompt}"}, Output: agent.OutputText}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			_, err := agent.Run(context.Background(), agent.Call{Def: def, Prompt: "Step 0: summarise the change",
				Dir: os.TempDir(), Env: env, Timeout: 0, Output: io.Discard})
			if err != nil {
				b.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		// A budget that counts, so that a loaded machine does not move it:
		// io.Copy's two 32 KiB buffers a call, before output.go's ReadFrom,
		// passed it (78 KB a call against 10 KB).
		if perCall := (after.TotalAlloc - before.TotalAlloc) / uint64(b.N); perCall > maxRunBytes {
			b.Errorf("agent.Run allocates %d bytes a call, over the budget of %d", perCall, maxRunBytes)
		}
	})
	b.Run("exec.Command", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(fakeAgent, "Step 0: summarise the change")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr, cmd.Env, cmd.Dir = &out, &errb, env, os.TempDir()
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
