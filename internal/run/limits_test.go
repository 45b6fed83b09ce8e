package run

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// fakeClock is a clock that moves only when told, with timers that fire
// when it passes their time.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)} }

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) after(d time.Duration) (<-chan time.Time, func() bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan time.Time, 1)
	f.timers = append(f.timers, fakeTimer{at: f.t.Add(d), c: c})
	return c, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, t := range f.timers {
			if t.c == c {
				f.timers = append(f.timers[:i], f.timers[i+1:]...)
				return true
			}
		}
		return false
	}
}

// advance moves the clock on by d, firing the timers it passes.
func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
	kept := f.timers[:0]
	for _, t := range f.timers {
		if t.at.After(f.t) {
			kept = append(kept, t)
			continue
		}
		t.c <- f.t
	}
	f.timers = kept
}

// pending is how many timers wait.
func (f *fakeClock) pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

func fakeLimiter(n int) (*limiter, *fakeClock) {
	c := newFakeClock()
	l := newLimiter(n, c.now)
	l.after = c.after
	return l, c
}

// acquireAsync starts acquire in a goroutine; its result comes on the
// channel.
func acquireAsync(ctx context.Context, l *limiter, cli string) <-chan error {
	done := make(chan error, 1)
	go func() {
		release, err := l.acquire(ctx, cli)
		if err == nil {
			defer release()
		}
		done <- err
	}()
	return done
}

func queued(l *limiter) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiters.Len()
}

func inUse(l *limiter) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
}

func TestLimiterDefault(t *testing.T) {
	for _, n := range []int{0, -3} {
		assert.Equal(t, types.DefaultParallel, newLimiter(n, nil).n, "n %d", n)
	}
	assert.Equal(t, 2, newLimiter(2, nil).n)
}

