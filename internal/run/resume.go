package run

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// Carried is what a resumed run takes from the run before it
// (readme/resume.md): that run's start, and the steps it finished, each
// with its lines of events.jsonl. No agent is called for them.
type Carried struct {
	// Start is the earlier run's run_start: its chart, page, start node,
	// settings and variables.
	Start runlog.RunStart
	// Status is how the earlier run ended, its run_end's status; "" when
	// it has none: it was killed, or is still going.
	Status string
	// Steps are the visits it finished, in order, when it was read with
	// ReadCarried; a visit that failed, was interrupted, or had not ended
	// when the run stopped is not among them. ReadCarriedFile keeps none
	// of them, and reads them again, one at a time, as the run takes them.
	Steps []CarriedStep
	// At is the node the resumed run goes on at: where the last carried
	// step led, or the --from node. "" is the run's start.
	At string
	// Ended says the earlier run got to its end: there is no step to go
	// on at (unless From picks one).
	Ended bool
	// Torn says the earlier log ended in a line cut short (a run killed
	// while writing it), which was skipped.
	Torn bool
	// Damaged is the first line of the earlier log, before its last, that
	// is not an event (torn, or edited): reading stopped at it, so the
	// steps are those that finished before it. nil when there is none.
	Damaged *runlog.LineError
	// Conflicts are the files the merge of the join At left conflicted,
	// when the run stopped at that join (its step failed): the join's
	// agent is asked to resolve them again, as they are in the tree now.
	Conflicts []string
	// Fork is the fork the earlier run stopped inside, its branches part
	// way (readme/resume.md#forks): nil when it stopped before or after
	// every fork. At is then the fork's node.
	Fork *CarriedFork
	// Unfinished sums the usage of the agent calls of the visits it did
	// not finish (failed, stopped by its budget, interrupted, killed),
	// which are not carried: the budget counts them all the same
	// (readme/resume.md). Checked as a CLI's figures are.
	Unfinished types.UsageTotal

	// path is the node of each finished visit, of which the first taken
	// are carried (From cuts it), and steps what Each hands over of each
	// when Steps is not kept; file is the events.jsonl they are read from
	// again to be carried, ids the renumbering to apply to them then
	// (Renumber).
	path  []string
	steps []stepEnds
	taken int
	file  string
	ids   map[string]string
	// joined are the branches of the forks the run joined, in order.
	joined []joinedBranch
	// tail are the lines of the fork joined after the last finished
	// step (the run stopped at its join), carried after it; cutLead are
	// those of the fork joined before the step From goes on at, carried
	// after the steps taken.
	tail, cutLead [][]byte
}

// CarriedFork is a fork whose branches the earlier run had started and
// not joined when it stopped. The resumed run takes each branch that got
// to the join whole, and has each other go on from its own last finished
// step, in a worktree made from its own last checkpoint; the join then
// merges them onto the fork's checkpoint, as in a run that did not stop.
type CarriedFork struct {
	Node  string // the fork's node
	Visit int    // the fork's visit
	// Base is the fork's checkpoint, where its branches began and the
	// join merges onto; "" when the run had no checkpoints.
	Base string
	// Branches are the fork's branches, in the order they started.
	Branches []*CarriedBranch
	// Nested is a fork inside one of the branches, whose branches the
	// run started: a resume does not go into it (ForkRefused).
	Nested string
	// Alone is the branch a run of one branch alone (dtree run --branch)
	// walked: its branch_start has no worktree of its own.
	Alone string
	byID  map[string]*CarriedBranch
	// endLines are its branch_end lines, carried at the join.
	endLines [][]byte
}

// CarriedBranch is one branch of a CarriedFork.
type CarriedBranch struct {
	ID, Name string
	First    string   // its first step
	Path     []string // its finished steps, in order
	// At is where it goes on: its first step, or where its last finished
	// step led (the join, when it got there).
	At string
	// Checkpoint is its last checkpoint: its branch_end's, else its last
	// finished step's, else the fork's; "" when it has none (Lost).
	Checkpoint string
	// Done: it got to the join (branch_end succeeded); it is taken whole.
	Done bool
	// Lost: a step of it finished without a checkpoint (its checkpoints
	// were turned off): what it changed is not on record.
	Lost bool
	// end is its branch_end, when it has one; startLine its branch_start's
	// line, carried with its first step (sent) or at the join.
	end       *runlog.BranchEnd
	startLine []byte
	sent      bool
}

