package cli

import (
	"cmp"
	"container/list"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// A fork's branches in the progress (readme/parallel.md#what-you-see).
// The walker tells which branch the calls that follow are of (OnBranch):
// each branch is a lane, with the step it runs. On a terminal the live
// block has a line per running step, a branch's prefixed with its name
// ("‖ tests: "), at most liveShown lines; with -v every line a branch
// prints starts with its id in brackets ("[plan/tests] "); under GitHub
// Actions a branch's step is printed whole, its group included, when it
// ends, as groups cannot interleave. A run without a fork has only the
// run's own lane and prints what it always did.

var _ run.BranchProgress = (*progress)(nil)

// liveShown bounds the live block: a fork of 20 branches shows
// liveShown-1 of them and "… and N more branches running"; a terminal of
// fewer rows, one less than its height.
const liveShown = 8

// labelCols bounds a branch's name before its live line.
const labelCols = 16

// liveStep is a running step as its live line shows it.
type liveStep struct {
	line string    // "→ ID TEXT [role, cli]"; "" when none runs (or off a terminal)
	id   string    // "→ ID", the line's shortest head
	at   time.Time // when it started
	src  int       // the node's line in the chart's file, for annotations
	now  doingNow  // what the agent is doing, under p.nowMu
}

// heldWrite is a write a branch's step keeps under GitHub Actions until
// it ends: a workflow command (to p.cmd) or lines (to p.w).
type heldWrite struct {
	text string
	cmd  bool
}

// lane is one branch of the run: the run's own (id "") or a fork's.
type lane struct {
	id    string // FORK/NAME
	label string // "‖ NAME: " before its live line
	tag   string // "[FORK/NAME] " before its lines with -v
	step  liveStep
	node  *string     // its running node for an interrupt's message, nil when none
	held  []heldWrite // non-nil while its step's group is kept (GitHub Actions)
	elem  *list.Element
}

// lanes are the run's branches as the progress knows them.
type lanes struct {
	main *lane
	cur  atomic.Pointer[lane]
	// byID and order are a fork's branches, order as they started; both
	// under p.mu. running counts the lanes whose step.line is set.
	byID    map[string]*lane
	order   list.List
	seq     map[string]int // each branch's place in the order they started
	running int
	// drawnW is the width of each line of the live block as drawn, none
	// when nothing is: the rows to erase, after a resize too.
	drawnW []int
}

func (p *progress) initLanes() {
	p.main = &lane{}
	p.cur.Store(p.main)
	p.byID, p.seq = map[string]*lane{}, map[string]int{}
}

// BranchStarted makes a lane for a fork's branch.
func (p *progress) BranchStarted(id, fork, name string) {
	bar := "‖ "
	if p.ascii {
		bar = "|| "
	}
	l := &lane{id: id, label: bar + fitWidth(visible(run.ShownBranch(name)), labelCols, p.ascii) + ": ", tag: "[" + run.ShownBranch(id) + "] "}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.seq[id]; !ok {
		p.seq[id] = len(p.seq)
	}
	if old := p.byID[id]; old != nil {
		p.order.Remove(old.elem)
	}
	l.elem = p.order.PushBack(l)
	p.byID[id] = l
}

// BranchEnded takes a branch's lane away.
func (p *progress) BranchEnded(id, status string) {
	p.mu.Lock()
	l := p.byID[id]
	if l == nil {
		p.mu.Unlock()
		return
	}
	delete(p.byID, id)
	p.order.Remove(l.elem)
	p.stepEnded(l) // a step that never said it ended, if any
	p.drawLive()
	p.mu.Unlock()
	p.release(l)
	if p.cur.Load() == l {
		p.cur.Store(p.main)
	}
}

// OnBranch says which branch the calls that follow are of.
func (p *progress) OnBranch(id string) {
	p.mu.Lock()
	l := p.byID[id]
	p.mu.Unlock()
	if l == nil {
		l = p.main
	}
	p.cur.Store(l)
}

// stepStarted notes the running node of lane l, for an interrupt's
// message.
func (p *progress) stepStarted(l *lane, node *string) {
	p.mu.Lock()
	if l.node == nil {
		p.busy.Add(1)
	}
	l.node = node
	p.mu.Unlock()
	p.node.Store(node)
}

// stepEnded takes lane l's step off the live block; the caller holds
// p.mu.
func (p *progress) stepEnded(l *lane) {
	if l.node != nil {
		p.busy.Add(-1)
		p.node.CompareAndSwap(l.node, nil)
		l.node = nil
	}
	if l.step.line != "" {
		if p.live && len(p.drawnW) > 0 {
			p.eraseLive()
		}
		l.step.line = ""
		p.running--
	}
}

// release prints what lane l's step kept, whole, and keeps no more.
func (p *progress) release(l *lane) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range l.held {
		if h.cmd {
			fmt.Fprint(p.cmd, h.text)
		} else {
			fmt.Fprint(p.w, h.text)
		}
	}
	l.held = nil
}