// A rate limit one branch met holds every branch's next call to that CLI
// until the backoff passes, and no other CLI's.
func TestLimiterBackoffHoldsTheCLIOnly(t *testing.T) {
	l, clock := fakeLimiter(4)
	ctx := context.Background()
	l.backoff("claude", 10*time.Second)
	assert.Equal(t, 10*time.Second, l.wait("claude"))
	assert.Zero(t, l.wait("codex"))
	assert.Zero(t, l.wait(""), "a command step never backs off")

	rel, err := l.acquire(ctx, "codex")
	require.NoError(t, err, "another CLI goes on")
	rel()
	rel, err = l.acquire(ctx, "")
	require.NoError(t, err, "a command step goes on")
	rel()

	done := acquireAsync(ctx, l, "claude")
	require.Eventually(t, func() bool { return clock.pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.advance(6 * time.Second)
	assert.Equal(t, 4*time.Second, l.wait("claude"))
	select {
	case err := <-done:
		t.Fatalf("the call started 4s before its backoff passed (err %v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	assert.Zero(t, inUse(l), "a call waiting out a backoff holds no slot")
	clock.advance(4 * time.Second)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not start once the backoff passed")
	}
	assert.Zero(t, l.wait("claude"))
}

// A backoff only grows: a shorter one set later does not cut it, a
// longer one puts the waiting call off again.
func TestLimiterBackoffTakesTheLater(t *testing.T) {
	l, clock := fakeLimiter(1)
	l.backoff("claude", 8*time.Second)
	l.backoff("claude", 2*time.Second)
	assert.Equal(t, 8*time.Second, l.wait("claude"), "a shorter backoff does not cut a longer one")
	l.backoff("claude", 0)
	l.backoff("", time.Hour)
	assert.Equal(t, 8*time.Second, l.wait("claude"))
	assert.Zero(t, l.wait(""))

	done := acquireAsync(context.Background(), l, "claude")
	require.Eventually(t, func() bool { return clock.pending() == 1 }, 5*time.Second, time.Millisecond)
	clock.advance(5 * time.Second)
	l.backoff("claude", 10*time.Second) // another branch met the limit again
	clock.advance(3 * time.Second)      // the first backoff's end: the call waits on
	require.Eventually(t, func() bool { return clock.pending() == 1 }, 5*time.Second, time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the call started before the later backoff passed (err %v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	assert.Equal(t, 7*time.Second, l.wait("claude"))
	clock.advance(7 * time.Second)
	require.NoError(t, <-done)
}

// A call that got its slot while a new backoff of its CLI was set gives
// the slot back and waits the backoff out.
func TestLimiterBackoffSetWhileWaitingForASlot(t *testing.T) {
	l, clock := fakeLimiter(1)
	ctx := context.Background()
	hold, err := l.acquire(ctx, "codex")
	require.NoError(t, err)
	done := acquireAsync(ctx, l, "claude")
	require.Eventually(t, func() bool { return queued(l) == 1 }, 5*time.Second, time.Millisecond)
	l.backoff("claude", 3*time.Second)
	hold()
	require.Eventually(t, func() bool { return clock.pending() == 1 }, 5*time.Second, time.Millisecond)
	assert.Zero(t, inUse(l), "the slot was given back while the call waits out the backoff")
	other, err := l.acquire(ctx, "codex")
	require.NoError(t, err, "another CLI's call takes the slot meanwhile")
	other()
	clock.advance(3 * time.Second)
	require.NoError(t, <-done)
	assert.Zero(t, inUse(l))
}

// 16 branches calling at once never run more than N calls.
func TestLimiterNeverExceedsN(t *testing.T) {
	const n, goroutines, calls = 3, 16, 200
	l := newLimiter(n, nil)
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			cli := []string{"claude", "codex", ""}[g%3]
			for range calls {
				release, err := l.acquire(context.Background(), cli)
				if !assert.NoError(t, err) {
					return
				}
				now := running.Add(1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				time.Sleep(10 * time.Microsecond)
				running.Add(-1)
				release()
				release() // idempotent: frees nothing more
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, most.Load(), int32(n))
	assert.Equal(t, int32(n), most.Load(), "the slots were all used at some point")
	assert.Zero(t, inUse(l))
	assert.Zero(t, queued(l))
}

// A release called twice gives back one slot, not two.
func TestLimiterReleaseIdempotent(t *testing.T) {
	l := newLimiter(1, nil)
	ctx := context.Background()
	r, err := l.acquire(ctx, "claude")
	require.NoError(t, err)
	r()
	r()
	assert.Zero(t, inUse(l))
	r1, err := l.acquire(ctx, "claude")
	require.NoError(t, err)
	stop, cancel := context.WithCancel(ctx)
	done := acquireAsync(stop, l, "claude")
	require.Eventually(t, func() bool { return queued(l) == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled, "the second call waits: one slot, taken")
	r1()
}

// Cancelling a run ends every wait, for a slot or for a backoff, with the
// context's error, and leaves no slot taken.
func TestLimiterCancelReleasesWaiters(t *testing.T) {
	l, clock := fakeLimiter(1)
	hold, err := l.acquire(context.Background(), "claude")
	require.NoError(t, err)
	l.backoff("codex", time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	var waits []<-chan error
	for i := range 5 {
		waits = append(waits, acquireAsync(ctx, l, []string{"claude", "", "codex", "claude", "gemini"}[i]))
	}
	require.Eventually(t, func() bool { return queued(l) == 4 && clock.pending() == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	for _, w := range waits {
		select {
		case err := <-w:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("a waiting call did not end with the run")
		}
	}
	assert.Zero(t, queued(l))
	assert.Zero(t, clock.pending(), "the backoff's timer was stopped")
	hold()
	assert.Zero(t, inUse(l))
	_, err = l.acquire(ctx, "claude")
	require.ErrorIs(t, err, context.Canceled, "a stopped run starts no call, even with a slot free")
	assert.Zero(t, inUse(l))
}

// A slot handed to a call just as its context ends goes to the next call
// in turn: none is lost, whichever wins the race.
func TestLimiterCancelRacingRelease(t *testing.T) {
	l := newLimiter(1, nil)
	for range 500 {
		hold, err := l.acquire(context.Background(), "claude")
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := acquireAsync(ctx, l, "claude")
		next := acquireAsync(context.Background(), l, "claude")
		require.Eventually(t, func() bool { return queued(l) == 2 }, 5*time.Second, time.Microsecond)
		go cancel()
		hold()
		if err := <-done; err != nil {
			require.ErrorIs(t, err, context.Canceled)
		}
		require.NoError(t, <-next, "the slot reached the next call")
		cancel()
		require.Eventually(t, func() bool { return inUse(l) == 0 }, 5*time.Second, time.Microsecond)
	}
}

// The same race, made to happen: the call's context ends, and the slot
// is handed to it before it can leave the line. It passes the slot on.
func TestLimiterSlotHandedToACancelledCall(t *testing.T) {
	l := newLimiter(1, nil)
	for range 20 {
		_, err := l.acquire(context.Background(), "claude")
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := acquireAsync(ctx, l, "claude")
		require.Eventually(t, func() bool { return queued(l) == 1 }, 5*time.Second, time.Millisecond)
		l.mu.Lock()
		cancel()
		time.Sleep(5 * time.Millisecond) // the call wakes on its context, and waits for the lock
		l.pass()                         // the holder's release, just then
		l.mu.Unlock()
		require.ErrorIs(t, <-done, context.Canceled)
		require.Zero(t, inUse(l), "the slot handed to the cancelled call was lost")
	}
}

// Calls that wait for a slot get one in the order they came.
func TestLimiterFirstComeFirstServed(t *testing.T) {
	l := newLimiter(1, nil)
	ctx := context.Background()
	hold, err := l.acquire(ctx, "claude")
	require.NoError(t, err)
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			r, err := l.acquire(ctx, "claude")
			if assert.NoError(t, err) {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				r()
			}
		})
		require.Eventually(t, func() bool { return queued(l) == i+1 }, 5*time.Second, time.Millisecond)
	}
	hold()
	wg.Wait()
	assert.Equal(t, []int{0, 1, 2, 3, 4}, order)
}

// Thousands of calls waiting at once (a fork of as many branches) are
// served in time linear in their number: the line is a list, each wait
// and hand-over O(1).
func TestLimiterManyWaiters(t *testing.T) {
	const callers = 5000 // under the race detector's 8,128 live goroutines
	l := newLimiter(4, nil)
	var holds []func()
	for range 4 {
		hold, err := l.acquire(context.Background(), "claude")
		require.NoError(t, err)
		holds = append(holds, hold)
	}
	var wg sync.WaitGroup
	var served atomic.Int32
	for range callers {
		wg.Go(func() {
			r, err := l.acquire(context.Background(), "claude")
			if assert.NoError(t, err) {
				served.Add(1)
				r()
			}
		})
	}
	require.Eventually(t, func() bool { return queued(l) == callers }, 10*time.Second, time.Millisecond)
	start := time.Now()
	for _, hold := range holds {
		hold()
	}
	wg.Wait()
	assert.Equal(t, int32(callers), served.Load())
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Zero(t, inUse(l))
	assert.Zero(t, queued(l))
}

// The backoffs on record are those still to come: a CLI whose backoff has
// passed leaves the map at its next call.
func TestLimiterForgetsPassedBackoffs(t *testing.T) {
	l, clock := fakeLimiter(2)
	for i := range 1000 {
		cli := fmt.Sprintf("cli%d", i)
		l.backoff(cli, time.Second)
		clock.advance(time.Second)
		r, err := l.acquire(context.Background(), cli)
		require.NoError(t, err)
		r()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Empty(t, l.resume)
}

func TestLimitCLI(t *testing.T) {
	claude := agent.Definition{Name: "claude"}
	for _, purpose := range []string{agent.PurposeRun, agent.PurposeValidate} {
		assert.Equal(t, "claude", limitCLI(claude, purpose), purpose)
	}
	assert.Empty(t, limitCLI(agent.Definition{Name: "sh"}, agent.PurposeCommand), "a command step waits for a slot only")
}

func TestIsRateLimit(t *testing.T) {
	ae := func(reason, stderr string) *agent.AgentError {
		return &agent.AgentError{Name: "claude", ExitCode: 1, Reason: reason, StderrTail: stderr}
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"claude API 429", ae(`exited with status 1: API error 429: {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, ""), true},
		{"codex 429", ae("exited with status 1: stream error: exceeded retry limit, last status: 429 Too Many Requests", ""), true},
		{"gemini exit 173", ae("exited with status 173 (rate limited (HTTP 429)): Resource has been exhausted (e.g. check quota).", ""), true},
		{"copilot rate limit", ae("exited with status 1", "Error: You have exceeded your rate limit. Please wait."), true},
		// The reasons agent.Run gives for the envelopes of real CLIs
		// (internal/agent's TestEnvelopeFixtures).
		{"opencode fixture", ae("reported an error: Rate limit exceeded: retry after 60s", ""), true},
		{"copilot fixture", ae("reported an error: You have exceeded your rate limit", "Error: rate limit exceeded (429)"), true},
		{"gemini stream fixture", ae("exited with status 173 (rate limited (HTTP 429)): mock 429: scripted failure for dtree", ""), true},
		{"gemini 500 fixture", ae("exited with status 244 (server error (HTTP 500)): mock 500: scripted failure for dtree", ""), false},
		{"openai rate_limit_exceeded", ae(`exited with status 1: {"code":"rate_limit_exceeded"}`, ""), true},
		{"google RESOURCE_EXHAUSTED", ae("exited with status 1", `"status": "RESOURCE_EXHAUSTED"`), true},
		{"wrapped", fmt.Errorf("attempt 2: %w", ae("exited with status 1: HTTP 429", "")), true},
		{"quota is permanent", &agent.AgentError{Name: "claude", Reason: "exited with status 1: API error 429: You've hit your session limit · resets 3pm", Permanent: agent.PermanentQuota}, false},
		{"timeout", &agent.AgentError{Name: "claude", Reason: "timed out after 10m", TimedOut: true, StderrTail: "429"}, false},
		{"stopped by a budget", &agent.AgentError{Name: "claude", Reason: "stopped", Stop: errors.New("budget"), StderrTail: "rate limit"}, false},
		{"server error", ae("exited with status 1: API error 500: Internal server error", ""), false},
		{"overloaded", ae("exited with status 1: API error 529: Overloaded", ""), false},
		{"a line of a stack trace", ae("exited with status 1", "    at run (/usr/lib/node_modules/cli.js:429:17)"), false},
		{"429 in JSON", ae(`exited with status 1: {"error":{"code":429}}`, ""), true},
		{"429 inside a number", ae("exited with status 1: the prompt has 14290 tokens, over 4290", ""), false},
		{"429 after a number in another", ae("exited with status 2: 1429 and then 429", ""), true},
		{"not found", &agent.NotFoundError{Name: "claude", Binary: "claude"}, false},
		{"plain error", errors.New("rate limit"), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, isRateLimit(tc.err))
		})
	}
}

// BenchmarkLimiterUncontended is acquire and release with nothing else
// waiting, as every agent call of a run without a fork makes them.
func BenchmarkLimiterUncontended(b *testing.B) {
	l := newLimiter(4, nil)
	l.backoff("codex", time.Hour) // a CLI on record, not this one
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		release, err := l.acquire(ctx, "claude")
		if err != nil {
			b.Fatal(err)
		}
		release()
	}
}