// joinedBranch is a branch of a fork the run joined, as the summary
// lists it, and how many steps the run had finished at the join: the
// resumed run lists it when it takes them all.
type joinedBranch struct {
	res   BranchResult
	steps int
}

// ForkRefused is why the run cannot go on inside its fork, nil when it
// can: a fork nested in a branch, or a branch whose changes are not on
// record. --from the fork runs the whole fork again.
func (c *Carried) ForkRefused() error {
	f := c.Fork
	if f == nil {
		return nil
	}
	if f.Alone != "" {
		return fmt.Errorf("it is a run of branch %s alone (dtree run --branch), which stopped inside it: a resume goes on with every branch of a fork, not one", f.Alone)
	}
	if f.Nested != "" {
		return fmt.Errorf("it stopped inside fork %s, in the branches of fork %s nested in one of its branches, and a resume goes on inside one fork, not two", f.Node, f.Nested)
	}
	if f.Base == "" {
		return fmt.Errorf("it stopped inside fork %s, without checkpoints: its branches' work is not on record", f.Node)
	}
	for _, b := range f.Branches {
		if b.Lost || b.Checkpoint == "" {
			return fmt.Errorf("it stopped inside fork %s, and the checkpoints of its branch %s stopped (its workspace event says why): what the branch changed is not on record", f.Node, b.ID)
		}
	}
	return nil
}

// stepEnds is what Check and the export match read of a carried step:
// about 50 bytes, where a step is 1 KB of events.jsonl.
type stepEnds struct {
	next, label        string
	branch             string // CarriedStep.Branch
	startLine, endLine int
	dur                time.Duration
}

// CarriedStep is one finished visit of the earlier run.
type CarriedStep struct {
	// Branch is the fork branch the visit was of, FORK/NAME, "" for the
	// run's own.
	Branch  string
	Start   runlog.NodeStart
	Calls   []runlog.AgentCall
	Retries []runlog.Retry
	// Tools are its tool_call events, and ToolsLeftOut the tool calls
	// its tool_calls_left_out counted: the step's record of them
	// (seen.go) is made again from them.
	Tools        []runlog.ToolCall
	ToolsLeftOut int
	End          runlog.NodeEnd
	lines        [][]byte
	// lead is how many of lines come before its node_start: its branch's
	// branch_start, or the events of the fork joined before it.
	lead int
	dur  time.Duration
	// startLine and endLine are the lines of its node_start and node_end
	// in the events.jsonl read, for errors that name them.
	startLine, endLine int
}

