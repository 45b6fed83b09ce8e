package runlog

import (
	"encoding/json"

	"github.com/dtree-dev/dtree/types"
)

// EventType names an event of events.jsonl: the line's "event" field.
// A new kind gets a constant here, a struct below and a case in
// decodeEvent (readme/dev.md).
type EventType string

// The events a run writes, in the order it writes them (readme/logs.md).
const (
	EventRunStart         EventType = "run_start"
	EventNodeStart        EventType = "node_start"
	EventAgentCall        EventType = "agent_call"
	EventDecision         EventType = "decision"
	EventValidation       EventType = "validation"
	EventValidationFailed EventType = "validation_failed"
	EventRetry            EventType = "retry"
	EventNodeEnd          EventType = "node_end"
	EventEnd              EventType = "end"
	EventRunEnd           EventType = "run_end"
	EventVarUnset         EventType = "var_unset"
	EventVarNUL           EventType = "var_nul"
	EventFallback         EventType = "fallback"
	EventToolCall         EventType = "tool_call"
	EventToolCallsLeftOut EventType = "tool_calls_left_out"
	EventWorkspace        EventType = "workspace"
	EventRollback         EventType = "rollback"
	EventOutOfScope       EventType = "out_of_scope"
	EventTreeRestored     EventType = "tree_restored"
	EventApprovalAsked    EventType = "approval_asked"
	EventApprovalGiven    EventType = "approval_given"
	EventBranchStart      EventType = "branch_start"
	EventBranchEnd        EventType = "branch_end"
	EventJoin             EventType = "join"
)

// Event is one line of events.jsonl: one of the structs of this file. Each
// is written as {"time", "event", then its fields}; the fields are
// declared in name order, the order the log has always had them in, and
// RunID is the log's own (Log.Event fills it in).
type Event interface {
	Type() EventType
	// withRunID returns the event with its RunID set: the set of events
	// is closed, each one a struct of this file.
	withRunID(id string) Event
}

// RunStart is the first event of a run: what it runs, where, and how.
type RunStart struct {
	// Answers is the answers file a replayed run (--answers) read.
	Answers     string `json:"answers,omitempty"`
	Chart       string `json:"chart"`             // the chart's title
	Context     string `json:"context,omitempty"` // --context, "" for path
	GraphDigest string `json:"graph_digest"`      // chart.Digest of the page walked
	MaxSteps    int    `json:"max_steps"`
	Model       string `json:"model,omitempty"` // --model
	NoValidate  bool   `json:"no_validate"`
	// OnlyBranch is the fork branch a run of one branch alone ran
	// (dtree run --branch, readme/ci.md), which its resume keeps. Not
	// "branch": that is a branch's event's own, after "event".
	OnlyBranch string `json:"only_branch,omitempty"`
	Page       string `json:"page"`
	// ResumeAt is the node a resumed run went on at (readme/resume.md),
	// and ResumedFrom the run it went on from: the steps before are that
	// run's, their lines copied after this one.
	ResumeAt    string `json:"resume_at,omitempty"`
	ResumedFrom string `json:"resumed_from,omitempty"`
	RunID       string `json:"run_id"`
	// Settings are every setting's effective value, as `dtree settings
	// get` prints it.
	Settings map[string]string `json:"settings"`
	Source   string            `json:"source"` // the chart's file, or stdin
	Start    string            `json:"start"`  // the start node's id
	// Vars are the run's variables and their values
	// (readme/context.md#variables), masked as every value is.
	Vars    map[string]string `json:"vars,omitempty"`
	Workdir string            `json:"workdir"`
}

// NodeStart is a node entered: its visit-th time.
type NodeStart struct {
	CLI   string `json:"cli"`
	Node  string `json:"node"`
	Role  string `json:"role"` // process or decision
	RunID string `json:"run_id"`
	Visit int    `json:"visit"`
}

