package run

import (
	"encoding/json"
	"time"

	"github.com/dtree-dev/dtree/types"
)

// Run and node statuses.
const (
	StatusRunning     = "running"
	StatusSucceeded   = "succeeded"
	StatusFailed      = "failed"
	StatusLimit       = "limit_reached"
	StatusInterrupted = "interrupted"
	// StatusLogWriteFailed: the run stopped because its logs could not be
	// written (a full disk); a node stopped by it has its response.
	StatusLogWriteFailed = "log_write_failed"
)

// Summary is a run's outcome: what `dtree run --json` prints and, in part,
// short.json. Arrays are never null.
type Summary struct {
	FormatVersion int              `json:"format_version"`
	RunID         string           `json:"run_id"`
	Title         string           `json:"title"`
	Source        string           `json:"source"`
	Page          string           `json:"page"`
	Status        string           `json:"status"`
	ExitCode      int              `json:"exit_code"`
	Error         string           `json:"error,omitempty"`
	Path          []string         `json:"path"`
	Nodes         []NodeResult     `json:"nodes"`
	Usage         types.UsageTotal `json:"usage"` // every call's
	Started       time.Time        `json:"started"`
	Ended         time.Time        `json:"ended"`
	DurationMS    int64            `json:"duration_ms"`
	Logs          Logs             `json:"logs"`
	LogError      string           `json:"log_error,omitempty"`
	// EventsUnwritten counts the events, run_end the last, that could not
	// be written to events.jsonl.
	EventsUnwritten int `json:"events_unwritten,omitempty"`
	// DryRun marks a --dry-run: no agent ran, and there are no logs.
	DryRun bool `json:"dry_run,omitempty"`
	// Budget is the run's budget and what it could not count; nil when
	// the run has none.
	Budget *Budget `json:"budget,omitempty"`
	// Resumed is what a resumed run took from the run before it
	// (readme/resume.md): its steps are in Nodes and Path, their time is
	// not in DurationMS, which is this run's. nil for a run not resumed.
	Resumed *Resumed `json:"resumed,omitempty"`

	// shortNodes is short.json's "nodes" array without its brackets: each
	// of Nodes encoded once, appended as it finished. It only grows, so
	// a prefix handed to the background writer never changes under it.
	shortNodes []byte
	shortDone  int // how many of Nodes are in shortNodes
}

// Resumed is what a resumed run took from the run before it.
type Resumed struct {
	From  string `json:"from"`  // the run's id
	Steps int    `json:"steps"` // the steps taken, first in Nodes
	// DurationMS is what those steps took, each from its node_start to
	// its node_end, summed.
	DurationMS int64 `json:"duration_ms"`
}

// Logs are the run's log files, empty when not written.
type Logs struct {
	Dir    string `json:"dir"`
	Events string `json:"events"`
	Short  string `json:"short"`
	Long   string `json:"long"`
	// Answers is answers.yaml: every reply, for --answers (readme/replay.md).
	Answers string `json:"answers"`
	// Graph is graph.svg: the chart with the run's path marked on it
	// (write_log_graph; readme/graph.md).
	Graph string `json:"graph"`
}

// NodeResult is one visit of a node.
type NodeResult struct {
	ID         string                    `json:"id"`
	Text       string                    `json:"text"`
	Role       string                    `json:"role"`
	CLI        string                    `json:"cli"`
	Visit      int                       `json:"visit"`
	Status     string                    `json:"status"`
	Retries    int                       `json:"retries"`
	Attempts   []Attempt                 `json:"attempts"`
	Response   any                       `json:"response"`
	Validation *types.ValidationResponse `json:"validation"`
	Next       string                    `json:"next"`
	Label      string                    `json:"label"`
	DurationMS int64                     `json:"duration_ms"`
	// Usage sums this visit's calls, work and validation.
	Usage types.UsageTotal `json:"usage"`
	// Error is why the visit did not succeed, "" when it did; Output is
	// the final text of its last attempt, its last 8 KiB (the agent's
	// answer, a command's output). Both are for reports
	// (readme/ci.md), not in the summary: the attempts carry them.
	Error  string `json:"-"`
	Output string `json:"-"`
}

