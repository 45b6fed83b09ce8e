package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// progress prints a run's progress on stderr as plain lines: one when a
// node starts, one when it ends, one per failed attempt, and a last line
// with the outcome and where the logs are.
type progress struct {
	w       io.Writer
	quiet   bool
	verbose bool
	mu      sync.Mutex
	started time.Time
}

func newProgress(w io.Writer, quiet, verbose bool) *progress {
	return &progress{w: w, quiet: quiet, verbose: verbose, started: time.Now()}
}

func (p *progress) printf(format string, args ...any) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

func short(text string) string {
	t, _, cut := strings.Cut(text, "\n")
	if r := []rune(t); len(r) > 60 {
		t, cut = string(r[:60]), true
	}
	if cut {
		t += "…"
	}
	return t
}

func (p *progress) NodeStarted(n *types.ProcessedNode, visit int) {
	again := ""
	if visit > 1 {
		again = fmt.Sprintf(" (visit %d)", visit)
	}
	p.printf("→ %s %s [%s, %s]%s\n", n.ID, short(n.Text), n.Role, n.CLI, again)
}

func (p *progress) AttemptStarted(n *types.ProcessedNode, attempt int, cli, purpose string) {
	if p.verbose {
		p.printf("  · %s attempt %d with %s\n", purpose, attempt, cli)
	}
}

func (p *progress) AttemptFailed(n *types.ProcessedNode, attempt int, reason string) {
	// The whole first line: the reason is what the user needs to read.
	r, _, _ := strings.Cut(reason, "\n")
	if rs := []rune(r); len(rs) > 300 {
		r = string(rs[:300]) + "…"
	}
	p.printf("  ✗ attempt %d: %s\n", attempt, r)
}

func (p *progress) NodeFinished(r *run.NodeResult) {
	took := time.Duration(r.DurationMS) * time.Millisecond
	switch {
	case r.Status != run.StatusSucceeded:
		p.printf("✗ %s failed (%s)\n", r.ID, took.Round(time.Millisecond))
	case r.Label != "":
		p.printf("✓ %s → %s (%s)\n", r.ID, r.Label, took.Round(time.Millisecond))
	default:
		p.printf("✓ %s (%s)\n", r.ID, took.Round(time.Millisecond))
	}
}

func (p *progress) finished(s *run.Summary) {
	took := time.Duration(s.DurationMS) * time.Millisecond
	p.printf("dtree: run %s %s: %s in %s; logs in %s\n", s.RunID, s.Status, plural(len(s.Nodes), "step"), took.Round(time.Millisecond), s.Logs.Dir)
}