// AgentCall is an agent call that has ended, for the node's attempt and
// purpose (run or validate).
type AgentCall struct {
	// Argv is the command run, the prompt replaced by "<prompt: N bytes>".
	Argv               []string    `json:"argv"`
	Attempt            int         `json:"attempt"`
	CLI                string      `json:"cli"`
	DurationMS         int64       `json:"duration_ms"` // dtree's own clock
	Error              string      `json:"error"`       // "" when the call succeeded
	ExitCode           int         `json:"exit_code"`   // -1 when stopped by dtree, killed or never started
	Node               string      `json:"node"`
	Purpose            string      `json:"purpose"` // run or validate
	RunID              string      `json:"run_id"`
	StderrBytes        int64       `json:"stderr_bytes"`
	StderrTail         string      `json:"stderr_tail"`
	StdoutBytes        int64       `json:"stdout_bytes"`
	StoppedAfterAnswer bool        `json:"stopped_after_answer"`
	TimedOut           bool        `json:"timed_out"`
	Usage              types.Usage `json:"usage"` // as the CLI reported it
}

// Decision is a decision's answer matched to one of its labels.
type Decision struct {
	Answer string `json:"answer"` // as the agent wrote it
	Label  string `json:"label"`  // the label it matched
	Next   string `json:"next"`   // the node the label leads to
	Node   string `json:"node"`
	RunID  string `json:"run_id"`
}

// Validation is a validation verdict read for a node's attempt.
type Validation struct {
	Attempt    int                      `json:"attempt"`
	Node       string                   `json:"node"`
	RunID      string                   `json:"run_id"`
	Validation types.ValidationResponse `json:"validation"`
}

// ValidationFailed is a validation call that itself failed: its CLI
// failed, or its reply had no readable verdict.
type ValidationFailed struct {
	Attempt int    `json:"attempt"` // the attempt it checked
	Call    int    `json:"call"`    // 1, 2 or 3
	Error   string `json:"error"`
	Node    string `json:"node"`
	RunID   string `json:"run_id"`
}

// VarUnset is a {{node.ID.FIELD}} in a step's text that named a node
// this run has not (yet) taken on its path: it was expanded to "".
type VarUnset struct {
	Node  string `json:"node"` // the step whose text holds it
	Ref   string `json:"ref"`  // as written: "{{node.7.comments}}"
	RunID string `json:"run_id"`
}

// VarNUL is a reference in a step's text or command whose value held NUL
// bytes, or an agent prompt whose run so far did, which no argv or
// environment string can carry: each was replaced by U+FFFD
// (readme/context.md#variables).
type VarNUL struct {
	Node string `json:"node"` // the step whose text or prompt holds it
	NULs int    `json:"nuls"` // how many were replaced
	// Ref is the reference as written ("{{node.7.output}}"); "" for the
	// rest of an agent's prompt.
	Ref   string `json:"ref,omitempty"`
	RunID string `json:"run_id"`
}

// Fallback is a node's CLI failing for an agent reason, its next
// attempt (or, when no call could be made, the same one) made with the
// next CLI of its list (readme/run.md#fallback-clis).
type Fallback struct {
	Attempt int    `json:"attempt"` // the attempt that failed
	From    string `json:"from"`    // the CLI that failed
	Node    string `json:"node"`
	Reason  string `json:"reason"`
	RunID   string `json:"run_id"`
	To      string `json:"to"` // the CLI the next call is made with
}

