package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/ci"
	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/internal/run"
	"golang.org/x/term"
)

// An approval gate on a terminal (readme/charts.md#approval-gates):
// when stdin and stderr are a terminal, and the run prints no --json,
// dtree stops the live line at a gate, shows the gate's text, the run so
// far and what changed, and asks approve or reject.

// gatePrompt asks a gate's answer at the terminal: it writes to the
// progress's writer and reads lines from in, one reader for the run.
type gatePrompt struct {
	p     *progress
	in    io.Reader
	lines chan string // closed at the end of in (Ctrl-D)
}

// asksAtTerminal says whether a run's gates ask at the terminal: stdin
// and stderr a terminal, not under GitHub Actions, and no --json (its
// output is for a program, which answers with dtree resume).
func (a *App) asksAtTerminal(json bool) bool {
	return stdinTerminal(a.In) && isTerminal(a.Err, a.Getenv) && !a.inActions() && !json
}

// stdinTerminal says whether r is a terminal a person types at.
func stdinTerminal(r io.Reader) bool {
	f, ok := r.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// readLines starts the run's one reader of in: a read cut short by a
// timeout or an interrupt leaves its line to the next prompt.
func (g *gatePrompt) readLines() {
	if g.lines != nil {
		return
	}
	g.lines = make(chan string)
	go func() {
		defer close(g.lines)
		s := bufio.NewScanner(g.in)
		s.Buffer(make([]byte, 0, 4096), 64<<10)
		for s.Scan() {
			g.lines <- s.Text()
		}
	}()
}

// say prints to the terminal, made inert: a chart's or an agent's text
// drives no terminal (errors.go).
func (g *gatePrompt) say(format string, args ...any) {
	fmt.Fprint(g.p.w, visible(g.p.mask(fmt.Sprintf(format, args...))))
}

// ask is run.Approval.Ask: "" for the answer when in ended (the run then
// waits, as off a terminal).
func (g *gatePrompt) ask(ctx context.Context, gt run.Gate) (string, string, error) {
	g.p.pauseLive()
	defer g.p.resumeLive()
	g.say("⏸ %s waits for your approval:\n", gt.Node)
	for _, l := range strings.Split(strings.TrimSpace(gt.Text), "\n") {
		g.say("  %s\n", l)
	}
	if len(gt.SoFar) > 0 {
		g.say("the run so far:\n")
		for _, l := range gt.SoFar {
			g.say("  %s\n", l)
		}
	}
	if gt.Change != nil {
		since := "the run started"
		if gt.SinceGate {
			since = "the last gate"
		}
		g.say("changed since %s: %s\n", since, ci.ChangeBrief(gt.Change))
	}
	var expired <-chan time.Time
	if gt.Timeout > 0 {
		t := time.NewTimer(gt.Timeout)
		defer t.Stop()
		expired = t.C
		g.say("(no answer in %s rejects it)\n", gt.Timeout)
	}
	// What was typed before the gate asked (type-ahead while agents ran,
	// before the first gate too) answers no gate: the terminal's input
	// not yet read is flushed, and a line read since the last gate's
	// question dropped.
	if f, ok := g.in.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		_ = tcflush(int(f.Fd()))
	}
	for drained := g.lines == nil; !drained; {
		select {
		case _, ok := <-g.lines:
			drained = !ok
		default:
			drained = true
		}
	}
	g.readLines()
	// line reads the next line; done when the gate has its answer.
	line := func(prompt string) (string, string, bool, error) {
		g.say("%s", prompt)
		select {
		case l, ok := <-g.lines:
			if !ok {
				g.say("\n")
				return "", "", true, nil // no answer: the run waits
			}
			return strings.TrimSpace(l), "", false, nil
		case <-expired:
			why := "no answer in " + gt.Timeout.String()
			g.say("\n%s: rejected\n", why)
			return "", why, true, nil
		case <-ctx.Done():
			g.say("\n")
			return "", "", true, ctx.Err()
		}
	}
	answer := ""
	for answer == "" {
		l, why, done, err := line("approve or reject? [a/r] ")
		if done {
			if why != "" {
				return run.Reject, why, err
			}
			return "", "", err
		}
		switch c := response.CleanLabel(l); {
		case c == "a" || c == "y" || slices.Contains(response.ApprovedWords, c):
			answer = run.Approve
		case c == "r" || c == "n" || slices.Contains(response.RejectedWords, c):
			answer = run.Reject
		}
	}
	prompt := "reason (optional, Enter for none): "
	if answer == run.Reject {
		prompt = "reason (required): "
	}
	for {
		l, why, done, err := line(prompt)
		if done {
			if why != "" {
				return run.Reject, why, err
			}
			return "", "", err
		}
		if l != "" || answer == run.Approve {
			return answer, l, nil
		}
	}
}

// pauseLive takes the live block off the terminal while a gate asks; the
// tick draws nothing until resumeLive.
func (p *progress) pauseLive() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && len(p.drawnW) > 0 {
		p.eraseLive()
	}
	p.paused = true
}

// resumeLive puts the live block back, its steps' ends to be printed.
func (p *progress) resumeLive() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = false
}
