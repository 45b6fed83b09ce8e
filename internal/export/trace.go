package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	// limit kept it from entering. StoppedHow says which: failed,
	// interrupted or limit_reached.
	Stopped    string
	StoppedHow string
	// Steps are the moves from node to node, in order.
	Steps []Step
}

// Step is one move along an edge.
type Step struct {
	From, To, Label string
}

// event is the part of an events.jsonl line a trace reads.
type event struct {
	Event  string   `json:"event"`
	RunID  string   `json:"run_id"`
	Node   string   `json:"node"`
	Status string   `json:"status"`
	Next   string   `json:"next"`
	Label  string   `json:"label"`
	Error  string   `json:"error"`
	Page   string   `json:"page"`
	Start  string   `json:"start"`
	Source string   `json:"source"`
	Path   []string `json:"path"`
	Digest string   `json:"graph_digest"`
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

// eventKey is how runlog starts each event line, after its time: the
// event's name follows.
var eventKey = []byte(`"event":"`)

// traced says whether an event line may matter to a trace: a line of an
// event the trace reads, or one that does not start as runlog writes
// events. The rest, agent calls above all, are the bulk of a log and are
// not decoded.
func traced(line []byte) bool {
	i := bytes.Index(line[:min(len(line), 80)], eventKey)
	if i < 0 {
		return true
	}
	name, _, _ := bytes.Cut(line[i+len(eventKey):], []byte(`"`))
	switch string(name) {
	case "run_start", "node_start", "retry", "node_end", "end", "run_end":
		return true
	}
	return false
}

// TraceFrom reads a trace from an events.jsonl stream. A line that is not
// JSON (the last line of a run killed while writing it) is skipped.
func TraceFrom(r io.Reader) (*Trace, error) {
	t := &Trace{Status: "running", Visits: map[string]int{}, Retries: map[string]int{}}
	rd := bufio.NewReaderSize(r, 64<<10)
	started, entered := false, map[string]bool{}
	last := -1 // the last step a node took, for a limit
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 && traced(line) {
			var e event
			if json.Unmarshal(line, &e) == nil {
				switch e.Event {
				case "run_start":
					started = true
					t.RunID, t.Page, t.Start, t.Source, t.GraphDigest = e.RunID, e.Page, e.Start, e.Source, e.Digest
				case "node_start":
					if len(t.Steps) == 0 && t.Start != "" && t.Start != e.Node && t.Visits[t.Start] == 0 {
						t.Visits[t.Start] = 1 // a start terminator, skipped to this node
						t.Steps = append(t.Steps, Step{From: t.Start, To: e.Node})
					}
					t.Visits[e.Node]++
					entered[e.Node] = true
				case "retry":
					t.Retries[e.Node]++
				case "node_end":
					switch e.Status {
					case "succeeded":
						if e.Next != "" {
							t.Steps = append(t.Steps, Step{From: e.Node, To: e.Next, Label: e.Label})
							last = len(t.Steps) - 1
						}
					case "failed", "interrupted":
						t.Stopped, t.StoppedHow = e.Node, e.Status
					}
				case "end":
					if !entered[e.Node] && t.Visits[e.Node] == 0 {
						t.Visits[e.Node] = 1 // an end terminator
					}
				case "run_end":
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
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if !started {
		return nil, fmt.Errorf("no run_start event: not the events.jsonl of a dtree run")
	}
	if t.Status == "limit_reached" && last >= 0 {
		t.Stopped, t.StoppedHow = t.Steps[last].To, t.Status
	}
	return t, nil
}