// ToolCall is one tool call of an agent call, as the CLI's event stream
// told it (readme/logs.md#tool-calls): written when the tool's result came,
// ok or error, or when the agent call ended with the tool still running,
// unfinished. One agent call writes at most MaxToolCalls of them;
// ToolCallsLeftOut counts the rest.
type ToolCall struct {
	// Arg is the tool's main argument, on one line and shortened: a
	// command, a path, a pattern.
	Arg     string `json:"arg,omitempty"`
	Attempt int    `json:"attempt"`
	CLI     string `json:"cli"`
	// File is the file a writing tool wrote (an Edit's path), where the
	// stream says.
	File    string `json:"file,omitempty"`
	N       int    `json:"n"` // its place among the call's tool calls, from 1
	Node    string `json:"node"`
	Purpose string `json:"purpose"` // run or validate
	RunID   string `json:"run_id"`
	Status  string `json:"status"` // ok, error or unfinished
	Tool    string `json:"tool"`   // as the CLI names it: Bash, Edit, shell…
}

// Tool call statuses.
const (
	ToolOK         = "ok"
	ToolError      = "error"
	ToolUnfinished = "unfinished"
)

// MaxToolCalls bounds the tool_call events of one agent call: an agent
// making 10,000 tool calls adds 200 lines and one tool_calls_left_out.
const MaxToolCalls = 200

// ToolCallsLeftOut is the tool calls of one agent call past MaxToolCalls,
// written once when the call ends: how many had no tool_call event.
type ToolCallsLeftOut struct {
	Attempt int    `json:"attempt"`
	CLI     string `json:"cli"`
	LeftOut int    `json:"left_out"`
	Node    string `json:"node"`
	Purpose string `json:"purpose"`
	RunID   string `json:"run_id"`
}

// Retry is an attempt that failed with another one to follow.
type Retry struct {
	Attempt      int `json:"attempt"` // the one that failed
	AttemptsLeft int `json:"attempts_left"`
	// Change is what the failed attempt did to the working tree, nil when
	// checkpoints are off; Rollback says what became of it: attempt
	// (undone, a rollback event before this one) or keep (the retry
	// builds on it) (readme/workspace.md#rollback).
	Change   *types.Change `json:"change,omitempty"`
	Node     string        `json:"node"`
	Reason   string        `json:"reason"` // the critique the next attempt gets
	Rollback string        `json:"rollback,omitempty"`
	RunID    string        `json:"run_id"`
}

// Rollback is a failed attempt's change undone before its retry
// (readme/workspace.md#rollback): the tree is back at Checkpoint, the
// one the attempt started from; Change is what the attempt had done
// (its To, a checkpoint, still has it).
type Rollback struct {
	Attempt    int           `json:"attempt"`
	Change     *types.Change `json:"change"`
	Checkpoint string        `json:"checkpoint"`
	Node       string        `json:"node"`
	RunID      string        `json:"run_id"`
}

// OutOfScope is an attempt's change outside its step's paths, undone
// (readme/workspace.md#scope): Files paths, the first
// types.MaxChangePaths of them with the status of the attempt's change;
// Checkpoint, taken before the undo, still has them. The attempt failed.
type OutOfScope struct {
	Attempt      int                `json:"attempt"`
	Checkpoint   string             `json:"checkpoint"`
	Files        int                `json:"files"`
	Node         string             `json:"node"`
	Paths        []types.PathStatus `json:"paths"`
	PathsLeftOut int                `json:"paths_left_out,omitempty"`
	RunID        string             `json:"run_id"`
}

// TreeRestored is a change a decision or a validation (By: "decision",
// "validation") made to the working tree, undone: the tree is back at
// Checkpoint; Change is what it had done (readme/workspace.md#scope).
type TreeRestored struct {
	Attempt    int           `json:"attempt"`
	By         string        `json:"by"`
	Change     *types.Change `json:"change"`
	Checkpoint string        `json:"checkpoint"`
	Node       string        `json:"node"`
	RunID      string        `json:"run_id"`
}

