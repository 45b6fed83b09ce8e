// Package checkpoints reads what a run recorded of the working tree, from
// its events.jsonl (readme/workspace.md): the checkpoint before the run,
// each visit's checkpoints before and after it, the newest one; and
// keeps the run's undo log, undo.jsonl, for dtree undo. dtree diff and
// dtree undo take their commits from here, never from the run's ref
// alone: an agent could have moved the ref, and the log says what the
// run recorded.
package checkpoints

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/runlog"
)

// Visit is one visit of a node and its checkpoints: the tree before it
// (From) and after it (To). Carried is a visit a resumed run took from
// the run it went on from: its checkpoints are on that run's ref. Branch
// is the fork branch it ran on (readme/parallel.md), "" on the run's
// own: a branch's checkpoints are of its own worktree, on its own ref.
type Visit struct {
	Node     string
	Visit    int
	From, To string
	Status   string
	Carried  bool
	Branch   string
}

// Record is what a run's log says of its checkpoints.
type Record struct {
	RunID string
	Repo  string // the work tree the checkpoints were taken in
	Ref   string // the run's private ref
	// Before is the checkpoint of the tree before the first step; Last the
	// newest the run recorded of its working tree (the last visit's To,
	// or the merge of a fork's branches at their join, or Before): a
	// fork branch's visits are of the branch's worktree, not of it.
	Before, Last string
	// Off is why checkpoints stopped or were never taken ("" when on);
	// Outside is a run with no workspace event: it ran outside git.
	Off     string
	Outside bool

	nodes   []string           // the nodes that ran, in order of first visit
	visits  map[string][]Visit // each node's finished visits, in order
	started map[string]int     // each node's highest visit started
}

// MaxListed bounds the nodes an error lists.
const MaxListed = 20

// Error is a request the record cannot answer: what is missing, and what
// to do.
type Error struct {
	Msg  string
	Hint string
}

func (e *Error) Error() string { return e.Msg }

// ReadDir reads the record of the run whose log directory is dir.
func ReadDir(dir string) (*Record, error) {
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, filepath.Base(dir))
}

// Read reads a run's record from its events.jsonl. runID is the run's,
// when its run_start does not say it. Lines that are not events are
// passed over: what can be read is.
func Read(r io.Reader, runID string) (*Record, error) {
	rec := &Record{RunID: runID, Outside: true, visits: map[string][]Visit{}, started: map[string]int{}}
	er := runlog.NewEventReader(r).Only(runlog.EventRunStart, runlog.EventWorkspace, runlog.EventNodeStart, runlog.EventNodeEnd, runlog.EventJoin)
	first := true
	for {
		ev, err := er.NextEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch e := ev.(type) {
		case runlog.RunStart:
			if first && e.RunID != "" {
				rec.RunID = e.RunID
			}
		case runlog.Workspace:
			if e.RunID != rec.RunID {
				continue
			}
			rec.Outside = false
			switch {
			case e.Off != "":
				rec.Off = e.Off
			case rec.Before == "" && e.Checkpoint != "":
				rec.Before, rec.Last, rec.Repo, rec.Ref = e.Checkpoint, e.Checkpoint, e.Repo, e.Ref
			}
		case runlog.NodeStart:
			rec.started[e.Node] = max(rec.started[e.Node], e.Visit)
			if _, ok := rec.visits[e.Node]; !ok {
				rec.visits[e.Node] = nil
				rec.nodes = append(rec.nodes, e.Node)
			}
		case runlog.NodeEnd:
			v := Visit{Node: e.Node, Visit: e.Visit, Status: e.Status, Carried: e.RunID != rec.RunID, Branch: er.Branch()}
			if e.Change != nil {
				v.From, v.To = e.Change.From, e.Change.To
				if !v.Carried && v.To != "" && v.Branch == "" {
					rec.Last = v.To
				}
			}
			if _, ok := rec.visits[e.Node]; !ok {
				rec.nodes = append(rec.nodes, e.Node)
			}
			rec.visits[e.Node] = append(rec.visits[e.Node], v)
		case runlog.Join:
			if e.RunID == rec.RunID && e.Checkpoint != "" && er.Branch() == "" {
				rec.Last = e.Checkpoint // the branches merged into the working tree
			}
		}
		first = false
	}
	return rec, nil
}

