// Package run walks a chart (readme/run.md#what-happens-step-by-step): from
// the start node it sends each process and decision node to its agent CLI,
// validates process results with a second call, retries failed attempts with
// the critique, follows the chosen edge, and logs every step as it happens.
package run

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/replay"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// DefaultMaxSteps bounds a run's node executions
// (readme/run.md#5-loops-and-limits).
const DefaultMaxSteps = 200

// Runner runs one agent call; agent.Run in production.
type Runner func(ctx context.Context, c agent.Call) (agent.Result, error)

// Options configure a run.
type Options struct {
	Chart      *chart.Chart
	Page       types.Page
	Start      string // node id to start from; the page's root when empty
	Registry   *agent.Registry
	Runner     Runner
	Workdir    string
	Env        []string // the agents' base environment
	MaxSteps   int
	NoValidate bool
	// Context is --context: none, previous or path ("" is path); a
	// chart's or node's context may narrow it.
	Context string
	// Vars are the run's variables, {{var.NAME}}: --var, --vars and the
	// chart's defaults, resolved.
	Vars map[string]string
	// MaxCost (US dollars) and MaxTokens bound the run's agent calls
	// (readme/run.md#budgets); 0 is none.
	MaxCost   float64
	MaxTokens int64
	Model     string
	Log       *runlog.Log
	Settings  map[string]string // logged with the run's start
	Progress  Progress
	// Backoff is the wait before attempt n+1 after an agent error on
	// attempt n (exponential: 1s, 2s, 4s … 30s when nil).
	Backoff func(n int) time.Duration
	// Picture, when set, draws the run once it has ended (run_end is in
	// events.jsonl) and returns the file's path, "" when it drew none;
	// short.json and the summary name it. A failure is the summary's
	// log_error, never the run's. It must stop when its context ends: that
	// is the run's, or, for a run already interrupted, one of at most
	// PictureGrace (see drawPicture).
	Picture func(ctx context.Context) (string, error)
	// Resume, when set, makes this run go on from an earlier one
	// (readme/resume.md): its finished steps are taken as this run's, and
	// the walk goes on at Resume.At. Start is then the earlier run's start.
	Resume *Carried
	// Branch, FORK/NAME, runs one branch of a fork alone
	// (readme/ci.md#branches-on-separate-machines): the run walks to the
	// fork, then only that branch, in its own tree, and ends before the
	// join, leaving the patches dtree join applies (onebranch.go).
	Branch string
	// Answers is the answers file the run replays (--answers), for
	// run_start.
	Answers string
	// Workspace is the git work tree of the run's checkpoints
	// (readme/workspace.md); nil when they are off. WorkspaceOff then
	// says why (the setting checkpoints false), for the workspace event;
	// "" outside git, where there is no workspace event.
	Workspace    *workspace.Repo
	WorkspaceOff string
	// Worktree is the run's own worktree (--worktree), whose work tree
	// Workspace then is; nil when the run goes on in the user's checkout.
	Worktree *workspace.Worktree
	// Rollback is the rollback setting, types.RollbackAttempt or
	// RollbackKeep ("" is keep); a node's rollback wins
	// (readme/workspace.md#rollback).
	Rollback string
	// ReplayCommand is the command line that replays this run from its
	// answers.yaml, with the flags that chose its path; answers.yaml says
	// it in its header. Empty: dtree run CHART --answers FILE.
	ReplayCommand string
	// Approval answers the run's approval gates; without an answer a
	// gate stops the run (StatusWaiting, exit 5).
	Approval Approval
	// CallStarted and CallEnded, when set, are called before and after
	// each agent call or command (CallEnded with the call's KeepRunning),
	// while no other branch runs a git command or starts a call: the
	// command ends what the call left running then (procs.Reaper), and
	// neither dtree's own git commands nor a call just starting are among
	// it.
	CallStarted func()
	CallEnded   func(keep bool)
	// Parallel is --parallel: how many agent calls and command steps run
	// at once across the run's branches (readme/parallel.md#limits); below
	// 1 is types.DefaultParallel.
	Parallel int
}