// NodeEnd is a node that stopped: it succeeded, failed, was interrupted,
// or its logs could not be written. Which fields a line has depends on
// Status (MarshalJSON); a field a line does not have reads as its zero
// value.
type NodeEnd struct {
	// Change is what the visit did to the working tree, between the
	// checkpoints before and after it (readme/workspace.md); nil when
	// checkpoints are off. Written whatever the status.
	Change *types.Change `json:"change,omitempty"`
	// Command is a command step's command as it ran, its references
	// expanded; written on success only.
	Command string `json:"command"`
	Error   string `json:"error"` // why it did not succeed; not written on success
	Label   string `json:"label"` // the label taken, "" for a process; written on success only
	Next    string `json:"next"`  // the next node, "" at the end; written on success only
	Node    string `json:"node"`
	// Output is the final text of the visit's last attempt, its last 8 KiB:
	// the agent's answer or the command's output, as the steps after it
	// see it (a resumed run reads it back). Written on success only.
	Output string `json:"output"`
	// Response is the node's parsed answer, a types.ProcessResponse or a
	// types.DecisionResponse by its role, encoded; null when none was
	// read. Written on success and log_write_failed only.
	Response json.RawMessage  `json:"response"`
	RunID    string           `json:"run_id"`
	Status   string           `json:"status"` // succeeded, failed, interrupted, log_write_failed
	Usage    types.UsageTotal `json:"usage"`  // the visit's calls summed
	// Validation is the last verdict read, nil when not validated; as
	// Response, written on success and log_write_failed only.
	Validation *types.ValidationResponse `json:"validation"`
	Visit      int                       `json:"visit"`
}

// End is the run reaching its end: an end terminator, or a process node
// with no outgoing line.
type End struct {
	Node  string `json:"node"`
	RunID string `json:"run_id"`
}

// RunEnd is the last event of a run.
type RunEnd struct {
	// Change is what the whole run did to the working tree, from the
	// checkpoint before it to the one after its last step
	// (readme/workspace.md); nil when checkpoints are off.
	Change   *types.Change    `json:"change,omitempty"`
	Error    string           `json:"error"` // "" on success, "interrupted" when interrupted
	ExitCode int              `json:"exit_code"`
	Path     []string         `json:"path"` // the node ids entered
	RunID    string           `json:"run_id"`
	Status   string           `json:"status"` // succeeded, failed, limit_reached, interrupted, log_write_failed
	Steps    int              `json:"steps"`  // node executions, terminators not counted
	Usage    types.UsageTotal `json:"usage"`  // every call of the run summed
}

// Workspace is where the run's checkpoints are (readme/workspace.md),
// written after run_start: the repository, the run's private ref and the
// checkpoint of the tree before the first step. Off says why there are
// no checkpoints (the setting checkpoints false) or why they stopped (git
// failed), the other fields then empty; a run outside git has no
// workspace event. Worktree and Branch are the run's worktree and its
// branch, with --worktree (readme/workspace.md#worktrees), for the
// resume that goes on in it; there with Off too.
type Workspace struct {
	Branch     string `json:"branch,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`
	Off        string `json:"off,omitempty"`
	Ref        string `json:"ref,omitempty"`
	Repo       string `json:"repo,omitempty"`
	RunID      string `json:"run_id"`
	Worktree   string `json:"worktree,omitempty"`
}

// ApprovalAsked is a run stopped at an approval gate that no answer was
// given for (readme/charts.md#approval-gates): it ends waiting for
// approval, and Resume is the command that answers it.
type ApprovalAsked struct {
	Node   string `json:"node"`
	Resume string `json:"resume"`
	RunID  string `json:"run_id"`
}

// ApprovalGiven is an approval gate's answer: approved or rejected, who
// gave it (flag: dtree resume's --approve or --reject; ci_input: the
// same with --ci-input, from the action's inputs; all: --approve-all
// or --reject-all, or the approvals setting; answers: a dry run's
// --answer or a replay's answers file), the reason given, and where the
// run goes on.
type ApprovalGiven struct {
	Answer string `json:"answer"`
	Label  string `json:"label"`
	Next   string `json:"next"`
	Node   string `json:"node"`
	Reason string `json:"reason"`
	RunID  string `json:"run_id"`
	Who    string `json:"who"`
}

