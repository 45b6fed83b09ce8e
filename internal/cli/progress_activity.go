package cli

import (
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// What the agent is doing (readme/run.md#what-the-agent-is-doing): the
// progress hears each activity of the agent's stream as it arrives
// (run.Watcher), for the live line, and every event the run writes
// (run.Listener), of which it prints the tool calls with -v and, under
// GitHub Actions, inside the step's group.

var (
	_ run.Watcher  = (*progress)(nil)
	_ run.Listener = (*progress)(nil)
)

// doingNow is what the live line says the agent is doing: its latest
// tool call, its turns, and the call's tokens and cost so far.
type doingNow struct {
	tool  string // "Bash go test ./...", "" before the first
	turns int
	usage types.Usage
}

// Activity takes what the agent's stream said; the live line shows it at
// its next redraw (every second), so a stream of thousands of events a
// second costs a lock each, not a terminal write.
func (p *progress) Activity(n *types.ProcessedNode, attempt int, cli, purpose string, a agent.Activity) {
	if !p.live {
		return
	}
	// Not p.mu, which a write to a stuck terminal may hold: the agent's
	// output is read on, and the line catches up when it is drawn.
	l := p.cur.Load() // the branch the call is of (OnBranch)
	p.nowMu.Lock()
	defer p.nowMu.Unlock()
	if a.Kind == agent.ActivityTool {
		l.step.now.tool = strings.TrimSpace(a.Tool + " " + a.Arg)
	}
	l.step.now.turns, l.step.now.usage = a.Turns, a.Usage
}

// Event prints the run's tool_call events as lines under the step: with
// -v, and under GitHub Actions, where they fold into the step's group.
func (p *progress) Event(ev runlog.Event) {
	if a, ok := ev.(runlog.ApprovalAsked); ok {
		p.asked = a.Resume // the notice of the gate's end says it
	}
	if !p.verbose && !p.actions {
		return
	}
	switch e := ev.(type) {
	case runlog.ToolCall:
		mark := map[string]string{runlog.ToolOK: "✓", runlog.ToolError: "✗", runlog.ToolUnfinished: "…"}[e.Status]
		line := strings.TrimSpace(e.Tool + " " + e.Arg)
		if e.Status == runlog.ToolUnfinished {
			line += " (unfinished)"
		}
		if e.Purpose != agent.PurposeRun {
			line += " (" + e.Purpose + ")"
		}
		p.printf("    %s %s\n", mark, p.mask(line))
	case runlog.ToolCallsLeftOut:
		p.printf("    … %s more tool calls, not shown (events.jsonl counts them: tool_calls_left_out)\n", types.Thousands(int64(e.LeftOut)))
	}
}

// liveLine is step s's live line fitted to cols columns (0: unknown),
// the elapsed time at its end: the node, what the agent is doing, its
// turns, tokens and cost. When it does not fit, the node's text goes
// first (down to its id), then the figures are shortened, then the tool
// call is cut, then the figures go.
func (p *progress) liveLine(s *liveStep, cols int, elapsed string) string {
	p.nowMu.Lock()
	now := s.now
	p.nowMu.Unlock()
	head, id := p.sym(visible(s.line)), p.sym(visible(s.id))
	doing, long, short := "", "", ""
	if now.tool != "" {
		doing = p.sym(" · " + visible(p.mask(now.tool)))
	}
	if now.turns > 0 || now.usage.InputTokens != nil || now.usage.OutputTokens != nil {
		long, short = p.sym(figures(now, false)), p.sym(figures(now, true))
	}
	if cols <= 0 {
		return head + doing + long + elapsed
	}
	room := cols - 1 - textWidth(elapsed) // the last column is left free (drawLive)
	rest := doing + long
	if textWidth(head)+textWidth(rest) <= room {
		return head + rest + elapsed
	}
	if textWidth(id)+textWidth(rest) <= room {
		return fitWidth(head, room-textWidth(rest), p.ascii) + rest + elapsed
	}
	const minTool = 10 // columns of the tool call worth keeping before the figures
	for _, figs := range []string{long, short, ""} {
		left := room - textWidth(id) - textWidth(figs)
		if doing == "" && left >= 0 || doing != "" && left >= minTool || figs == "" {
			return fitWidth(id+fitWidth(doing, left, p.ascii)+figs, room, p.ascii) + elapsed
		}
	}
	return fitWidth(id, room, p.ascii) + elapsed
}

// sym is s with dtree's symbols in ASCII when the locale wants them.
func (p *progress) sym(s string) string {
	if p.ascii {
		return string(asciiSymbols([]byte(s)))
	}
	return s
}

// figures are the turns, tokens and cost of the call so far: " · turn 4
// · 12.3k tokens · $0.04", or short, " · t4 · 12.3k · $0.04".
func figures(d doingNow, short bool) string {
	var parts []string
	if d.turns > 0 {
		if short {
			parts = append(parts, fmt.Sprintf("t%d", d.turns))
		} else {
			parts = append(parts, fmt.Sprintf("turn %d", d.turns))
		}
	}
	if d.usage.InputTokens != nil || d.usage.OutputTokens != nil {
		var n int64
		if d.usage.InputTokens != nil {
			n += *d.usage.InputTokens
		}
		if d.usage.OutputTokens != nil {
			n += *d.usage.OutputTokens
		}
		if short {
			parts = append(parts, compact(n))
		} else {
			parts = append(parts, compact(n)+" tokens")
		}
	}
	if c := d.usage.CostUSD; c != nil {
		parts = append(parts, fmt.Sprintf("$%.2f", *c))
	}
	if len(parts) == 0 {
		return ""
	}
	return " · " + strings.Join(parts, " · ")
}

// compact is a count in at most 5 characters: 950, 12.3k, 1.2M.
func compact(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 100_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	case n < 100_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	}
	return fmt.Sprintf("%dM", n/1_000_000)
}