// Progress hears about the run as it goes; the command prints it.
type Progress interface {
	NodeStarted(n *types.ProcessedNode, visit int)
	AttemptStarted(n *types.ProcessedNode, attempt int, cli, purpose string)
	AttemptFailed(n *types.ProcessedNode, attempt int, reason string)
	NodeFinished(r *NodeResult)
}

// UsageWarner is a Progress told of a figure a CLI reported that is not
// one (agent.CheckUsage): it counts as unknown.
type UsageWarner interface {
	UsageWarning(n *types.ProcessedNode, attempt int, cli, msg string)
}

// NodeFailedError is a node that failed every attempt (exit 1).
type NodeFailedError struct {
	Node     string
	Text     string
	Attempts int
	Last     string
}

// errorTextRunes bounds the node text an error quotes: the final error
// line quoted a node's whole first line, 90 KB of it in one chart.
const errorTextRunes = 60

func (e *NodeFailedError) Error() string {
	return fmt.Sprintf("node %s %s failed after %s: %s", e.Node, types.Quote(types.Excerpt(e.Text, errorTextRunes)), types.Plural(e.Attempts, "attempt"), e.Last)
}

// LimitError is a run stopped by max_visits or --max-steps (exit 4).
type LimitError struct {
	Node  string
	Text  string
	Limit string // "max_visits" or "max_steps"
	Value int
}

func (e *LimitError) Error() string {
	if e.Limit == "max_visits" {
		return fmt.Sprintf("node %s %s reached its visit limit (max_visits %d): the run is looping", e.Node, types.Quote(types.Excerpt(e.Text, errorTextRunes)), e.Value)
	}
	return fmt.Sprintf("the run reached %s (--max-steps) at node %s %s", types.Plural(e.Value, "step"), e.Node, types.Quote(types.Excerpt(e.Text, errorTextRunes)))
}

// walker is one run in progress: it walks the run's branches (branch.go)
// and holds what they share.
type walker struct {
	o       Options
	sum     *Summary
	started time.Time
	// mu is held by the branch whose goroutine changes what the branches
	// share (everything below, the summary, the logs' order, the
	// progress); a branch lets go of it only while it waits: on an agent
	// call or a command (call), a backoff (pause), or its fork's branches.
	// cur is the branch holding it: the events it writes are cur's.
	mu  sync.Mutex
	cur *branch
	// forked: the run has started a fork's branches; events and progress
	// name their branch from then on.
	forked bool
	// steps counts the node executions of every branch, for --max-steps.
	steps   int
	replies replay.Recorder // for answers.yaml
	root    *tree           // the run's working tree and its checkpoints
	// gateAnswered: Approval.Answer was given to a gate.
	gateAnswered bool
	limits       *limiter // --parallel and the CLIs' shared backoffs (limits.go)
	// places holds a token for each fork branch running (--parallel,
	// fork.go's enter).
	places chan struct{}
	// parts are the branches of the fork a resumed run goes on inside,
	// by their id in the run resumed (forkresume.go).
	parts map[string]*branch
}