// BranchStart is a branch of a fork started (readme/parallel.md): its
// events carry its id, FORK/NAME, as "branch" after "event".
type BranchStart struct {
	// Checkpoint is the fork's checkpoint, which the branch's worktree
	// starts from.
	Checkpoint string `json:"checkpoint,omitempty"`
	First      string `json:"first"` // the branch's first step
	Fork       string `json:"fork"`  // the fork's node
	Name       string `json:"name"`
	RunID      string `json:"run_id"`
	// Worktree is the git worktree the branch's steps work in.
	Worktree string `json:"worktree,omitempty"`
}

// BranchEnd is a branch of a fork ended: at the join (succeeded), or
// failed or stopped on the way (interrupted when another branch stopped
// it).
type BranchEnd struct {
	// Checkpoint is the branch's last checkpoint: what it changed, from
	// the fork's, is what the join merges.
	Checkpoint string   `json:"checkpoint,omitempty"`
	Error      string   `json:"error,omitempty"`
	Path       []string `json:"path"`
	RunID      string   `json:"run_id"`
	Status     string   `json:"status"`
}

// Join is the branches of a fork met at their join: the branches merged,
// in order, the merge's checkpoint, and the files whose changes
// conflicted.
type Join struct {
	Branches   []string `json:"branches"`
	Checkpoint string   `json:"checkpoint,omitempty"`
	Conflicts  []string `json:"conflicts,omitempty"`
	Fork       string   `json:"fork"`
	Mode       string   `json:"mode"` // all or any
	Node       string   `json:"node"`
	RunID      string   `json:"run_id"`
}

// Unknown is an event this version of dtree does not know, from a newer
// one: its name and its whole line. It is read, never written.
type Unknown struct {
	Name EventType
	Line json.RawMessage
}

func (RunStart) Type() EventType         { return EventRunStart }
func (Workspace) Type() EventType        { return EventWorkspace }
func (Rollback) Type() EventType         { return EventRollback }
func (OutOfScope) Type() EventType       { return EventOutOfScope }
func (TreeRestored) Type() EventType     { return EventTreeRestored }
func (NodeStart) Type() EventType        { return EventNodeStart }
func (AgentCall) Type() EventType        { return EventAgentCall }
func (Decision) Type() EventType         { return EventDecision }
func (Validation) Type() EventType       { return EventValidation }
func (ValidationFailed) Type() EventType { return EventValidationFailed }
func (Retry) Type() EventType            { return EventRetry }
func (NodeEnd) Type() EventType          { return EventNodeEnd }
func (End) Type() EventType              { return EventEnd }
func (RunEnd) Type() EventType           { return EventRunEnd }
func (VarUnset) Type() EventType         { return EventVarUnset }
func (VarNUL) Type() EventType           { return EventVarNUL }
func (Fallback) Type() EventType         { return EventFallback }
func (ToolCall) Type() EventType         { return EventToolCall }
func (ToolCallsLeftOut) Type() EventType { return EventToolCallsLeftOut }
func (ApprovalAsked) Type() EventType    { return EventApprovalAsked }
func (ApprovalGiven) Type() EventType    { return EventApprovalGiven }
func (BranchStart) Type() EventType      { return EventBranchStart }
func (BranchEnd) Type() EventType        { return EventBranchEnd }
func (Join) Type() EventType             { return EventJoin }
func (u Unknown) Type() EventType        { return u.Name }