// clearLanes forgets every running step; the caller holds p.mu.
func (p *progress) clearLanes() {
	p.main.step.line = ""
	for e := p.order.Front(); e != nil; e = e.Next() {
		e.Value.(*lane).step.line = ""
	}
	p.running = 0
}

// tagLines starts each line of text with tag.
func tagLines(tag, text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			b.WriteString(tag)
			b.WriteString(line)
		}
	}
	return b.String()
}

// drawnRows is how many rows of the terminal the live block takes now:
// a line wider than the window (it shrank) wrapped onto more.
func (p *progress) drawnRows() int {
	cols, rows := p.width(), 0
	for _, w := range p.drawnW {
		if cols > 0 && w > cols {
			rows += (w + cols - 1) / cols
		} else {
			rows++
		}
	}
	return rows
}

// eraseLive takes the live block off the terminal, the cursor left at
// the start of its first row; the caller holds p.mu.
func (p *progress) eraseLive() {
	if rows := p.drawnRows(); rows > 1 {
		fmt.Fprintf(p.w, "\x1b[%dA\r\x1b[J", rows-1)
	} else {
		fmt.Fprint(p.w, clearLine)
	}
	p.drawnW = p.drawnW[:0]
}

// drawLive redraws the live block, each line cut to the terminal's
// width, in one write; the caller holds p.mu. The run's own step alone
// is one line, as in a run without a fork.
func (p *progress) drawLive() {
	if !p.live || p.paused || p.running == 0 {
		return
	}
	shown, more := p.shownLanes()
	if p.drawnRows() > 1 {
		p.eraseLive()
	}
	cols := p.width()
	p.drawnW = p.drawnW[:0]
	var b strings.Builder
	for i, l := range shown {
		if i > 0 {
			b.WriteString("\n")
		}
		line := p.laneLine(l, cols)
		p.drawnW = append(p.drawnW, textWidth(line))
		b.WriteString(clearLine + line)
	}
	if more > 0 {
		line := p.sym(fmt.Sprintf("… and %d more branches running", more))
		if cols > 0 {
			line = fitWidth(line, cols-1, p.ascii)
		}
		p.drawnW = append(p.drawnW, textWidth(line))
		b.WriteString("\n" + clearLine + line)
	}
	fmt.Fprint(p.w, b.String())
}

// shownLanes are the lanes with a running step the live block shows, the
// run's own first, then the branches as they started, and how many more
// run; the caller holds p.mu.
func (p *progress) shownLanes() ([]*lane, int) {
	most := liveShown
	if p.rows != nil {
		if h := p.rows(); h > 0 {
			most = max(min(most, h-1), 2)
		}
	}
	room := most
	if p.running > most {
		room = most - 1 // the last line says how many more
	}
	shown := make([]*lane, 0, min(room, p.running))
	if p.main.step.line != "" {
		shown = append(shown, p.main)
	}
	for e := p.order.Front(); e != nil && len(shown) < room; e = e.Next() {
		if l := e.Value.(*lane); l.step.line != "" {
			shown = append(shown, l)
		}
	}
	return shown, p.running - len(shown)
}

// laneLine is lane l's live line, its label first, cut to cols columns
// less one: a line that fills the last column leaves some terminals
// waiting to wrap, and the next \r lands a row down.
func (p *progress) laneLine(l *lane, cols int) string {
	elapsed := " " + time.Since(l.step.at).Round(time.Second).String()
	label := l.label
	inner := cols
	if cols > 0 {
		inner = max(cols-textWidth(label), 1)
	}
	line := label + p.liveLine(&l.step, inner, elapsed)
	if cols > 0 {
		line = fitWidth(line, cols-1, p.ascii)
	}
	return line
}

// busyNote is what doing says while more than one step runs.
func busyNote(node string, more int) string {
	return fmt.Sprintf("%s and %s of other branches", node, types.Plural(more, "step"))
}

// branchesShown bounds the branch lines under the path: --json and
// short.json have every branch's.
const branchesShown = 20

// branchPaths prints each branch's path under the run's, in the order
// the branches started (the summary has them as they ended), and how a
// branch that did not succeed ended; at most branchesShown.
func (p *progress) branchPaths(bs []run.BranchResult) {
	if len(bs) == 0 {
		return
	}
	p.mu.Lock()
	bs = slices.Clone(bs)
	slices.SortStableFunc(bs, func(a, b run.BranchResult) int { return cmp.Compare(p.seq[a.ID], p.seq[b.ID]) })
	p.mu.Unlock()
	for _, b := range bs[:min(len(bs), branchesShown)] {
		how := ""
		if b.Status != run.StatusSucceeded {
			how = " (" + strings.ReplaceAll(b.Status, "_", " ") + ")"
		}
		path := pathLine(b.Path)
		if len(b.Path) == 0 { // stopped before its first step: a limit, an interrupt
			path = "no step run"
		}
		p.printf("  branch %s%s: %s\n", run.ShownBranch(b.ID), how, path)
	}
	if more := len(bs) - branchesShown; more > 0 {
		p.printf("  … and %s more branches (--json and short.json have each one's path)\n", types.Thousands(int64(more)))
	}
}
