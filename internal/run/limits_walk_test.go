package run

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
)

const fourBranches = `title: fork of four
nodes:
  - id: start
    kind: start
    text: Start
    next: plan
  - id: plan
    text: Plan the work.
    parallel: [a, b, c, d]
  - {id: a, text: Write a., next: review}
  - {id: b, text: Write b., next: review}
  - {id: c, text: Write c., next: review}
  - {id: d, text: Write d., next: review}
  - id: review
    text: Review the work.
    next: done
  - id: done
    kind: end
    text: Done
`

// --parallel bounds the calls a fork's branches make at once.
func TestForkParallelBoundsCalls(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		var running, most, branchCalls atomic.Int32
		runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
			if c.Request.Node != "plan" && c.Request.Node != "review" {
				branchCalls.Add(1)
			}
			now := running.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			// A branch's call waits (up to 10 s, and not once every
			// branch has called) for another's to run beside it, however
			// long the others take to get their worktrees (made when a
			// branch gets to run); under --parallel 1 none can, and it
			// only waits a moment.
			wait := 10 * time.Second
			if n == 1 || c.Request.Node == "plan" || c.Request.Node == "review" {
				wait = 50 * time.Millisecond
			}
			for end := time.Now().Add(wait); running.Load() < 2 && branchCalls.Load() < 4 && time.Now().Before(end); {
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			running.Add(-1)
			return agent.Result{Answer: done}, nil
		}
		sum, _, _, err := forkRun(t, fourBranches, runner, Options{Parallel: n})
		require.NoError(t, err)
		assert.Equal(t, StatusSucceeded, sum.Status)
		assert.LessOrEqual(t, most.Load(), int32(n), "--parallel %d", n)
		if n > 1 {
			assert.Greater(t, most.Load(), int32(1), "--parallel %d: the branches ran side by side", n)
		}
	}
}

// A rate limit branch a meets holds branch b's next call to the same CLI
// until a's backoff has passed.
func TestForkSharedBackoff(t *testing.T) {
	const backoff = 400 * time.Millisecond
	var (
		mu      sync.Mutex
		aFailed time.Time
		b2At    time.Time
		failed  = make(chan struct{})
		calls   = map[string]int{}
	)
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		mu.Lock()
		calls[c.Request.Node]++
		k := calls[c.Request.Node]
		mu.Unlock()
		switch {
		case c.Request.Node == "a" && k == 1:
			mu.Lock()
			aFailed = time.Now()
			mu.Unlock()
			close(failed)
			return agent.Result{ExitCode: 1}, &agent.AgentError{Name: "fake", ExitCode: 1,
				Reason: `reported an error: API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}`}
		case c.Request.Node == "b":
			<-failed // b's next call comes after a met the rate limit,
			// and the walker heard of it
			time.Sleep(100 * time.Millisecond)
		case c.Request.Node == "b2":
			mu.Lock()
			b2At = time.Now()
			mu.Unlock()
		}
		return agent.Result{Answer: done}, nil
	}
	sum, _, _, err := forkRun(t, forkYAML("all"), runner, Options{Backoff: func(int) time.Duration { return backoff }})
	require.NoError(t, err)
	assert.Equal(t, StatusSucceeded, sum.Status)
	assert.GreaterOrEqual(t, b2At.Sub(aFailed), backoff-50*time.Millisecond, "b's call to the same CLI waited out a's backoff")
}