// ReadCarried reads the events.jsonl of the run to resume, every finished
// step into Steps. A torn last line is skipped (Torn); reading stops at
// any other line that is not an event (Damaged), since what the run did
// after it cannot be told; an event of a newer dtree inside a step is
// carried with it.
func ReadCarried(r io.Reader) (*Carried, error) {
	c := &Carried{}
	err := c.scan(r, scanFull, func(s *CarriedStep) bool {
		c.Steps = append(c.Steps, *s)
		return true
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ReadCarriedFile is ReadCarried of the events.jsonl at path, read as a
// stream and without keeping the steps: a resume of a run of 100,000
// steps holds one of them at a time (readme/performance.md#long-runs).
// The run reads them again from path as it takes them.
func ReadCarriedFile(path string) (*Carried, error) {
	f, err := runlog.OpenLog(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &Carried{file: path}
	if err := c.scan(bufio.NewReaderSize(f, 1<<20), scanLight, func(*CarriedStep) bool { return true }); err != nil {
		return nil, err
	}
	return c, nil
}

// Len is how many finished steps the resumed run takes.
func (c *Carried) Len() int { return c.taken }

// How scan reads: scanFull keeps each step whole; scanLight keeps only
// what Carried holds (the steps it hands over have no calls, retries or
// lines, and Carried keeps their ends for Each), but decodes every line,
// so that it stops at the line a full read stops at (Damaged).
const (
	scanFull = iota
	scanLight
)

// scan reads an events.jsonl, filling in c and handing each finished
// step to took, in order, until took returns false.
func (c *Carried) scan(r io.Reader, mode int, took func(*CarriedStep) bool) error {
	rd := runlog.NewEventReader(r)
	light := mode == scanLight
	started := false
	// Each branch's visit being read, apart: the events of a fork's
	// branches interleave.
	visits := map[string]*readVisit{}
	at := func(branch string) *readVisit {
		v := visits[branch]
		if v == nil {
			v = &readVisit{}
			visits[branch] = v
		}
		return v
	}
	lastVisit := 0 // the visit of the run's own last finished step
	joined := ""   // the join whose merge the run's own last event was, for Conflicts
	// forkLines are the lines of a fork the run joined (its branch_start
	// lines not carried yet, its branch_end lines and its join), carried
	// with the run's next step, the join's.
	var forkLines [][]byte
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var damaged *runlog.LineError
		if errors.As(err, &damaged) && started {
			c.Damaged = damaged
			break
		}
		if err != nil {
			return err
		}
		if !started {
			rs, ok := ev.(runlog.RunStart)
			if !ok {
				return errors.New("its events.jsonl does not start with run_start: not the log of a dtree run")
			}
			c.Start, started = rs, true
			continue
		}
		var line []byte
		if !light {
			line = append(line, rd.Raw()...)
		}
		branch := rd.Branch()
		v := at(branch)
		if e, ok := ev.(runlog.AgentCall); ok && e.Purpose != agent.PurposeCommand {
			u, _ := agent.CheckUsage(e.Usage)
			v.pending = append(v.pending, u)
		}
		switch e := ev.(type) {
		case runlog.NodeStart:
			v.unfinished(c) // a visit that had no end
			v.cur, v.start = &CarriedStep{Branch: branch, Start: e, startLine: rd.Line()}, rd.Time()
			v.cur.lines = append(v.cur.lines, line)
		case runlog.NodeEnd:
			cur := v.cur
			v.cur = nil
			if cur == nil || cur.Start.Node != e.Node || e.Status != StatusSucceeded {
				continue
			}
			v.pending = v.pending[:0] // carried with its step
			cur.End, cur.dur, cur.endLine = e, rd.Time().Sub(v.start), rd.Line()
			cur.lines = append(cur.lines, line)
			if !light {
				if b := c.Fork.branch(branch); b != nil && !b.sent { // its branch_start goes first
					cur.lines, cur.lead, b.sent = append([][]byte{b.startLine}, cur.lines...), 1, true
				} else if branch == "" && len(forkLines) > 0 {
					cur.lines, cur.lead, forkLines = append(forkLines, cur.lines...), len(forkLines), nil
				}
			}
			c.path = append(c.path, e.Node)
			if mode == scanLight {
				c.steps = append(c.steps, stepEnds{next: e.Next, label: e.Label, branch: branch, startLine: cur.startLine,
					endLine: cur.endLine, dur: cur.dur})
			}
			if branch == "" {
				c.Ended = e.Next == ""
				c.At = e.Next
				lastVisit = cur.Start.Visit
				c.Conflicts, joined = nil, "" // a join's are for its visit only
			} else if b := c.Fork.branch(branch); b != nil {
				b.Path = append(b.Path, e.Node)
				b.At = e.Next
				if e.Change != nil {
					b.Checkpoint = e.Change.To
				} else if c.Fork.Base != "" {
					b.Lost = true
				}
			}
			if !took(cur) {
				return nil
			}
		case runlog.End:
			if branch == "" {
				c.Ended = true
			}
		case runlog.RunEnd:
			c.Status = e.Status
			if e.Status == StatusSucceeded {
				c.Ended = true
			}
		case runlog.RunStart:
			// a second run in one log: not dtree's
			return errors.New("its events.jsonl holds two run_start events: not the log of one dtree run")
		case runlog.BranchStart:
			c.branchStarted(branch, e, lastVisit)
			if b := c.Fork.branch(branch); b != nil {
				b.startLine = line
			}
		case runlog.BranchEnd:
			if b := c.Fork.branch(branch); b != nil {
				b.Done, b.end = e.Status == StatusSucceeded, &e
				if !light {
					c.Fork.endLines = append(c.Fork.endLines, line)
				}
				if e.Checkpoint != "" {
					b.Checkpoint = e.Checkpoint
				}
			}
		case runlog.Join:
			if branch == "" && c.Fork != nil { // the run's own fork joined; a nested one's join is its branch's
				for id := range c.Fork.byID {
					delete(visits, id) // ended: what it holds stays bounded by the open fork's branches
				}
				for _, b := range c.Fork.Branches {
					if !light && !b.sent {
						forkLines = append(forkLines, b.startLine)
					}
				}
				if !light {
					forkLines = append(append(forkLines, c.Fork.endLines...), line)
				}
				for _, b := range c.Fork.Branches {
					r := BranchResult{ID: b.ID, Fork: c.Fork.Node, Name: b.Name, Status: StatusInterrupted, Path: b.Path}
					if b.end != nil {
						r.Status, r.Error, r.Path = b.end.Status, b.end.Error, b.end.Path
					}
					c.joined = append(c.joined, joinedBranch{res: r, steps: len(c.path)})
				}
				c.Fork = nil
				c.Conflicts, joined = e.Conflicts, e.Node
			}
		default:
			if v.cur == nil || light {
				continue // the lines copied from the run before it, say, are in their steps
			}
			v.cur.lines = append(v.cur.lines, line)
			switch e := ev.(type) {
			case runlog.AgentCall:
				v.cur.Calls = append(v.cur.Calls, e)
			case runlog.Retry:
				v.cur.Retries = append(v.cur.Retries, e)
			case runlog.ToolCall:
				v.cur.Tools = append(v.cur.Tools, e)
			case runlog.ToolCallsLeftOut:
				v.cur.ToolsLeftOut += e.LeftOut
			}
		}
	}
	if !started {
		return errors.New("its events.jsonl has no run_start event: the run stopped before it began")
	}
	for _, v := range visits {
		v.unfinished(c)
	}
	c.Torn = rd.Torn()
	c.taken = len(c.path)
	c.tail = forkLines
	switch {
	case c.Fork != nil: // it goes on inside the fork
		c.At, c.Ended = c.Fork.Node, false
	case c.taken == 0 || c.Ended:
		c.At = ""
	}
	if c.At != joined {
		c.Conflicts = nil
	}
	return nil
}

// readVisit is the visit of one branch that scan is reading: its step
// so far, when it started, and the usages of its calls until it is known
// whether it finished.
type readVisit struct {
	cur     *CarriedStep
	start   time.Time
	pending []types.Usage
}

// unfinished counts the usages of the visit's calls as of a visit that
// did not finish.
func (v *readVisit) unfinished(c *Carried) {
	for _, u := range v.pending {
		c.Unfinished.Add(u, 0)
	}
	v.pending = v.pending[:0]
}

// branchStarted notes a fork's branch that started: of the run's own
// fork, whose node's last visit was visit, or of a fork nested in one of
// its branches.
func (c *Carried) branchStarted(id string, e runlog.BranchStart, visit int) {
	f := c.Fork
	if f == nil {
		f = &CarriedFork{Node: e.Fork, Visit: max(visit, 1), Base: e.Checkpoint, byID: map[string]*CarriedBranch{}}
		c.Fork = f
	}
	if e.Fork != f.Node {
		if f.Nested == "" {
			f.Nested = e.Fork
		}
		return
	}
	if e.Worktree == "" && e.Checkpoint != "" && f.Alone == "" { // a live fork's branches each have one
		f.Alone = id
	}
	b := &CarriedBranch{ID: id, Name: e.Name, First: e.First, At: e.First, Checkpoint: e.Checkpoint}
	f.Branches = append(f.Branches, b)
	f.byID[id] = b
}

// branch is the fork's branch of id; nil when f is, or it has none.
func (f *CarriedFork) branch(id string) *CarriedBranch {
	if f == nil {
		return nil
	}
	return f.byID[id]
}

// From has the resumed run go on at the latest visit of node id on the
// path instead: that visit and the steps after it run again. The node may
// be the one the run would go on at anyway.
func (c *Carried) From(id string) error {
	for i := c.taken - 1; i >= 0; i-- {
		if c.path[i] == id && c.branchOf(i) == "" { // a step of a fork's branch is run again with its fork
			c.taken, c.At, c.Ended, c.Fork, c.Conflicts = i, id, false, nil, nil
			if c.Steps != nil {
				c.cutLead = c.Steps[i].lines[:c.Steps[i].lead]
				c.Steps = c.Steps[:i]
			}
			return nil
		}
	}
	if c.At == id && !c.Ended {
		return nil
	}
	for i := c.taken - 1; i >= 0; i-- {
		if c.path[i] == id {
			return &FromError{Node: id, Branch: c.branchOf(i)}
		}
	}
	return &FromError{Node: id, Path: c.Path()}
}

// FromError is a --from node that is not on the earlier run's path.
type FromError struct {
	Node string
	Path []string
	// Branch is the fork branch whose step Node is: it runs again with
	// its fork, not on its own.
	Branch string
}

// maxPathShown bounds the path a FromError names: the newest steps.
const maxPathShown = 50

func (e *FromError) Error() string {
	if e.Branch != "" {
		return fmt.Sprintf("--from %s: node %s is a step of the fork branch %s, which runs again with its fork: name the fork's node", e.Node, e.Node, e.Branch)
	}
	if len(e.Path) == 0 {
		return fmt.Sprintf("--from %s: the run finished no step to go back to", e.Node)
	}
	path := strings.Join(e.Path[max(len(e.Path)-maxPathShown, 0):], " → ")
	if len(e.Path) > maxPathShown {
		path = fmt.Sprintf("… %d steps before, then %s", len(e.Path)-maxPathShown, path)
	}
	return fmt.Sprintf("--from %s: node %s is not on the run's path (%s)", e.Node, e.Node, path)
}

// branchOf is the fork branch of the i-th finished step, "" for the
// run's own.
func (c *Carried) branchOf(i int) string {
	if c.file != "" {
		return c.steps[i].branch
	}
	return c.Steps[i].Branch
}

// Path is the node ids of the carried steps, in order.
func (c *Carried) Path() []string { return append([]string{}, c.path[:c.taken]...) }

// carryFlushSteps is how many carried steps' lines are kept for one write
// to events.jsonl: a resume of a long run copies them in batches, not all
// at once.
const carryFlushSteps = 256

// carry makes the steps of the earlier run this run's own, as if it had
// taken them: their lines in events.jsonl, the summary's nodes and usage,
// the steps counted for --max-steps and answers.yaml; and branch b's
// path, visit counts and run so far, b at the node to go on at. ok is
// false when the run is to start at its start.
func (w *walker) carry(ctx context.Context, b *branch) (ok bool, err error) {
	r := w.o.Resume
	g := w.o.Chart.Graph
	w.sum.Resumed = &Resumed{From: r.Start.RunID, Steps: r.taken}
	if r.At == "" {
		err := r.Each(func(s *CarriedStep) bool {
			w.sum.Resumed.DurationMS += s.dur.Milliseconds()
			return true
		})
		return false, err
	}
	cur, found := g.Index(r.At)
	if !found {
		return false, fmt.Errorf("node %s, where the run goes on, is not in the chart", r.At)
	}
	b.cur = cur
	for _, p := range r.Conflicts { // the join it goes on at: its agent resolves them
		b.conflicts = append(b.conflicts, workspace.Conflict{Path: p})
	}
	if i, ok := g.Index(w.o.Start); ok && w.node(i).Role == types.RoleTerminator {
		b.pass(w.o.Start) // skipped to its successor
	}
	n := 0
	var forkErr error
	take := func(s *CarriedStep) bool {
		if n == r.taken {
			return false
		}
		on := b // the branch the step is of
		if s.Branch != "" && r.Fork.branch(s.Branch) != nil {
			if on, forkErr = w.partBranch(ctx, b, s.Branch); forkErr != nil {
				return false
			}
		}
		if w.o.Log != nil {
			lines := s.lines
			if on != b { // the fork it goes on inside: this run starts its branches anew
				lines = lines[min(s.lead, len(lines)):]
			}
			for _, l := range lines {
				w.o.Log.Carry(l)
			}
			if n%carryFlushSteps == carryFlushSteps-1 {
				_ = w.o.Log.Flush() // its error is the log's Err, which the walk stops at
			}
		}
		w.carryStep(on, s)
		if c := s.End.Change; on == b && c != nil && b.tree.carriedFirst == "" {
			b.tree.carriedFirst = c.From
		}
		w.sum.Resumed.DurationMS += s.dur.Milliseconds()
		n++
		return true
	}
	if err := r.each(scanFull, take); err != nil {
		return false, err
	}
	if forkErr != nil {
		return false, forkErr
	}
	if w.o.Log != nil { // the fork joined after the last step it took
		joined := r.tail
		if n < len(r.path) {
			joined = r.cutLead
		}
		for _, l := range joined {
			w.o.Log.Carry(l)
		}
	}
	for _, j := range r.joined { // the forks it joined: their branches, as the run listed them
		if j.steps <= r.taken {
			w.sum.Branches = append(w.sum.Branches, j.res)
		}
	}
	w.steps += n
	w.queueShort()
	return true, nil
}

// Each hands the steps the resumed run takes to fn, in order, until fn
// returns false: from Steps, or, when it read the file (ReadCarriedFile),
// their nodes, where they led, their lines in the file and their time,
// without their calls, retries and lines.
func (c *Carried) Each(fn func(*CarriedStep) bool) error {
	if c.file == "" {
		return c.each(scanFull, fn)
	}
	for i := range c.taken {
		e := &c.steps[i]
		s := CarriedStep{Branch: e.branch, Start: runlog.NodeStart{Node: c.path[i]}, End: runlog.NodeEnd{Node: c.path[i], Next: e.next, Label: e.label},
			startLine: e.startLine, endLine: e.endLine, dur: e.dur}
		if !fn(&s) {
			break
		}
	}
	return nil
}

// each is Each, reading the file as mode says.
func (c *Carried) each(mode int, fn func(*CarriedStep) bool) error {
	if c.file == "" {
		for i := range c.Steps[:min(c.taken, len(c.Steps))] {
			if !fn(&c.Steps[i]) {
				break
			}
		}
		return nil
	}
	f, err := runlog.OpenLog(c.file)
	if err != nil {
		return fmt.Errorf("read the run to resume: %w", err)
	}
	defer f.Close()
	n, stopped := 0, false
	again := &Carried{}
	err = again.scan(bufio.NewReaderSize(f, 1<<20), mode, func(s *CarriedStep) bool {
		if c.ids != nil {
			s.renumber(c.ids)
		}
		if n == c.taken {
			if mode == scanFull && s.Branch == "" { // the step From goes on at: the fork joined before it
				c.cutLead = s.lines[:s.lead]
			}
			return false
		}
		n++
		stopped = !fn(s)
		return !stopped
	})
	if err == nil && n < c.taken && !stopped {
		err = fmt.Errorf("its events.jsonl changed while it was read: %d finished steps, then %d", c.taken, n)
	}
	if mode == scanFull {
		c.tail = again.tail
		for i := range c.tail {
			if c.ids != nil {
				c.tail[i] = runlog.Renumber(c.tail[i], c.ids)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("read the run to resume: %w", err)
	}
	return nil
}

// carryStep adds one carried visit to the run's state, on branch b.
func (w *walker) carryStep(b *branch, s *CarriedStep) {
	id, end := s.Start.Node, s.End
	n := &types.ProcessedNode{}
	if i, ok := w.o.Chart.Graph.Index(id); ok {
		n = w.node(i)
	}
	step := carriedStep(s)
	kind, ok := stepKinds[step]
	if !ok { // a log that says a terminator ran: read as a process's
		step, kind = types.StepProcess, processStep{}
	}
	res := &NodeResult{ID: id, Text: n.Text, Role: s.Start.Role, CLI: s.Start.CLI, Visit: s.Start.Visit,
		Status: StatusSucceeded, Retries: len(s.Retries), Attempts: []Attempt{}, Next: end.Next, Label: end.Label,
		Validation: end.Validation, DurationMS: s.dur.Milliseconds(), Output: end.Output, Change: end.Change}
	var replays bool
	res.Response, replays = kind.carried(s.Start.Role, end.Response)
	for _, c := range s.Calls {
		// The log is a file anyone, an agent too, may have edited: its
		// figures are checked as a CLI's are (SPEC §12), so that a
		// negative cost in it is unknown, not a credit to the budget.
		usage, warnings := agent.CheckUsage(c.Usage)
		if ws, ok := w.o.Progress.(UsageWarner); ok {
			for _, m := range warnings {
				ws.UsageWarning(&types.ProcessedNode{Node: &types.Node{ID: id}}, c.Attempt, c.CLI, m+" in the run's log")
			}
		}
		a := Attempt{N: c.Attempt, Purpose: c.Purpose, CLI: c.CLI, ExitCode: c.ExitCode, TimedOut: c.TimedOut,
			StoppedAfterAnswer: c.StoppedAfterAnswer, DurationMS: c.DurationMS, StdoutBytes: c.StdoutBytes,
			StderrBytes: c.StderrBytes, Usage: usage, StderrTail: c.StderrTail, Error: c.Error}
		res.Attempts = append(res.Attempts, a)
		if c.Purpose != agent.PurposeCommand {
			w.sum.count(res, a) // the visit's usage is its checked calls', as a live run's is, not node_end's say
			w.noteSpending(id, a)
		}
	}
	for _, rt := range s.Retries { // why each failed attempt failed, as runNode notes it
		for j := len(res.Attempts) - 1; j >= 0; j-- {
			if res.Attempts[j].N == rt.Attempt {
				if res.Attempts[j].Error == "" {
					res.Attempts[j].Error = rt.Reason
				}
				break
			}
		}
	}
	res.carryTools(s.Tools, s.ToolsLeftOut)
	res.Branch = s.Branch
	w.sum.add(res)
	if s.Branch == "" || b.id != "" { // a joined fork's branches' steps are not the run's own path
		b.pass(id)
	}
	b.visits[id] = max(b.visits[id], s.Start.Visit)

	p := pastStep{ID: id, Text: n.Text, Role: s.Start.Role, Status: StatusSucceeded, Response: res.Response,
		Label: end.Label, Step: step, CommandText: end.Command, ExitCode: -1, Output: end.Output}
	if cr, ok := res.Response.(types.CommandResponse); ok {
		p.ExitCode = cr.ExitCode
	}
	b.addHistory(p)

	if !replays {
		return // a command has no reply to replay
	}
	decision := s.Start.Role == types.RoleDecision
	var labels []string
	if decision {
		for _, e := range w.o.Chart.Graph.Out(w.index(id)) {
			labels = append(labels, e.Label)
		}
	}
	w.replies.Add(id, s.Start.Visit, n.Text, decision, false, string(end.Response), nil, labels)
	if end.Validation != nil {
		v, _ := json.Marshal(end.Validation)
		w.replies.Add(id, s.Start.Visit, n.Text, false, true, string(v), nil, nil)
	}
}

// carriedStep is the kind of a carried visit as its events recorded it:
// the first kind whose record it is (stepKind.recorded; a command step's
// node_end has its command), else its role's.
func carriedStep(s *CarriedStep) types.Step {
	for _, st := range types.Steps() {
		if k, ok := stepKinds[st]; ok && k.recorded(s) {
			return st
		}
	}
	return types.RoleStep(s.Start.Role)
}

// decodeAs reads a node_end's response back into the type the run gave
// it; nil when it has none or it does not read.
func decodeAs[T any](raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return v
}
