package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/dtree-dev/dtree/internal/ci"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// progress prints a run's progress on stderr: a line when a node ends, one
// per failed attempt, and a last line with the outcome and where the logs
// are. On a terminal the running node is a live line (node, CLI, elapsed
// time) redrawn every second; elsewhere it is a plain line when it starts.
type progress struct {
	w       io.Writer
	quiet   bool
	verbose bool
	live    bool
	mu      sync.Mutex
	started time.Time
	// main is the run's own branch, cur the branch the calls are about
	// (OnBranch), lanes and order a fork's branches
	// (progress_branch.go); running counts the steps that run, drawnW
	// the width of each line of the live block as last drawn. A step's
	// doingNow is under nowMu.
	lanes
	nowMu sync.Mutex
	stop  chan struct{}
	// node names a node that runs, for an interrupt's message, and busy
	// how many run; apart from mu, which a write to a stuck stderr may
	// hold.
	node atomic.Pointer[string]
	busy atomic.Int32
	// actions is GitHub Actions' mode (readme/ci.md#github-actions): each
	// step folded in a group with its output, an annotation for a step
	// that failed. chart is the chart's file the annotations point into
	// (at the running node's line, liveStep.src); mask masks a text
	// before it is escaped.
	actions bool
	cmd     io.Writer // for those commands; other lines go to w
	chart   string
	mask    func(string) string
	// cols is the terminal's width now, 0 when unknown: the live line is
	// cut to fit it, as a line that wraps cannot be redrawn in place.
	// ascii is the locale's (locale.go).
	cols  func() int
	ascii bool
	// rows is the terminal's height now, 0 when unknown: the live block
	// of a fork's branches stays a row shorter, as the cursor cannot go
	// up past the top to erase it.
	rows func() int
	// asked is how to answer the approval gate the run stopped at, from
	// its approval_asked event.
	asked string
	// paused is set while a gate asks on the terminal (gateprompt.go):
	// no live line is drawn.
	paused bool
}

// clearLine returns to the start of the line and erases it.
const clearLine = "\r\x1b[2K"

func newProgress(w io.Writer, quiet, verbose, live bool) *progress {
	p := &progress{w: &untilError{w: w}, quiet: quiet, verbose: verbose, live: live && !quiet, started: time.Now(), stop: make(chan struct{}),
		mask: func(s string) string { return s }}
	p.cmd = p.w
	p.initLanes()
	if p.live {
		go p.tick(time.Second)
	}
	return p
}

// untilError writes to w until a write fails, then drops everything: a
// closed stderr (dtree run … 2>&1 | head -1) ends the progress, not the
// run.
type untilError struct {
	w   io.Writer
	err error
}

func (u *untilError) Write(b []byte) (int, error) {
	if u.err != nil {
		return len(b), nil
	}
	if _, err := u.w.Write(b); err != nil {
		u.err = err
	}
	return len(b), nil
}

// isTerminal reports whether w is a terminal that can take a live line.
func isTerminal(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd())) && getenv("TERM") != "dumb"
}

// termWidth returns the width of the terminal w is, asked anew each time
// (the window may be resized), or $COLUMNS where the terminal does not
// say; 0 when neither does.
func (a *App) termWidth(w io.Writer) func() int {
	return func() int {
		if f, ok := w.(interface{ Fd() uintptr }); ok {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
				return cols
			}
		}
		if n, err := strconv.Atoi(a.Getenv("COLUMNS")); err == nil && n > 0 {
			return n
		}
		return 0
	}
}

// termHeight is termWidth's for the rows, $LINES where the terminal does
// not say.
func (a *App) termHeight(w io.Writer) func() int {
	return func() int {
		if f, ok := w.(interface{ Fd() uintptr }); ok {
			if _, rows, err := term.GetSize(int(f.Fd())); err == nil && rows > 0 {
				return rows
			}
		}
		if n, err := strconv.Atoi(a.Getenv("LINES")); err == nil && n > 0 {
			return n
		}
		return 0
	}
}

func (p *progress) tick(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	resized := make(chan os.Signal, 1)
	defer notifyResize(resized)()
	for {
		select {
		case <-t.C:
			p.mu.Lock()
			p.drawLive()
			p.mu.Unlock()
		case <-resized:
			p.mu.Lock()
			p.redrawResized()
			p.mu.Unlock()
		case <-p.stop:
			return
		}
	}
}

// redrawResized redraws the live block at once when the window changed
// size; the caller holds p.mu. A terminal that shrank below a line drawn
// has wrapped it onto more rows: those are cleared first, from the first
// of them down, so no stale copy stays above.
func (p *progress) redrawResized() {
	if !p.live || len(p.drawnW) == 0 {
		return
	}
	if p.drawnRows() > 1 {
		p.eraseLive()
	}
	p.drawLive()
}

// width is the terminal's width now, 0 when unknown.
func (p *progress) width() int {
	if p.cols == nil {
		return 0
	}
	return p.cols()
}