// Walk runs the chart and returns its summary. The error is a
// *NodeFailedError, a *LimitError, a *runlog.WriteError when the logs could
// not be written, the context's error when interrupted, or a setup failure;
// the summary is filled in every case.
func Walk(ctx context.Context, o Options) (*Summary, error) {
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.Backoff == nil {
		o.Backoff = Backoff(time.Second)
	}
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
	w := &walker{o: o, started: time.Now(), root: &tree{dir: o.Workdir}, limits: newLimiter(o.Parallel, time.Now),
		places: make(chan struct{}, cmp.Or(max(o.Parallel, 0), types.DefaultParallel))}
	w.sum = newSummary(o)
	w.cur = newBranch(0, &w.sum.Path, w.root)
	w.mu.Lock() // the run's first branch walks with it; fork.go's branches take turns
	defer w.mu.Unlock()
	w.event(runlog.RunStart{
		Chart: o.Chart.Doc.Title, Source: o.Chart.Doc.Source, Page: o.Page.ID,
		GraphDigest: o.Chart.Digest(o.Page.ID),
		Start:       o.Start, Workdir: o.Workdir, MaxSteps: o.MaxSteps, NoValidate: o.NoValidate,
		Settings: o.Settings, Vars: o.Vars, Model: o.Model, Context: o.Context, Answers: o.Answers,
		ResumedFrom: o.resumedFrom(), ResumeAt: o.resumeAt(), OnlyBranch: o.Branch,
	})
	w.beginWorkspace(ctx)
	defer w.endWorkspace()
	err := w.finish(ctx, w.walk(ctx))
	return w.sum, err
}

// Backoff is the wait before attempt n+1 after an agent error on attempt
// n: base, doubled after each failure, up to 30 times base (1s, 2s, 4s …
// 30s for a base of 1s; readme/run.md#4-attempts-and-retries). A base of
// 0 waits not at all.
func Backoff(base time.Duration) func(n int) time.Duration {
	return func(n int) time.Duration {
		return min(base<<min(max(n-1, 0), 5), 30*base)
	}
}

// resumedFrom and resumeAt are run_start's resumed_from and resume_at.
func (o *Options) resumedFrom() string {
	if o.Resume == nil {
		return ""
	}
	return o.Resume.Start.RunID
}

func (o *Options) resumeAt() string {
	if o.Resume == nil {
		return ""
	}
	return o.Resume.At
}

// walk walks the run: one branch, from the start or from where the run
// it resumes stopped.
func (w *walker) walk(ctx context.Context) error {
	g := w.o.Chart.Graph
	b := w.cur
	resumed := false
	if w.o.Resume != nil {
		var err error
		if resumed, err = w.carry(ctx, b); err != nil {
			return err
		}
		if resumed && w.o.Resume.Fork != nil { // it stopped inside a fork (resume.go)
			if b.cur, err = w.goOnInFork(ctx, b); err != nil {
				return err
			}
		}
	}
	if !resumed {
		var ok bool
		if b.cur, ok = g.Index(w.o.Start); !ok {
			return fmt.Errorf("start node %q is not in the chart", w.o.Start)
		}
		// A start terminator is skipped to its successor; it never reaches
		// an agent. A start marked parallel starts its fork's branches.
		if n := w.node(b.cur); n.Role == types.RoleTerminator {
			b.pass(n.ID)
			if n.Fork != nil {
				next, err := w.forkOrBranch(ctx, b, n, 1)
				if err != nil || next < 0 {
					return err
				}
				b.cur = next
				return w.walkBranch(ctx, b)
			}
			out := g.Out(b.cur)
			if len(out) == 0 {
				return nil
			}
			b.cur, _ = g.Index(out[0].To)
		}
	}
	return w.walkBranch(ctx, b)
}