func (e RunStart) withRunID(id string) Event         { e.RunID = id; return e }
func (e NodeStart) withRunID(id string) Event        { e.RunID = id; return e }
func (e Rollback) withRunID(id string) Event         { e.RunID = id; return e }
func (e OutOfScope) withRunID(id string) Event       { e.RunID = id; return e }
func (e TreeRestored) withRunID(id string) Event     { e.RunID = id; return e }
func (e AgentCall) withRunID(id string) Event        { e.RunID = id; return e }
func (e Decision) withRunID(id string) Event         { e.RunID = id; return e }
func (e Validation) withRunID(id string) Event       { e.RunID = id; return e }
func (e ValidationFailed) withRunID(id string) Event { e.RunID = id; return e }
func (e Retry) withRunID(id string) Event            { e.RunID = id; return e }
func (e NodeEnd) withRunID(id string) Event          { e.RunID = id; return e }
func (e End) withRunID(id string) Event              { e.RunID = id; return e }
func (e RunEnd) withRunID(id string) Event           { e.RunID = id; return e }
func (e VarUnset) withRunID(id string) Event         { e.RunID = id; return e }
func (e VarNUL) withRunID(id string) Event           { e.RunID = id; return e }
func (e Fallback) withRunID(id string) Event         { e.RunID = id; return e }
func (e ToolCall) withRunID(id string) Event         { e.RunID = id; return e }
func (e ToolCallsLeftOut) withRunID(id string) Event { e.RunID = id; return e }
func (e Workspace) withRunID(id string) Event        { e.RunID = id; return e }
func (e ApprovalAsked) withRunID(id string) Event    { e.RunID = id; return e }
func (e ApprovalGiven) withRunID(id string) Event    { e.RunID = id; return e }
func (e BranchStart) withRunID(id string) Event      { e.RunID = id; return e }
func (e BranchEnd) withRunID(id string) Event        { e.RunID = id; return e }
func (e Join) withRunID(id string) Event             { e.RunID = id; return e }
func (u Unknown) withRunID(string) Event             { return u }

// MarshalJSON writes the fields node_end has for its status: on success
// no error, and next, label, response and validation; on
// log_write_failed, the error with the response and validation its agents
// gave; otherwise (failed, interrupted) the error only. These are the
// three shapes node_end has always had, now said in one place.
func (e NodeEnd) MarshalJSON() ([]byte, error) {
	switch e.Status {
	case "succeeded":
		return json.Marshal(struct {
			Change     *types.Change             `json:"change,omitempty"`
			Command    string                    `json:"command,omitempty"`
			Label      string                    `json:"label"`
			Next       string                    `json:"next"`
			Node       string                    `json:"node"`
			Output     string                    `json:"output"`
			Response   json.RawMessage           `json:"response"`
			RunID      string                    `json:"run_id"`
			Status     string                    `json:"status"`
			Usage      types.UsageTotal          `json:"usage"`
			Validation *types.ValidationResponse `json:"validation"`
			Visit      int                       `json:"visit"`
		}{e.Change, e.Command, e.Label, e.Next, e.Node, e.Output, e.Response, e.RunID, e.Status, e.Usage, e.Validation, e.Visit})
	case "log_write_failed":
		return json.Marshal(struct {
			Change     *types.Change             `json:"change,omitempty"`
			Error      string                    `json:"error"`
			Node       string                    `json:"node"`
			Response   json.RawMessage           `json:"response"`
			RunID      string                    `json:"run_id"`
			Status     string                    `json:"status"`
			Usage      types.UsageTotal          `json:"usage"`
			Validation *types.ValidationResponse `json:"validation"`
			Visit      int                       `json:"visit"`
		}{e.Change, e.Error, e.Node, e.Response, e.RunID, e.Status, e.Usage, e.Validation, e.Visit})
	}
	return json.Marshal(struct {
		Change *types.Change    `json:"change,omitempty"`
		Error  string           `json:"error"`
		Node   string           `json:"node"`
		RunID  string           `json:"run_id"`
		Status string           `json:"status"`
		Usage  types.UsageTotal `json:"usage"`
		Visit  int              `json:"visit"`
	}{e.Change, e.Error, e.Node, e.RunID, e.Status, e.Usage, e.Visit})
}
