package cli

import (
	"bytes"
	"context"
	"github.com/dtree-dev/dtree/types"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// blockingReader is stdin that never delivers: a chart piped from a
// process that hangs. It closes reading when dtree first reads it.
type blockingReader struct {
	stop    chan struct{}
	reading chan struct{}
	once    *sync.Once
}

func (r blockingReader) Read([]byte) (int, error) {
	r.once.Do(func() { close(r.reading) })
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
			in := blockingReader{stop: stop, reading: make(chan struct{}), once: new(sync.Once)}
			a := &App{In: in, Out: io.Discard, Err: &errb, Getenv: noEnv}
			ctx, cancel := context.WithCancel(context.Background())
			code := make(chan int, 1)
			go func() { code <- a.Run(ctx, args) }()
			select { // the interrupt comes while dtree waits for the chart
			case <-in.reading:
			case <-time.After(time.Minute):
				t.Fatal("dtree never read stdin")
			}
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