// Attempt is one agent call: the work, or its validation.
type Attempt struct {
	N        int    `json:"n"`
	Purpose  string `json:"purpose"` // "run" or "validate"
	CLI      string `json:"cli"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out"`
	// StoppedAfterAnswer: dtree stopped the CLI, which had printed its
	// final event and not exited; the call ended normally.
	StoppedAfterAnswer bool        `json:"stopped_after_answer"`
	DurationMS         int64       `json:"duration_ms"`
	StdoutBytes        int64       `json:"stdout_bytes"`
	StderrBytes        int64       `json:"stderr_bytes"`
	Usage              types.Usage `json:"usage"`
	// StderrTail is the end of what the CLI printed on stderr (its
	// complaint when it failed), at most agent.MaxStderrTail bytes.
	StderrTail string `json:"stderr_tail"`
	Error      string `json:"error,omitempty"`
}

func newSummary(o Options) *Summary {
	s := &Summary{FormatVersion: 1, Title: o.Chart.Doc.Title, Source: o.Chart.Doc.Source, Page: o.Page.ID,
		Status: StatusRunning, Path: []string{}, Nodes: []NodeResult{}, Started: time.Now().UTC()}
	if o.budgetOn() {
		s.Budget = &Budget{MaxCostUSD: o.MaxCost, MaxTokens: o.MaxTokens, UnknownCalls: []string{}}
	}
	if o.Log != nil {
		s.RunID = o.Log.RunID
		s.Logs = Logs{Dir: o.Log.Dir, Events: o.Log.Dir + "/events.jsonl"}
	}
	return s
}

func (s *Summary) add(r *NodeResult) { s.Nodes = append(s.Nodes, *r) }

// count adds one call to the usage of the run and of the node's visit.
func (s *Summary) count(res *NodeResult, a Attempt) {
	s.Usage.Add(a.Usage, a.DurationMS)
	res.Usage.Add(a.Usage, a.DurationMS)
}

// shortNode is a node's entry in short.json (readme/logs.md#shortjson); the
// attempts are in events.jsonl and the --json summary.
type shortNode struct {
	ID         string                    `json:"id"`
	Name       string                    `json:"name"`
	Role       string                    `json:"role"`
	Visit      int                       `json:"visit"`
	Status     string                    `json:"status"`
	Response   any                       `json:"response"`
	Validation *types.ValidationResponse `json:"validation"`
	Retries    int                       `json:"retries"`
	Next       string                    `json:"next"`
	Label      string                    `json:"label"`
	Usage      types.UsageTotal          `json:"usage"`
}

// shortJSON is short.json in parts to be written one after the other: the
// run's title, status and path, and per node its result, validation and
// retry count. It is rewritten after every node, so each finished node is
// encoded once and kept, and the parts share that encoding: a 200-node run
// neither re-encodes nor copies 20,000 nodes on the way to the next agent.
func (s *Summary) shortJSON() [][]byte {
	for ; s.shortDone < len(s.Nodes); s.shortDone++ {
		n := &s.Nodes[s.shortDone]
		b, _ := json.Marshal(shortNode{ID: n.ID, Name: firstLine(n.Text), Role: n.Role, Visit: n.Visit,
			Status: n.Status, Response: n.Response, Validation: n.Validation, Retries: n.Retries,
			Next: n.Next, Label: n.Label, Usage: n.Usage})
		if s.shortDone > 0 {
			s.shortNodes = append(s.shortNodes, ",\n"...)
		}
		s.shortNodes = append(s.shortNodes, b...)
	}
	head, _ := json.Marshal(struct {
		FormatVersion int              `json:"format_version"`
		RunID         string           `json:"run_id"`
		Title         string           `json:"title"`
		Source        string           `json:"source"`
		Status        string           `json:"status"`
		Error         string           `json:"error,omitempty"`
		Path          []string         `json:"path"`
		Usage         types.UsageTotal `json:"usage"`
		Graph         string           `json:"graph,omitempty"`
	}{s.FormatVersion, s.RunID, s.Title, s.Source, s.Status, s.Error, s.Path, s.Usage, s.Logs.Graph})
	head = append(head[:len(head)-1], ",\n\"nodes\": [\n"...)
	return [][]byte{head, s.shortNodes[:len(s.shortNodes):len(s.shortNodes)], []byte("\n]}\n")}
}