// Check says why the run has no checkpoints to look at, nil when it has.
func (rec *Record) Check() error {
	switch {
	case rec.Before != "":
		return nil
	case rec.Outside:
		return &Error{Msg: fmt.Sprintf("run %s has no checkpoints: it ran outside a git repository", rec.RunID),
			Hint: "dtree diff and dtree undo need a git repository: dtree records what each step changes only for a run in one (git init makes one)"}
	}
	return &Error{Msg: fmt.Sprintf("run %s has no checkpoints: %s", rec.RunID, rec.Off),
		Hint: "dtree diff and dtree undo need the checkpoints a run takes in a git repository; this run took none"}
}

// Nodes are the nodes that ran, in the order they were first entered.
func (rec *Record) Nodes() []string { return append([]string{}, rec.nodes...) }

// Find is the visit spec names: NODE, its last visit, or NODE@VISIT.
// known, when not nil, says whether a node is one of the chart's, for an
// error that tells a node that did not run from one that is not there.
func (rec *Record) Find(spec string, known func(string) bool) (Visit, error) {
	node, visit := spec, -1 // -1: the last
	if _, ok := rec.visits[spec]; !ok {
		if i := strings.LastIndexByte(spec, '@'); i > 0 {
			if n, err := strconv.Atoi(spec[i+1:]); err == nil && n >= 0 {
				node, visit = spec[:i], n
			}
		}
	}
	visits, ran := rec.visits[node]
	if !ran {
		ranList := rec.listNodes()
		if known != nil && known(node) {
			return Visit{}, &Error{Msg: fmt.Sprintf("node %s did not run in run %s", node, rec.RunID),
				Hint: "give a node that ran: " + ranList}
		}
		return Visit{}, &Error{Msg: fmt.Sprintf("run %s has no node %s", rec.RunID, node),
			Hint: "give a node that ran, by its id: " + ranList}
	}
	n := rec.started[node]
	if visit == -1 {
		if len(visits) == 0 {
			return Visit{}, &Error{Msg: fmt.Sprintf("node %s did not finish its visit %d in run %s: no checkpoint was taken after it", node, n, rec.RunID),
				Hint: "the whole run's change (dtree diff " + rec.RunID + ") has what it did"}
		}
		return rec.checked(visits[len(visits)-1])
	}
	for _, v := range visits {
		if v.Visit == visit {
			return rec.checked(v)
		}
	}
	if visit >= 1 && visit <= n {
		return Visit{}, &Error{Msg: fmt.Sprintf("node %s did not finish its visit %d in run %s: no checkpoint was taken after it", node, visit, rec.RunID),
			Hint: "the whole run's change (dtree diff " + rec.RunID + ") has what it did"}
	}
	hint := fmt.Sprintf("give %s@1 to %s@%d, or %s for its last visit", node, node, n, node)
	if n == 1 {
		hint = fmt.Sprintf("give %s@1, or %s", node, node)
	}
	return Visit{}, &Error{Msg: fmt.Sprintf("node %s has no visit %d in run %s: it ran %s", node, visit, rec.RunID, visitRange(node, n)),
		Hint: hint}
}

// checked is v, or why it has no checkpoints.
func (rec *Record) checked(v Visit) (Visit, error) {
	if v.From == "" || v.To == "" {
		why := "checkpoints were off"
		if rec.Off != "" {
			why = "checkpoints stopped: " + rec.Off
		}
		return Visit{}, &Error{Msg: fmt.Sprintf("node %s's visit %d in run %s has no checkpoints: %s", v.Node, v.Visit, rec.RunID, why)}
	}
	return v, nil
}

func visitRange(node string, n int) string {
	if n == 1 {
		return "once (" + node + "@1)"
	}
	return fmt.Sprintf("%d times (%s@1 to %s@%d)", n, node, node, n)
}

// listNodes is the nodes that ran, as a line, at most MaxListed.
func (rec *Record) listNodes() string {
	if len(rec.nodes) == 0 {
		return "none did"
	}
	list := rec.nodes[:min(len(rec.nodes), MaxListed)]
	s := strings.Join(list, ", ")
	if more := len(rec.nodes) - len(list); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
