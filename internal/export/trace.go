package export

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dtree-dev/dtree/internal/runlog"
)

// Trace is the way one run went through a chart, read from its
// events.jsonl (readme/logs.md): which nodes it entered and how often, the
// steps it took, its retries, and where it stopped.
type Trace struct {
	RunID  string
	Status string // succeeded, failed, limit_reached, interrupted; running when the log has no run_end
	Error  string
	Page   string
	Start  string
	Source string // the chart the run read, as run_start names it
	// GraphDigest is the chart's Digest of the page the run walked, as
	// run_start records it; "" in logs older than the digest.
	GraphDigest string
	// Visits counts the times the run entered each node; a terminator it
	// reached counts once.
	Visits map[string]int
	// Retries counts each node's attempts after the first, over all its
	// visits.
	Retries map[string]int
	// Stopped is the node the run stopped at when it did not succeed: the
	// node that failed or was interrupted, or the node a visit or step
	// limit kept it from entering, or the node whose agent call the
	// budget held back. StoppedHow says which: failed, interrupted,
	// limit_reached or budget_reached.
	Stopped    string
	StoppedHow string
	// Interrupted are the other nodes whose visit the run's stop cut
	// short: the steps a fork's other branches were in when one failed,
	// or every branch's on an interrupt. nil when there are none.
	Interrupted map[string]bool
	// Steps are the moves from node to node, in the order the log has
	// them: a fork's branches (readme/parallel.md) interleaved as they
	// ran, each move with its branch. A fork's move into each branch is
	// a step from the fork to the branch's first node, on that branch.
	Steps []Step
}

// Step is one move along an edge; Branch is the fork branch it was
// made on (FORK/NAME), "" on the run's own.
type Step struct {
	From, To, Label string
	Branch          string
}

// ReadTrace reads the trace of the run whose log directory is dir.
func ReadTrace(dir string) (*Trace, error) {
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return TraceFrom(f)
}

// TraceFrom reads a trace from an events.jsonl stream with runlog's
// reader, of the events a trace needs only: agent calls, the bulk of a
// log, are not decoded. A line that is not an event is skipped, as is a
// torn last line (a run killed while writing it): the picture shows what
// can be read.
func TraceFrom(r io.Reader) (*Trace, error) {
	t := &Trace{Status: "running", Visits: map[string]int{}, Retries: map[string]int{}}
	rd := runlog.NewEventReader(r).Only(runlog.EventRunStart, runlog.EventNodeStart, runlog.EventRetry,
		runlog.EventNodeEnd, runlog.EventEnd, runlog.EventRunEnd, runlog.EventBranchStart)
	started, entered := false, map[string]bool{}
	last := -1 // the last step a node took, for a limit
	// A fork's node_end names its join as next: the move the branches
	// make. ended holds each node's newest such step, which the fork's
	// first branch_start turns into its move into that branch; into
	// holds the steps so turned.
	ended, into := map[string]int{}, map[int]bool{}
	for {
		ev, err := rd.NextEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch e := ev.(type) {
		case runlog.RunStart:
			started = true
			t.RunID, t.Page, t.Start, t.Source, t.GraphDigest = e.RunID, e.Page, e.Start, e.Source, e.GraphDigest
		case runlog.NodeStart:
			if len(t.Steps) == 0 && t.Start != "" && t.Start != e.Node && t.Visits[t.Start] == 0 {
				t.Visits[t.Start] = 1 // a start terminator, skipped to this node
				t.Steps = append(t.Steps, Step{From: t.Start, To: e.Node})
			}
			t.Visits[e.Node]++
			entered[e.Node] = true
			delete(t.Interrupted, e.Node) // a later visit (a resumed run's)
		case runlog.Retry:
			t.Retries[e.Node]++
		case runlog.NodeEnd:
			switch e.Status {
			case "succeeded":
				if e.Next != "" {
					t.Steps = append(t.Steps, Step{From: e.Node, To: e.Next, Label: e.Label, Branch: rd.Branch()})
					last = len(t.Steps) - 1
					ended[e.Node] = last
				}
			case "interrupted":
				// A branch stopped because another failed: the run
				// stopped at that one, and this visit did not finish.
				if t.Stopped == "" || rd.Branch() == "" {
					t.stop(e.Node, e.Status)
				} else {
					t.interrupted(e.Node)
				}
			case "failed", "budget_reached", "waiting_for_approval":
				t.stop(e.Node, e.Status)
			}
		case runlog.BranchStart:
			s := Step{From: e.Fork, To: e.First, Branch: rd.Branch()}
			if i, ok := ended[e.Fork]; ok && !into[i] && t.Steps[i].From == e.Fork {
				t.Steps[i] = s
				into[i] = true
			} else {
				t.Steps = append(t.Steps, s)
				into[len(t.Steps)-1] = true
			}
		case runlog.End:
			if !entered[e.Node] && t.Visits[e.Node] == 0 {
				t.Visits[e.Node] = 1 // an end terminator
			}
		case runlog.RunEnd:
			t.Status, t.Error = e.Status, e.Error
			if len(t.Steps) == 0 && len(e.Path) >= 2 && !entered[e.Path[1]] {
				// a start terminator leading straight to an end
				t.Steps = append(t.Steps, Step{From: e.Path[0], To: e.Path[1]})
				t.Visits[e.Path[0]], t.Visits[e.Path[1]] = 1, 1
			}
			if len(e.Path) > 0 && t.Visits[e.Path[0]] == 0 {
				t.Visits[e.Path[0]] = 1
			}
		}
	}
	if !started {
		return nil, fmt.Errorf("no run_start event: not the events.jsonl of a dtree run")
	}
	if t.Status == "limit_reached" && last >= 0 {
		t.stop(t.Steps[last].To, t.Status)
	}
	delete(t.Interrupted, t.Stopped)
	if len(t.Interrupted) == 0 {
		t.Interrupted = nil
	}
	return t, nil
}

// stop makes node the one the run stopped at; an interrupted node it
// was stays interrupted.
func (t *Trace) stop(node, how string) {
	if t.StoppedHow == "interrupted" && t.Stopped != node {
		t.interrupted(t.Stopped)
	}
	t.Stopped, t.StoppedHow = node, how
}

func (t *Trace) interrupted(node string) {
	if t.Interrupted == nil {
		t.Interrupted = map[string]bool{}
	}
	t.Interrupted[node] = true
}
