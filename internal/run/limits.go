package run

import (
	"container/list"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// limiter holds what a run's branches share of their calls
// (readme/parallel.md#limits): at most n agent calls and command steps at
// once (--parallel), and each CLI's backoff, which a rate limit one
// branch met sets for every branch's calls to that CLI. It is safe for
// concurrent use; what it holds grows with the CLIs the run names and
// the calls waiting, no more.
type limiter struct {
	n   int
	now func() time.Time
	// after is a timer: its channel, and what stops it. Tests give a fake
	// clock's.
	after func(d time.Duration) (<-chan time.Time, func() bool)

	mu      sync.Mutex
	used    int                  // slots taken, at most n
	waiters list.List            // of *slotWaiter, first come first served
	resume  map[string]time.Time // by CLI: no call to it before then
}

// slotWaiter is a call waiting for a slot; ready is closed when a
// released slot is handed to it.
type slotWaiter struct{ ready chan struct{} }

// newLimiter returns a limiter of n slots (types.DefaultParallel when n
// is below 1) that reads the time with now (time.Now when nil).
func newLimiter(n int, now func() time.Time) *limiter {
	if n < 1 {
		n = types.DefaultParallel
	}
	l := &limiter{n: n, now: now, resume: map[string]time.Time{}}
	if l.now == nil {
		l.now = time.Now
	}
	l.after = func(d time.Duration) (<-chan time.Time, func() bool) {
		t := time.NewTimer(d)
		return t.C, t.Stop
	}
	return l
}

// acquire waits for a slot, and, for a call to cli, until cli's backoff
// has passed; cli "" (a command step) waits for a slot only. It returns
// what gives the slot back, which may be called more than once, or
// ctx.Err() when ctx ends first (no slot is then held). A call waiting
// for cli's backoff holds no slot, so the other CLIs' calls go on
// meanwhile; one that got its slot while a new backoff was set gives it
// back and waits again.
func (l *limiter) acquire(ctx context.Context, cli string) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err // a stopped run starts nothing
	}
	for {
		if l.tryTake(cli) {
			return l.releaser(), nil
		}
		if err := l.waitBackoff(ctx, cli); err != nil {
			return nil, err
		}
		if err := l.take(ctx); err != nil {
			return nil, err
		}
		if l.wait(cli) <= 0 {
			return l.releaser(), nil
		}
		l.give() // a backoff came while it waited for the slot
	}
}

// tryTake takes a free slot at once, when no call waits for one before
// it and cli is not backing off: acquire's way when nothing contends,
// one lock and no clock read unless cli has a backoff on record.
func (l *limiter) tryTake(cli string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used >= l.n || l.waiters.Len() > 0 {
		return false
	}
	if r, ok := l.resume[cli]; ok && cli != "" {
		if r.After(l.now()) {
			return false
		}
		delete(l.resume, cli) // passed: the map keeps only backoffs to come
	}
	l.used++
	return true
}

// take waits for a slot, in turn.
func (l *limiter) take(ctx context.Context) error {
	l.mu.Lock()
	if l.used < l.n && l.waiters.Len() == 0 {
		l.used++
		l.mu.Unlock()
		return nil
	}
	w := &slotWaiter{ready: make(chan struct{})}
	e := l.waiters.PushBack(w)
	l.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	select {
	case <-w.ready:
		// Handed a slot as ctx ended: it goes to the next in turn.
		l.mu.Unlock()
		l.give()
	default:
		l.waiters.Remove(e)
		l.mu.Unlock()
	}
	return ctx.Err()
}

// give gives a slot back: to the first call waiting for one, else free.
func (l *limiter) give() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pass()
}

// pass is give with l.mu held.
func (l *limiter) pass() {
	if e := l.waiters.Front(); e != nil {
		close(l.waiters.Remove(e).(*slotWaiter).ready) // the slot passes on: used stays
		return
	}
	l.used--
}

// releaser is a slot's release: the first call gives the slot back, any
// later one does nothing.
func (l *limiter) releaser() func() {
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			l.give()
		}
	}
}

// waitBackoff waits until cli's backoff has passed, however often it is
// put off meanwhile.
func (l *limiter) waitBackoff(ctx context.Context, cli string) error {
	for {
		d := l.wait(cli)
		if d <= 0 {
			return nil
		}
		c, stop := l.after(d)
		select {
		case <-c:
		case <-ctx.Done():
			stop()
			return ctx.Err()
		}
	}
}

// backoff says that no call to cli starts for d from now, in any branch:
// a branch met a rate limit of cli's. A backoff already set to end later
// stays.
func (l *limiter) backoff(cli string, d time.Duration) {
	if cli == "" || d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := l.now().Add(d); until.After(l.resume[cli]) {
		l.resume[cli] = until
	}
}

// wait is how long a call to cli would wait for its backoff now, 0 when
// none is set or it has passed; the wait for a slot is not in it.
func (l *limiter) wait(cli string) time.Duration {
	if cli == "" {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.resume[cli]
	if !ok {
		return 0
	}
	return max(r.Sub(l.now()), 0)
}

// limitCLI is the CLI whose backoff a call waits out, acquire's cli: ""
// for a command step, whose shell is no CLI that rate-limits.
func limitCLI(def agent.Definition, purpose string) string {
	if purpose == agent.PurposeCommand {
		return ""
	}
	return def.Name
}

// rateLimitWords are how the CLIs and model APIs say a call was refused
// for its rate (readme/clis.md#quota): HTTP 429 (gemini's exit status 173
// reads "rate limited (HTTP 429)"), Anthropic's rate_limit_error, OpenAI's
// rate_limit_exceeded, codex's "429 Too Many Requests", Google's
// RESOURCE_EXHAUSTED ("Resource has been exhausted (e.g. check quota)"),
// copilot's "You have exceeded your rate limit".
var rateLimitWords = []string{"429", "rate limit", "rate_limit", "ratelimit", "too many requests",
	"resource has been exhausted", "resource_exhausted"}

// isRateLimit reports whether an agent call's error is a rate limit: one
// that is retried after a backoff, which every branch's calls to the same
// CLI then wait out (limiter.backoff). A spent quota is not one (it is
// permanent: agent.PermanentQuota, and a fallback CLI goes on at once),
// nor a timeout, a CLI not found, a stopped call or a budget reached.
func isRateLimit(err error) bool {
	var ae *agent.AgentError
	if !errors.As(err, &ae) || ae.Permanent != "" || ae.TimedOut || ae.Stop != nil {
		return false
	}
	said := strings.ToLower(ae.Reason + "\n" + ae.StderrTail)
	for _, w := range rateLimitWords[1:] {
		if strings.Contains(said, w) {
			return true
		}
	}
	return hasStatus(said, rateLimitWords[0])
}

// hasStatus reports whether s holds the number code standing alone: not
// inside a longer one ("14290 tokens"), nor a line number in a stack
// trace ("cli.js:429:17").
func hasStatus(s, code string) bool {
	at := func(j int, set string) bool { return j >= 0 && j < len(s) && strings.IndexByte(set, s[j]) >= 0 }
	const digits = "0123456789"
	for from := 0; ; {
		i := strings.Index(s[from:], code)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(code)
		if !at(i-1, digits) && !at(j, digits) && !(at(i-1, ":") && at(j, ":")) {
			return true
		}
		from = i + 1
	}
}
