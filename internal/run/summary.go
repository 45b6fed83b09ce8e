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
	FormatVersion int      `json:"format_version"`
	RunID         string   `json:"run_id"`
	Title         string   `json:"title"`
	Source        string   `json:"source"`
	Page          string   `json:"page"`
	Status        string   `json:"status"`
	ExitCode      int      `json:"exit_code"`
	Error         string   `json:"error,omitempty"`
	Path          []string `json:"path"`
	// Branches are the fork branches the run started
	// (readme/parallel.md), each with its own path, in the order they
	// ended; omitted for a run without a fork.
	Branches []BranchResult `json:"branches,omitempty"`
	// Nodes are the newest KeptSteps node executions; NodesLeftOut
	// counts the earlier ones, which are in events.jsonl only.
	Nodes        []NodeResult     `json:"nodes"`
	NodesLeftOut int              `json:"nodes_left_out,omitempty"`
	Usage        types.UsageTotal `json:"usage"` // every call's
	Started      time.Time        `json:"started"`
	Ended        time.Time        `json:"ended"`
	DurationMS   int64            `json:"duration_ms"`
	Logs         Logs             `json:"logs"`
	LogError     string           `json:"log_error,omitempty"`
	// EventsUnwritten counts the events, run_end the last, that could not
	// be written to events.jsonl.
	EventsUnwritten int `json:"events_unwritten,omitempty"`
	// DryRun marks a --dry-run: no agent ran, and there are no logs.
	DryRun bool `json:"dry_run,omitempty"`
	// Budget is the run's budget and what it could not count; nil when
	// the run has none.
	Budget *Budget `json:"budget,omitempty"`
	// Worktree is where a --worktree run's result is: its worktree, its
	// branch and the commit dtree made of it there
	// (readme/workspace.md#worktrees); nil for a run in the user's
	// checkout. The command fills it in after the walk.
	Worktree *WorktreeResult `json:"worktree,omitempty"`
	// Resumed is what a resumed run took from the run before it
	// (readme/resume.md): its steps are in Nodes and Path, their time is
	// not in DurationMS, which is this run's. nil for a run not resumed.
	Resumed *Resumed `json:"resumed,omitempty"`
	// Change is what the whole run did to the working tree, from the
	// checkpoint before it to the one after its last step
	// (readme/workspace.md); nil when checkpoints are off, and until the
	// run ends.
	Change *types.Change `json:"change,omitempty"`
	// Waiting is the approval gate the run waits at and the commands that
	// answer it; nil unless the status is waiting_for_approval.
	Waiting *Waiting `json:"waiting,omitempty"`

	// shortNodes is short.json's newest node entries, each encoded once
	// as it finished and appended with a ",\n" before it; shortStart holds
	// where each entry starts, shortDone how many of Nodes are in it. The
	// buffer is only appended to, and replaced by a new one when it is
	// cut, so a part handed to the background writer never changes under
	// it.
	shortNodes []byte
	shortStart []int
	shortDone  int
	// shortBranches is short.json's branches, each encoded once as it
	// ended, as shortNodes: where each starts, how many of Branches are
	// in it.
	shortBranches     []byte
	shortBranchStart  []int
	shortBranchesDone int
	shortBranchesCut  int // the branches cut from shortBranches
	// mask masks an encoded part of short.json (the log's
	// Redactor.JSON): each entry once, as it is encoded, not the whole
	// document at every rewrite; nil masks nothing (no log).
	mask func([]byte) []byte
}

// KeptSteps bounds what a run keeps of its steps for the summary
// (readme/run.md#fields): the newest 1,000 node executions. A longer run's
// earlier steps are in events.jsonl, and what is kept of each stays the
// same at any length of run.
const KeptSteps = 1000

// ShortSteps bounds short.json (readme/logs.md#shortjson): its newest 200
// node executions and path entries, the default --max-steps, so that a
// run within the default limit has them all. short.json is rewritten
// after every node, and each rewrite costs the same at any length of run.
const ShortSteps = DefaultMaxSteps

// Steps is how many node executions the run has finished, those left out
// of Nodes included.
func (s *Summary) Steps() int { return s.NodesLeftOut + len(s.Nodes) }

// BranchResult is a fork branch of the run: its id (FORK/NAME), its
// fork and name, the join where it meets the others, how it ended and
// the nodes it went through (the join not included).
type BranchResult struct {
	ID     string   `json:"id"`
	Fork   string   `json:"fork"`
	Name   string   `json:"name"`
	Join   string   `json:"join"`
	Status string   `json:"status"`
	Error  string   `json:"error,omitempty"`
	Path   []string `json:"path"`
}