// printf prints a whole line, above the live block. With -v, each line
// of a fork's branch starts with the branch's tag ([FORK/NAME]); under
// GitHub Actions a branch's step keeps its lines until it ends
// (progress_branch.go).
func (p *progress) printf(format string, args ...any) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// A chart's text or an agent's drives no terminal (errors.go).
	text := visible(fmt.Sprintf(format, args...))
	l := p.cur.Load()
	if p.verbose && l.tag != "" {
		text = tagLines(l.tag, text)
	}
	if l.held != nil {
		l.held = append(l.held, heldWrite{text: text})
		return
	}
	if p.live && len(p.drawnW) > 0 {
		p.eraseLive()
	}
	fmt.Fprint(p.w, text)
	p.drawLive()
}

func (p *progress) NodeStarted(n *types.ProcessedNode, visit int) {
	again := ""
	if visit > 1 {
		again = fmt.Sprintf(" (visit %d)", visit)
	}
	what := string(n.Role) + ", " + n.CLI
	if n.CLI == "" { // a step no CLI runs (a gate, a person's): its kind alone
		what = string(n.Step)
	}
	line := fmt.Sprintf("→ %s %s [%s]%s", n.ID, types.Excerpt(n.Text, 60), what, again)
	node := fmt.Sprintf("node %s %s", n.ID, types.Quote(types.Excerpt(n.Text, 60)))
	l := p.cur.Load()
	p.stepStarted(l, &node)
	if p.actions {
		p.mu.Lock()
		l.step.src = n.Line
		if l.id != "" && !p.quiet {
			// Its group is printed whole when it ends: groups of steps
			// that run at once would interleave (readme/ci.md).
			l.held = []heldWrite{}
		}
		p.mu.Unlock()
		p.command(ci.GroupStart(p.mask(l.tag + line)))
		return
	}
	if !p.live {
		p.printf("%s\n", line)
		return
	}
	p.mu.Lock()
	if l.step.line == "" {
		p.running++
	}
	l.step.line, l.step.at, l.step.id = line, time.Now(), "→ "+n.ID
	p.nowMu.Lock()
	l.step.now = doingNow{}
	p.nowMu.Unlock()
	p.drawLive()
	p.mu.Unlock()
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

// UsageWarning says that a figure a CLI reported is not one, and counts
// as unknown (readme/run.md#budgets); even with --quiet, as warnings are.
func (p *progress) UsageWarning(n *types.ProcessedNode, attempt int, cli, msg string) {
	p.notice(fmt.Sprintf("dtree: warning: node %s attempt %d: %s reported %s: counted as unknown", n.ID, attempt, cli, msg))
}

func (p *progress) NodeFinished(r *run.NodeResult) {
	l := p.cur.Load()
	p.mu.Lock()
	p.stepEnded(l)
	src := l.step.src
	p.mu.Unlock()
	defer p.release(l) // a branch's group under GitHub Actions, whole
	took := time.Duration(r.DurationMS) * time.Millisecond
	if p.actions {
		p.command(ci.Verbatim(p.mask(ci.Answer(r))) + ci.GroupEnd)
		if r.Status == run.StatusWaiting {
			// Not a failure: a notice of what waits, and how to answer it.
			p.annotate(ci.Annotation("notice", ci.Where{File: p.chart, Line: src},
				p.mask(fmt.Sprintf("dtree: %s %s waits for approval", r.ID, types.Excerpt(r.Text, 60))),
				p.mask(p.asked)))
		} else if r.Status != run.StatusSucceeded {
			// An error even with --quiet: it is the run's failure.
			p.annotate(ci.Annotation("error", ci.Where{File: p.chart, Line: src},
				p.mask(fmt.Sprintf("dtree: %s %s %s", r.ID, types.Excerpt(r.Text, 60), strings.ReplaceAll(r.Status, "_", " "))),
				p.mask(r.Error)))
		}
	}
	switch {
	case r.Status == run.StatusInterrupted:
		p.endLine(fmt.Sprintf("✗ %s %s interrupted (%s)", r.ID, types.Excerpt(r.Text, 60), took.Round(time.Millisecond)), changed(r.Change))
	case r.Status == run.StatusBudget && len(r.Attempts) == 0:
		// The budget was spent before the node's first call: nothing ran.
		p.printf("✗ %s %s not started: the run reached its budget\n", r.ID, types.Excerpt(r.Text, 60))
	case r.Status == run.StatusBudget:
		p.endLine(fmt.Sprintf("✗ %s %s stopped: the run reached its budget (%s)", r.ID, types.Excerpt(r.Text, 60), took.Round(time.Millisecond)), changed(r.Change))
	case r.Status == run.StatusWaiting:
		p.endLine(fmt.Sprintf("… %s %s waits for approval", r.ID, types.Excerpt(r.Text, 60)), changed(r.Change))
	case r.Status == run.StatusLogWriteFailed:
		p.endLine(fmt.Sprintf("✗ %s %s stopped: its log could not be written (%s)", r.ID, types.Excerpt(r.Text, 60), took.Round(time.Millisecond)), changed(r.Change))
	case r.Status != run.StatusSucceeded:
		p.endLine(fmt.Sprintf("✗ %s %s failed (%s)", r.ID, types.Excerpt(r.Text, 60), took.Round(time.Millisecond)), changed(r.Change))
	case r.Label != "":
		p.endLine(fmt.Sprintf("✓ %s %s → %s (%s)", r.ID, types.Excerpt(r.Text, 60), r.Label, took.Round(time.Millisecond)), changed(r.Change))
	default:
		p.endLine(fmt.Sprintf("✓ %s %s (%s)", r.ID, types.Excerpt(r.Text, 60), took.Round(time.Millisecond)), changed(r.Change))
	}
	if p.verbose && !r.Change.Empty() {
		p.printf("%s", changedPaths(r.Change, p.mask))
	}
}

// command prints workflow commands of GitHub Actions' mode, unless
// quiet.
func (p *progress) command(s string) {
	if p.quiet {
		return
	}
	p.annotate(s)
}

// annotate prints an annotation of GitHub Actions' mode, even with
// --quiet: a step's failure, or the gate it waits at.
func (p *progress) annotate(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.cur.Load(); l.held != nil {
		l.held = append(l.held, heldWrite{text: s, cmd: true})
		return
	}
	fmt.Fprint(p.cmd, s)
}

// notice prints a line above the live line even with --quiet: the answer
// to something the user did (an interrupt).
func (p *progress) notice(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && len(p.drawnW) > 0 {
		p.eraseLive()
	}
	fmt.Fprintln(p.w, visible(line))
	p.drawLive()
}

// doing names the node that runs, and how many more run in other
// branches, or "" between nodes.
func (p *progress) doing() string {
	n, busy := p.node.Load(), int(p.busy.Load())
	switch {
	case n == nil && busy > 0: // the latest to start ended
		return types.Plural(busy, "step") + " of the run's branches"
	case n == nil:
		return ""
	case busy > 1:
		return busyNote(*n, busy-1)
	}
	return *n
}

// pathShown bounds the node ids the path line shows at each end: a run of
// 100,000 steps would make it a line of megabytes. The whole path is in
// the --json summary and in run_end (readme/run.md).
const pathShown = 50

// pathLine is the path as the last lines of a run show it: whole up to
// 2*pathShown ids, else its first and last pathShown with how many are
// left out between.
func pathLine(path []string) string {
	if len(path) <= 2*pathShown {
		return strings.Join(path, " → ")
	}
	return fmt.Sprintf("%s → … %s more … → %s", strings.Join(path[:pathShown], " → "),
		types.Thousands(int64(len(path)-2*pathShown)), strings.Join(path[len(path)-pathShown:], " → "))
}

func (p *progress) finished(s *run.Summary) {
	p.cur.Store(p.main) // the lines that end the run are its own
	if p.live {
		close(p.stop)
		p.mu.Lock()
		if len(p.drawnW) > 0 {
			p.eraseLive()
		}
		p.clearLanes()
		p.mu.Unlock()
	}
	took := time.Duration(s.DurationMS) * time.Millisecond
	steps := types.Plural(s.Steps(), "step")
	if r := s.Resumed; r != nil && r.Steps > 0 {
		// The steps taken from the run before are not this run's time.
		carried := time.Duration(r.DurationMS) * time.Millisecond
		steps = fmt.Sprintf("%s in %s, and %d taken from run %s (%s)", types.Plural(s.Steps()-r.Steps, "step"),
			took.Round(time.Millisecond), r.Steps, r.From, carried.Round(time.Millisecond))
	} else {
		steps += " in " + took.Round(time.Millisecond).String()
	}
	p.printf("dtree: run %s %s: %s; logs in %s\n", s.RunID, s.Status, steps, s.Logs.Dir)
	if len(s.Path) > 0 {
		p.printf("path: %s\n", pathLine(s.Path))
	}
	p.branchPaths(s.Branches)
	if s.Logs.Graph != "" {
		p.printf("picture: %s\n", s.Logs.Graph)
	}
	p.runChanged(s)
}

// Undone says that dtree undid a change to the working tree
// (readme/workspace.md): a rollback as a line under the step, a change a
// step should not have made as a warning, shown even with --quiet.
func (p *progress) Undone(n *types.ProcessedNode, attempt int, msg string, warn bool) {
	if p.mask == nil {
		p.mask = func(s string) string { return s }
	}
	if warn {
		p.notice(p.mask(fmt.Sprintf("dtree: warning: node %s attempt %d: %s", n.ID, attempt, msg)))
		return
	}
	p.printf("  ↺ attempt %d: %s\n", attempt, p.mask(msg))
}
