package cli

import (
	"bytes"
	"context"
	"github.com/dtree-dev/dtree/types"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// blockingReader is stdin that never delivers: a chart piped from a
// process that hangs.
type blockingReader struct{ stop chan struct{} }

func (r blockingReader) Read([]byte) (int, error) {
	<-r.stop
	return 0, io.EOF
}

func TestInterruptStopsReadingCommands(t *testing.T) {
	t.Parallel()
	// run waits for its work to stop when interrupted, but a chart that
	// never comes is no work: it stops as the others do.
	for _, args := range [][]string{{"lint", "-"}, {"inspect", "-"}, {"run", "-"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			stop := make(chan struct{})
			defer close(stop)
			var errb bytes.Buffer
			a := &App{In: blockingReader{stop}, Out: io.Discard, Err: &errb, Getenv: noEnv}
			ctx, cancel := context.WithCancel(context.Background())
			code := make(chan int, 1)
			go func() { code <- a.Run(ctx, args) }()
			time.Sleep(50 * time.Millisecond)
			cancel()
			select {
			case c := <-code:
				assert.Equal(t, types.ExitInterrupted, c)
				assert.Contains(t, errb.String(), "dtree: interrupted")
			case <-time.After(5 * time.Second):
				t.Fatal("dtree kept waiting for stdin after the interrupt")
			}
		})
	}
}