// WorktreeResult is a --worktree run's result: Changed is false when
// the run changed no file, Commit then the one the branch started at.
type WorktreeResult struct {
	Dir     string `json:"dir"`
	Branch  string `json:"branch"`
	Commit  string `json:"commit"`
	Changed bool   `json:"changed"`
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
	ID    string `json:"id"`
	Text  string `json:"text"`
	Role  string `json:"role"`
	CLI   string `json:"cli"`
	Visit int    `json:"visit"`
	// Branch is the fork branch the visit ran on (FORK/NAME,
	// readme/parallel.md), "" on the run's own.
	Branch     string                    `json:"branch,omitempty"`
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
	// ToolCalls counts the tool calls of the visit's agent calls, as
	// their event streams told them; Tools are the newest LastTools of
	// them, oldest first. Files are the files the visit's tools wrote
	// (an Edit's path), in the order first written, at most MaxFiles;
	// FilesLeftOut counts the writes past them
	// (readme/logs.md#shortjson).
	ToolCalls int `json:"tool_calls,omitempty"`
	// Change is what the visit did to the working tree
	// (readme/workspace.md); nil when checkpoints are off.
	Change       *types.Change `json:"change,omitempty"`
	Tools        []ToolUse     `json:"tools,omitempty"`
	Files        []string      `json:"files,omitempty"`
	FilesLeftOut int           `json:"files_left_out,omitempty"`
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
		s.mask = o.Log.Redactor().JSON
	}
	return s
}

// masked is b masked for short.json.
func (s *Summary) masked(b []byte) []byte {
	if s.mask == nil {
		return b
	}
	return s.mask(b)
}

// add records a finished node execution. Nodes keeps the newest
// KeptSteps; it is cut back to them when it reaches twice that, so that
// each execution is copied at most once more, and once more at the end
// (keepNewest).
func (s *Summary) add(r *NodeResult) {
	s.Nodes = append(s.Nodes, *r)
	if len(s.Nodes) >= 2*KeptSteps {
		s.keepNewest()
	}
}

// keepNewest cuts Nodes to its newest KeptSteps entries.
func (s *Summary) keepNewest() {
	drop := len(s.Nodes) - KeptSteps
	if drop <= 0 {
		return
	}
	s.encodeShort() // the dropped ones are encoded before they go
	n := copy(s.Nodes, s.Nodes[drop:])
	clear(s.Nodes[n:]) // their texts and outputs go with them
	s.Nodes = s.Nodes[:n]
	s.NodesLeftOut += drop
	s.shortDone -= drop
}

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
	Branch     string                    `json:"branch,omitempty"` // as NodeResult's
	Status     string                    `json:"status"`
	Response   any                       `json:"response"`
	Validation *types.ValidationResponse `json:"validation"`
	Retries    int                       `json:"retries"`
	Next       string                    `json:"next"`
	Label      string                    `json:"label"`
	Usage      types.UsageTotal          `json:"usage"`
	// The visit's tool calls and the files they wrote, as NodeResult.
	ToolCalls    int       `json:"tool_calls,omitempty"`
	Tools        []ToolUse `json:"tools,omitempty"`
	Files        []string  `json:"files,omitempty"`
	FilesLeftOut int       `json:"files_left_out,omitempty"`
	// Change is the visit's, its paths cut to ShortPaths.
	Change *types.Change `json:"change,omitempty"`
}

// ShortPaths bounds the paths of each change short.json lists: it is
// rewritten after every node, and 200 steps of 100 paths each would make
// each rewrite a megabyte. The --json summary and node_end list
// types.MaxChangePaths.
const ShortPaths = 10

// shortChange is c with its paths cut to ShortPaths, the rest counted in
// PathsLeftOut; c itself when it has no more.
func shortChange(c *types.Change) *types.Change {
	if c == nil || len(c.Paths) <= ShortPaths {
		return c
	}
	b := *c
	b.Paths = c.Paths[:ShortPaths:ShortPaths]
	b.PathsLeftOut = c.PathsLeftOut + len(c.Paths) - ShortPaths
	return &b
}

// encodeShort encodes the node executions not yet in shortNodes, and
// cuts shortNodes to its newest ShortSteps entries once it holds twice
// that, into a new buffer.
func (s *Summary) encodeShort() {
	for ; s.shortDone < len(s.Nodes); s.shortDone++ {
		n := &s.Nodes[s.shortDone]
		b, _ := json.Marshal(shortNode{ID: n.ID, Name: firstLine(n.Text), Role: n.Role, Visit: n.Visit, Branch: n.Branch,
			Status: n.Status, Response: n.Response, Validation: n.Validation, Retries: n.Retries,
			Next: n.Next, Label: n.Label, Usage: n.Usage,
			ToolCalls: n.ToolCalls, Tools: n.Tools, Files: n.Files, FilesLeftOut: n.FilesLeftOut,
			Change: shortChange(n.Change)})
		b = s.masked(b)
		s.shortStart = append(s.shortStart, len(s.shortNodes))
		s.shortNodes = append(append(s.shortNodes, ",\n"...), b...)
	}
	s.shortNodes, s.shortStart, _ = keepNewestEntries(s.shortNodes, s.shortStart)
}

// keepNewestEntries cuts entries (encoded one after the other, each
// starting where starts says) to the newest ShortSteps once there are
// twice that, into a new buffer: a part of the old one handed to the
// background writer never changes under it. It returns how many it
// dropped.
func keepNewestEntries(entries []byte, starts []int) ([]byte, []int, int) {
	if len(starts) < 2*ShortSteps {
		return entries, starts, 0
	}
	drop := len(starts) - ShortSteps
	from := starts[drop]
	kept := make([]byte, len(entries)-from, 2*(len(entries)-from))
	copy(kept, entries[from:])
	n := copy(starts, starts[drop:])
	starts = starts[:n]
	for i := range starts {
		starts[i] -= from
	}
	return kept, starts, drop
}