// walkBranch walks branch b from its node until it reaches an end, its
// fork's join, or stops.
func (w *walker) walkBranch(ctx context.Context, b *branch) error {
	for {
		if b.cur == b.stop { // a fork's branch at its join
			return nil
		}
		n := w.node(b.cur)
		if n.Role == types.RoleTerminator { // an end
			b.pass(n.ID)
			w.event(runlog.End{Node: n.ID})
			return w.branchMissed(b, n)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		b.visits[n.ID]++
		if b.visits[n.ID] > n.MaxVisits {
			return &LimitError{Node: n.ID, Text: firstLine(n.Text), Limit: "max_visits", Value: n.MaxVisits}
		}
		if w.steps++; w.steps > w.o.MaxSteps {
			return &LimitError{Node: n.ID, Text: firstLine(n.Text), Limit: "max_steps", Value: w.o.MaxSteps}
		}
		b.pass(n.ID)
		res, err := w.runNode(ctx, b, n, b.visits[n.ID])
		b.conflicts, b.conflictLabels = nil, nil // a join's, for its visit only
		w.sum.add(res)
		w.o.Progress.NodeFinished(res)
		w.queueShort()
		if err != nil {
			return err
		}
		if err := w.logFailed(); err != nil {
			return err
		}
		if n.Fork != nil { // its lines are branches, all taken
			next, err := w.forkOrBranch(ctx, b, n, b.visits[n.ID])
			if err != nil || next < 0 {
				return err
			}
			b.cur = next
			continue
		}
		if res.Next == "" {
			w.event(runlog.End{Node: n.ID})
			return w.branchMissed(b, n)
		}
		b.cur, _ = w.o.Chart.Graph.Index(res.Next)
	}
}

func (w *walker) node(i int) *types.ProcessedNode { return &w.o.Chart.Nodes[i] }

// runNode runs one visit of a node on branch b: attempts until one
// succeeds or they run out.
func (w *walker) runNode(ctx context.Context, b *branch, n *types.ProcessedNode, visit int) (*NodeResult, error) {
	start := time.Now()
	res := &NodeResult{ID: n.ID, Text: n.Text, Role: n.Role, CLI: n.CLI, Visit: visit, Branch: b.id, Status: StatusFailed,
		Attempts: []Attempt{}}
	w.o.Progress.NodeStarted(n, visit)
	w.event(runlog.NodeStart{Node: n.ID, Visit: visit, Role: n.Role, CLI: n.CLI})
	defer func() { res.DurationMS = time.Since(start).Milliseconds() }()
	g, gerr := w.newGuard(ctx, b.tree, n)
	var v *step

	out := w.o.Chart.Graph.Out(w.index(n.ID))
	labels := make([]string, len(out))
	for i, e := range out {
		labels[i] = e.Label
	}
	// stop ends the node on an error no retry is for: interrupted,
	// validation broken, a CLI that cannot run, logs that cannot be
	// written.
	stop := func(err error) (*NodeResult, error) {
		reason := err.Error()
		ev := runlog.NodeEnd{Node: n.ID, Visit: visit}
		var (
			failed *NodeFailedError
			wrote  *runlog.WriteError
		)
		switch {
		case ctx.Err() != nil:
			res.Status, reason = StatusInterrupted, "interrupted"
		case errors.As(err, new(*BudgetError)):
			res.Status = StatusBudget
		case errors.As(err, new(*WaitingError)):
			res.Status, reason = StatusWaiting, "waiting for approval"
		case errors.As(err, &wrote):
			// Not the node's failure: what its agent answered is kept.
			res.Status = StatusLogWriteFailed
			ev.Response, ev.Validation = encodeResponse(res.Response), res.Validation
		case errors.As(err, &failed):
			reason = failed.Last // the node is named by the event already
		}
		if why := v.stopped(ctx); why != "" {
			reason += "; and " + why
		}
		ev.Status, ev.Error, ev.Usage = res.Status, reason, res.Usage
		res.Error = reason
		res.Change = w.checkpoint(ctx, b.tree, n, visit, g.visit)
		ev.Change = res.Change
		w.event(ev)
		return res, err
	}
	v = &step{w: w, b: b, n: n, out: out, labels: labels, res: res, exitCode: -1, g: g}
	defer v.remember()
	if gerr != nil {
		return stop(gerr)
	}
	kind := kindOf(n)
	var feedback []feedback
	attempts := 1 + n.Retries
	for attempt := 1; attempt <= attempts; attempt++ {
		if attempt > 1 {
			res.Retries++
		}
		g.begin(attempt)
		outcome := kind.attempt(ctx, v, attempt, feedback)
		if outcome.err != nil { // not retried
			return stop(outcome.err)
		}
		if err := v.guardEnd(ctx, attempt, &outcome); err != nil {
			return stop(err)
		}
		if outcome.reason == "" && len(b.conflicts) > 0 {
			// A join asked to resolve its branches' conflicts: not done
			// while a marker is left (fork.go).
			outcome.reason = b.markersLeft()
		}
		if outcome.reason == "" {
			if n.Fork != nil { // every line is taken; the run goes on at the join
				outcome.next, outcome.label = n.Fork.Join, ""
			}
			res.Status = StatusSucceeded
			res.Next, res.Label = outcome.next, outcome.label
			res.Output = types.TailBytes(v.output, maxOutput)
			res.Change = w.checkpoint(ctx, b.tree, n, visit, g.visit)
			ev := runlog.NodeEnd{Change: res.Change, Node: n.ID, Visit: visit, Status: res.Status, Response: encodeResponse(res.Response),
				Validation: res.Validation, Next: res.Next, Label: res.Label, Usage: res.Usage,
				Output: types.TailBytes(v.output, maxOutput)}
			kind.ended(v, &ev)
			w.event(ev)
			return res, nil
		}
		feedback = append(feedback, feedbackFor(attempt, outcome.reason))
		if last := len(res.Attempts) - 1; last >= 0 && res.Attempts[last].Error == "" {
			res.Attempts[last].Error = outcome.reason // why the attempt failed, for the summary
		}
		if outcome.fellBack {
			// Each CLI of the list gets an attempt: a fallback from the
			// last one adds one (readme/run.md#fallback-clis).
			if attempt == attempts {
				attempts++
			}
			w.o.Progress.AttemptFailed(n, attempt, fmt.Sprintf("%s; falling back to %s", outcome.reason, v.cli(attempt+1)))
		} else {
			w.o.Progress.AttemptFailed(n, attempt, outcome.reason)
		}
		if attempt < attempts {
			change, err := g.retry(ctx, attempt)
			if err != nil {
				return stop(err)
			}
			w.event(runlog.Retry{Node: n.ID, Attempt: attempt, Reason: outcome.reason, AttemptsLeft: attempts - attempt,
				Change: change, Rollback: g.rollbackName()})
		}
		if outcome.agentError && attempt < attempts {
			if err := w.flush(); err != nil {
				return stop(err)
			}
			if outcome.fellBack {
				continue // another CLI next: nothing to spare
			}
			if err := w.pause(ctx, w.o.Backoff(attempt)); err != nil {
				return res, err
			}
		}
	}
	last := ""
	if len(feedback) > 0 {
		last = feedback[len(feedback)-1].Reason
	}
	res.Error, res.Output = last, types.TailBytes(v.output, maxOutput)
	// The last attempt's change stays, rollback or not: the node failed,
	// and it is what the user looks at (readme/workspace.md#rollback).
	res.Change = w.checkpoint(ctx, b.tree, n, visit, g.visit)
	w.event(runlog.NodeEnd{Change: res.Change, Node: n.ID, Visit: visit, Status: res.Status, Error: last, Usage: res.Usage})
	return res, &NodeFailedError{Node: n.ID, Text: firstLine(n.Text), Attempts: attempts, Last: last}
}

func (w *walker) index(id string) int {
	i, _ := w.o.Chart.Graph.Index(id)
	return i
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// event logs to events.jsonl; a log that cannot be written is reported
// once on the summary, and the run goes on.
func (w *walker) event(ev runlog.Event) {
	if l, ok := w.o.Progress.(Listener); ok {
		l.Event(ev)
	}
	if w.o.Log == nil {
		return
	}
	if err := w.o.Log.EventOn(w.cur.id, ev); err != nil && w.sum.LogError == "" {
		w.sum.LogError = err.Error()
	}
}

// encodeResponse is a node's response as node_end carries it: the
// encoded types.ProcessResponse or types.DecisionResponse, null for none.
func encodeResponse(r any) json.RawMessage {
	b, err := json.Marshal(r)
	if err != nil { // the response types encode whatever they hold
		return json.RawMessage("null")
	}
	return b
}

// flush writes the events so far to events.jsonl. It comes before every
// agent call, wait and the run's end, so that a run killed while it waits
// on any of them has every event up to it. Its error is logFailed's.
func (w *walker) flush() error {
	if w.o.Log == nil {
		return nil
	}
	_ = w.o.Log.Flush() // its error is the log's Err
	return w.logFailed()
}

// logFailed is the first write of the run's logs that failed, a
// *runlog.WriteError: events.jsonl, long.log or short.json. The run stops
// at it, at the next agent call, wait or node at the latest: its record
// would miss what came after, and the disk that refused the log will not
// take the agents' work either. It is not the node's failure, and no
// retry is made for it.
func (w *walker) logFailed() error {
	if w.o.Log == nil {
		return nil
	}
	return w.o.Log.Err()
}

// queueShort has short.json rewritten with the run so far, in the
// background; finish's saveShort waits for it.
func (w *walker) queueShort() {
	if w.o.Log == nil {
		return
	}
	w.sum.Status = StatusRunning
	w.o.Log.QueueShortFunc(w.sum.shortSnapshot())
}

func (w *walker) saveShort(status string) {
	if w.o.Log == nil {
		return
	}
	w.sum.Status = status
	if err := w.o.Log.ShortJSON(w.sum.shortJSON()...); err != nil && w.sum.LogError == "" {
		w.sum.LogError = err.Error()
	}
}

// finish sets the run's outcome and writes the last events. A run that
// got to its end with logs it could not write, or whose run_end or last
// short.json cannot be written, ends log_write_failed all the same. It
// returns the run's error.
func (w *walker) finish(ctx context.Context, err error) error {
	if err == nil && w.o.Log != nil {
		err = w.o.Log.Wait() // the last node's short.json
	}
	w.outcome(err)
	w.noteLogError()
	w.sum.keepNewest()
	w.sum.Change = w.runChange(ctx)
	w.event(runlog.RunEnd{Status: w.sum.Status, ExitCode: w.sum.ExitCode,
		Error: w.sum.Error, Path: w.sum.Path, Steps: w.sum.Steps(), Usage: w.sum.Usage, Change: w.sum.Change})
	_ = w.flush() // the picture reads events.jsonl
	if w.o.Log == nil || w.o.Log.Unwritten() == 0 {
		w.drawPicture(ctx) // not of a run whose end is not on record
	}
	w.saveShort(w.sum.Status)
	if lerr := w.logFailed(); err == nil && lerr != nil {
		err = lerr
		w.outcome(err)
		w.saveShort(w.sum.Status)
	}
	w.noteLogError()
	w.saveAnswers()
	if w.o.Log != nil {
		w.sum.EventsUnwritten = w.o.Log.Unwritten()
	}
	return err
}

// noteLogError makes the first write of the logs that failed the
// summary's log_error, unless it has an earlier one.
func (w *walker) noteLogError() {
	if lerr := w.logFailed(); lerr != nil && w.sum.LogError == "" {
		w.sum.LogError = lerr.Error()
	}
}

// outcome sets the run's status, exit code and error for how it ended.
func (w *walker) outcome(err error) {
	var (
		failed *NodeFailedError
		limit  *LimitError
		budget *BudgetError
		wrote  *runlog.WriteError
	)
	switch {
	case err == nil:
		w.sum.Status, w.sum.ExitCode = StatusSucceeded, types.ExitOK
	case errors.As(err, &failed), errors.As(err, new(*JoinConflictError)), errors.As(err, new(*ForkError)), errors.As(err, new(*BranchMissedError)):
		w.sum.Status, w.sum.ExitCode = StatusFailed, types.ExitFailed
	case errors.As(err, &limit):
		w.sum.Status, w.sum.ExitCode = StatusLimit, types.ExitLimit
	case errors.As(err, &budget):
		w.sum.Status, w.sum.ExitCode = StatusBudget, types.ExitLimit
	case errors.As(err, new(*WaitingError)):
		w.sum.Status, w.sum.ExitCode = StatusWaiting, types.ExitWaiting
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		w.sum.Status, w.sum.ExitCode = StatusInterrupted, types.ExitInterrupted
		err = errors.New("interrupted")
	case errors.As(err, &wrote):
		// Exit 2, as for a log directory that cannot be created at the
		// start (readme/exit-codes.md): the run's setting, not the chart
		// or an agent, is what has to change.
		w.sum.Status, w.sum.ExitCode = StatusLogWriteFailed, types.ExitUsage
	default:
		w.sum.Status, w.sum.ExitCode = StatusFailed, types.ExitUsage
	}
	if err != nil {
		w.sum.Error = err.Error()
	}
	w.sum.Ended = time.Now().UTC()
	w.sum.DurationMS = time.Since(w.started).Milliseconds()
}

// PictureGrace bounds the drawing of an interrupted run's picture. The
// drawing is linear in the chart and takes milliseconds, but once the
// run's context has ended nothing else would stop it.
const PictureGrace = 5 * time.Second

// drawPicture has the run's picture drawn, after run_end, which it shows.
// An interrupt while it draws stops it: the run ends without a picture,
// and short.json still gets its final status. A run already interrupted
// is drawn too, within PictureGrace.
func (w *walker) drawPicture(ctx context.Context) {
	if w.o.Picture == nil {
		return
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), PictureGrace)
		defer cancel()
	}
	path, err := w.o.Picture(ctx)
	if err != nil {
		switch {
		case errors.Is(err, context.Canceled):
			err = errors.New("interrupted")
		case errors.Is(err, context.DeadlineExceeded):
			err = fmt.Errorf("not done within %s of the interrupt", PictureGrace)
		}
		if w.sum.LogError == "" {
			w.sum.LogError = "draw the run: " + err.Error()
		}
		return
	}
	w.sum.Logs.Graph = path
}

