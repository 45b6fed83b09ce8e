package run

import (
	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// What the run makes of an agent's event stream as it arrives
// (readme/run.md#what-the-agent-is-doing, readme/dev.md#run-events): each
// tool call becomes a tool_call event, written through w.event like every
// event, which hands it to a Progress that listens (Listener: -v's lines,
// GitHub's group); the same code keeps the step's record of its tool calls
// and files (short.json, the --json summary, JUnit, the job summary); and
// every activity, usage included, goes to a Progress that watches
// (Watcher: the live line).

// Watcher is a Progress that hears each activity of an agent's event
// stream as it arrives, from the goroutine reading the agent's output:
// what the live line shows. It must return quickly.
type Watcher interface {
	Activity(n *types.ProcessedNode, attempt int, cli, purpose string, a agent.Activity)
}

// Listener is a Progress that hears every event the run writes to
// events.jsonl, as it is written, tool_call and tool_calls_left_out
// among them (from the goroutine reading the agent's output while a call
// runs).
type Listener interface {
	Event(ev runlog.Event)
}

// ToolUse is one tool call as a step's record keeps it.
type ToolUse struct {
	Tool string `json:"tool"`
	Arg  string `json:"arg,omitempty"`
	// Status is ok, error, unfinished (the call ended while it ran), or
	// running in a record read while it runs.
	Status string `json:"status"`
	n      int    // its place among its call's tool calls
	call   int    // which of the visit's calls
}

// LastTools is how many of a step's tool calls its record keeps, the
// newest; MaxFiles how many files it names.
const (
	LastTools = 5
	MaxFiles  = 50
)

// maxOpenTools bounds the tool calls of one agent call awaiting their
// end: one started past it is written at once, unfinished.
const maxOpenTools = 256

// seen is what the run has seen of one agent call's stream.
type seen struct {
	w            *walker
	n            *types.ProcessedNode
	res          *NodeResult
	attempt      int
	cli, purpose string
	call         int             // which of the visit's calls, for its tools in the record
	tools        int             // tool calls started
	written      int             // tool_call events written
	leftOut      int             // tool calls past runlog.MaxToolCalls
	open         []openTool      // started, not ended, oldest first
	watch        Watcher         // nil when the Progress does not watch
	ev           runlog.ToolCall // the event's fields the call's tools share
}

type openTool struct {
	n               int
	id              string
	tool, arg, file string
}

// see starts what the run sees of one agent call of a visit.
func (w *walker) see(n *types.ProcessedNode, res *NodeResult, attempt int, cli, purpose string) *seen {
	s := &seen{w: w, n: n, res: res, attempt: attempt, cli: cli, purpose: purpose, call: len(res.Attempts) + 1,
		ev: runlog.ToolCall{Node: n.ID, Attempt: attempt, Purpose: purpose, CLI: cli}}
	s.watch, _ = w.o.Progress.(Watcher)
	return s
}

// activity takes one activity of the call's stream.
func (s *seen) activity(a agent.Activity) {
	if s.watch != nil {
		s.watch.Activity(s.n, s.attempt, s.cli, s.purpose, a)
	}
	switch a.Kind {
	case agent.ActivityTool:
		s.tools++
		t := openTool{n: s.tools, id: a.ID, tool: a.Tool, arg: a.Arg, file: a.File}
		s.res.ToolCalls++
		s.res.addTool(ToolUse{Tool: a.Tool, Arg: a.Arg, Status: "running", n: t.n, call: s.call})
		if a.File != "" {
			s.res.addFile(a.File)
		}
		if a.ID == "" || len(s.open) >= maxOpenTools {
			// No end can be matched to it, or too many wait: its
			// event is written now, lest it be lost.
			s.end(t, runlog.ToolUnfinished)
			return
		}
		s.open = append(s.open, t)
	case agent.ActivityToolEnd:
		for i, t := range s.open {
			if t.id == a.ID {
				s.open = append(s.open[:i], s.open[i+1:]...)
				status := runlog.ToolOK
				if a.Failed {
					status = runlog.ToolError
				}
				s.end(t, status)
				return
			}
		}
	}
}

// end writes a tool call's event, within runlog.MaxToolCalls a call, and
// sets its status in the step's record.
func (s *seen) end(t openTool, status string) {
	for i := range s.res.Tools {
		if u := &s.res.Tools[i]; u.n == t.n && u.call == s.call {
			u.Status = status
		}
	}
	if s.written >= runlog.MaxToolCalls {
		s.leftOut++
		return
	}
	s.written++
	ev := s.ev
	ev.N, ev.Tool, ev.Arg, ev.File, ev.Status = t.n, t.tool, t.arg, t.file, status
	s.w.event(ev)
	// events.jsonl is the stream for machines: each tool call is on
	// disk as it ends, not at the next step (at most MaxToolCalls writes
	// a call). Its error is logFailed's, seen when the call returns.
	if s.w.o.Log != nil {
		_ = s.w.o.Log.Flush()
	}
}

// done ends the call: the tool calls still running are written
// unfinished, and how many were left out.
func (s *seen) done() {
	for _, t := range s.open {
		s.end(t, runlog.ToolUnfinished)
	}
	s.open = nil
	if s.leftOut > 0 {
		s.w.event(runlog.ToolCallsLeftOut{Node: s.n.ID, Attempt: s.attempt, Purpose: s.purpose, CLI: s.cli, LeftOut: s.leftOut})
	}
}

// addTool keeps a tool call among the step's newest LastTools.
func (r *NodeResult) addTool(u ToolUse) {
	if len(r.Tools) == LastTools {
		copy(r.Tools, r.Tools[1:])
		r.Tools = r.Tools[:LastTools-1]
	}
	r.Tools = append(r.Tools, u)
}

// addFile names a file the step wrote, once, among the first MaxFiles.
func (r *NodeResult) addFile(f string) {
	for _, g := range r.Files {
		if g == f {
			return
		}
	}
	if len(r.Files) == MaxFiles {
		r.FilesLeftOut++ // a file named again past the bound counts again
		return
	}
	r.Files = append(r.Files, f)
}

// carryTools makes a carried visit's record of its tool calls from its
// tool_call events (readme/resume.md): the same count, the newest
// LastTools as the events have them, and the files.
func (r *NodeResult) carryTools(tools []runlog.ToolCall, leftOut int) {
	r.ToolCalls += len(tools) + leftOut
	for _, t := range tools {
		r.addTool(ToolUse{Tool: t.Tool, Arg: t.Arg, Status: t.Status})
		if t.File != "" {
			r.addFile(t.File)
		}
	}
}