// shortJSON is short.json in parts to be written one after the other: the
// run's title, status and path, and per node its result, validation and
// retry count. It is rewritten after every node, so each finished node is
// encoded once and kept, and the parts share that encoding: a 200-node run
// neither re-encodes nor copies 20,000 nodes on the way to the next agent.
// It holds the newest ShortSteps node executions and path entries, and says
// how many earlier ones it leaves out, so that each rewrite costs the same
// however long the run has gone.
func (s *Summary) shortJSON() [][]byte { return s.shortSnapshot()() }

// shortSnapshot is shortJSON as it is now, to be built later, in the
// background: it holds only what does not change as the run goes on (the
// path and shortNodes are only appended to), and copies the rest.
func (s *Summary) shortSnapshot() func() [][]byte {
	s.encodeShort()
	s.encodeBranches()
	path, pathLeftOut := s.Path[:len(s.Path):len(s.Path)], 0
	if len(path) > ShortSteps {
		pathLeftOut = len(path) - ShortSteps
		path = path[pathLeftOut:]
	}
	first := max(len(s.shortStart)-ShortSteps, 0)
	nodes := []byte("\n")
	if len(s.shortStart) > 0 { // from the "\n" after the first entry's ","
		nodes = s.shortNodes[s.shortStart[first]+1 : len(s.shortNodes) : len(s.shortNodes)]
	}
	head := shortHead{s.FormatVersion, s.RunID, s.Title, s.Source, s.Status, s.Error, path, pathLeftOut, 0, s.Usage, s.Logs.Graph,
		s.NodesLeftOut + s.shortDone - (len(s.shortStart) - first), shortChange(s.Change)}
	// the branches, after the head and before the nodes; none without a
	// fork. shortBranches is only appended to, as shortNodes.
	var branches []byte
	if k := len(s.shortBranchStart); k > 0 {
		firstB := max(k-ShortSteps, 0)
		head.BranchesLeftOut = s.shortBranchesCut + firstB
		branches = s.shortBranches[s.shortBranchStart[firstB]+1 : len(s.shortBranches) : len(s.shortBranches)]
	}
	mask := s.masked
	return func() [][]byte {
		b, _ := json.Marshal(head)
		b = mask(b)
		b = b[:len(b)-1]
		if branches == nil {
			return [][]byte{append(b, ",\n\"nodes\": ["...), nodes, []byte("\n]}\n")}
		}
		return [][]byte{append(b, ",\n\"branches\": ["...), branches, []byte("\n],\n\"nodes\": ["), nodes, []byte("\n]}\n")}
	}
}

// shortBranch is a fork branch's entry in short.json: BranchResult, its
// path the newest ShortSteps nodes and how many earlier ones it leaves
// out.
type shortBranch struct {
	BranchResult
	PathLeftOut int `json:"path_left_out,omitempty"`
}

// encodeBranches encodes the branches not yet in shortBranches, and cuts
// it to its newest ShortSteps entries once it holds twice that, as
// encodeShort does the nodes.
func (s *Summary) encodeBranches() {
	for ; s.shortBranchesDone < len(s.Branches); s.shortBranchesDone++ {
		r := &s.Branches[s.shortBranchesDone]
		sb := shortBranch{BranchResult: *r}
		if sb.Path == nil {
			sb.Path = []string{}
		}
		if len(sb.Path) > ShortSteps {
			sb.PathLeftOut = len(sb.Path) - ShortSteps
			sb.Path = sb.Path[sb.PathLeftOut:]
		}
		b, _ := json.Marshal(sb)
		b = s.masked(b)
		s.shortBranchStart = append(s.shortBranchStart, len(s.shortBranches))
		s.shortBranches = append(append(s.shortBranches, ",\n"...), b...)
	}
	var dropped int
	s.shortBranches, s.shortBranchStart, dropped = keepNewestEntries(s.shortBranches, s.shortBranchStart)
	s.shortBranchesCut += dropped
}

// shortHead is short.json before its nodes (readme/logs.md#shortjson).
type shortHead struct {
	FormatVersion int      `json:"format_version"`
	RunID         string   `json:"run_id"`
	Title         string   `json:"title"`
	Source        string   `json:"source"`
	Status        string   `json:"status"`
	Error         string   `json:"error,omitempty"`
	Path          []string `json:"path"`
	PathLeftOut   int      `json:"path_left_out,omitempty"`
	// BranchesLeftOut counts the branches before the newest ShortSteps;
	// the branches themselves follow the head, before its nodes.
	BranchesLeftOut int              `json:"branches_left_out,omitempty"`
	Usage           types.UsageTotal `json:"usage"`
	Graph           string           `json:"graph,omitempty"`
	NodesLeftOut    int              `json:"nodes_left_out,omitempty"`
	// Change is the run's, once it has ended.
	Change *types.Change `json:"change,omitempty"`
}