// saveAnswers writes answers.yaml: every reply of the run in the replay
// format, so `dtree run CHART --answers answers.yaml` takes its path again.
func (w *walker) saveAnswers() {
	if w.o.Log == nil {
		return
	}
	path := filepath.Join(w.o.Log.Dir, "answers.yaml")
	replay := w.o.ReplayCommand
	if replay == "" {
		replay = fmt.Sprintf("dtree run %s --answers %s", w.o.Chart.Doc.Source, path)
	}
	header := fmt.Sprintf("Answers recorded by dtree run %s (%s) of %s.\nTake the same path again without an agent:\n  %s",
		w.o.Log.RunID, w.sum.Status, w.o.Chart.Doc.Source, replay)
	b, err := w.replies.YAML(header, w.o.Log.Redactor().String)
	if err == nil {
		err = w.o.Log.WriteFile("answers.yaml", b)
	}
	if err != nil {
		if w.sum.LogError == "" {
			w.sum.LogError = err.Error()
		}
		return
	}
	w.sum.Logs.Answers = path
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return types.Clip(line, maxName)
}

// maxName bounds a node's name, its text's first line, where the logs and
// errors carry it: short.json rewrites every node's name after each node,
// and an 8 MiB one-line prompt would make that file megabytes.
const maxName = 200

type nopProgress struct{}

func (nopProgress) NodeStarted(*types.ProcessedNode, int)                    {}
func (nopProgress) AttemptStarted(*types.ProcessedNode, int, string, string) {}
func (nopProgress) AttemptFailed(*types.ProcessedNode, int, string)          {}
func (nopProgress) NodeFinished(*NodeResult)                                 {}
