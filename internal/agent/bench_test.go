package agent_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/dtree-dev/dtree/internal/agent"
)

// BenchmarkRun is one agent call through Run, against the same call made
// with a bare exec.Command: the difference is what the runner adds per
// call (lookup, process group, streaming, tails, reading the answer).
// benchrun measures the whole walk against a shell loop.
func BenchmarkRun(b *testing.B) {
	const answer = `{"completed": true, "secs_taken": 0, "tokens_used": 0, "comments": []}` + "\n"
	env := append(os.Environ(), "FAKE_MODE=print", "FAKE_STDOUT="+answer)
	b.Run("agent.Run", func(b *testing.B) {
		def := agent.Definition{Name: "fake", Binary: fakeAgent, Args: []string{"{prompt}"}, Output: agent.OutputText}
		for b.Loop() {
			_, err := agent.Run(context.Background(), agent.Call{Def: def, Prompt: "Step 0: summarise the change",
				Dir: os.TempDir(), Env: env, Timeout: 0, Output: io.Discard})
			if err != nil {
				b.Fatal(err)
			}
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
