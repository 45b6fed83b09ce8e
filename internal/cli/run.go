package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/nodeconf"
	"github.com/dtree-dev/dtree/internal/replay"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

type runOptions struct {
	chartFlags
	cli         string
	validateCLI string
	retryCLI    string
	retries     int
	timeout     string
	workdir     string
	logDir      string
	noValidate  bool
	maxSteps    int
	start       string
	page        string
	json        bool
	quiet       bool
	verbose     bool
	dryRun      bool
	answer      []string          // --answer NODE=LABEL, for --dry-run
	answers     string            // --answers FILE, for the replay agent
	model       string            // --model, passed with each CLI's model flag
	context     string            // --context: how much of the run so far prompts get
	vars        map[string]string // the run's variables, resolved
	maxCost     string            // --max-cost, read by the settings' flag layer
	maxTokens   string            // --max-tokens, likewise
	junit       string            // --junit, likewise
	trust       bool              // --trust: ./dtree.yaml is trusted for this run
	budgetUSD   float64           // max_cost, resolved
	budgetTok   int64             // max_tokens, resolved
	// allowUnmetered is --allow-unmetered, read by the settings' flag
	// layer; maxTurns --max-turns, likewise. unmetered are the CLIs a
	// budget could not count (metered.go), for a dry run to say.
	allowUnmetered bool
	maxTurns       string
	unmetered      []string
	worktree       string // --worktree, read by the settings' flag layer
	rollback       string // --rollback, read by the settings' flag layer
	parallel       int    // --parallel, read by the settings' flag layer
	// noCheckpoints is --no-checkpoints: checkpoints false for this run.
	noCheckpoints bool
	// approveAll and rejectAll are --approve-all and --reject-all: every
	// approval gate's answer (readme/charts.md#approval-gates).
	approveAll, rejectAll bool
	// branch is --branch FORK/NAME: run that fork's branch alone
	// (readme/ci.md#branches-on-separate-machines).
	branch string
}

func (a *App) newRun() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run CHART",
		Short: "Run a chart: each step through an agent CLI",
		Long: `Run walks CHART (a file, or - for stdin) from its start: each process node's
text goes to its agent CLI, each decision node picks a labelled branch, each
process result is validated by a second call and retried with the critique
when it fails. A fork's branches (a node marked parallel) run side by side,
each in a git worktree of its own, and their changes are merged at the
join. Every step is logged as it happens under --log-dir.

Exit status: 0 the run finished; 1 a node failed after its attempts; 2 a
usage or settings error, a CLI the chart needs is not installed or cannot
report what a budget bounds (--allow-unmetered), or the run's logs cannot
be written (a full disk); 3 the chart has errors; 4 a
node's max_visits or --max-steps was reached; 5 the run waits at an approval
gate (dtree resume RUN_ID --approve or --reject); 130 interrupted.

Docs: dtree docs run, dtree docs parallel`,
		Example: `  dtree run chart.csv
  dtree run --dry-run chart.csv | less         # every call, none made
  dtree run chart.csv --answers answers.yaml   # the replay agent, no model
  dtree run --cli codex --retries 1 --max-cost 2 chart.csv
  dtree run --json chart.csv > summary.json`,
		Args:        oneChart,
		Annotations: map[string]string{gracefulInterrupt: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.run(cmd.Context(), args[0], o, cmd.Flags())
		},
	}
	f := cmd.Flags()
	o.registerWalk(f)
	f.StringVar(&o.start, "start", "", "start at this node: its id or its text")
	f.StringVar(&o.page, "page", "", "run this page: its id, title or number (default: the first)")
	f.BoolVar(&o.dryRun, "dry-run", false, "start no agent, none need be installed: print each call's CLI, argv and prompt, and the path, on stdout")
	f.StringArrayVar(&o.answer, "answer", nil, "with --dry-run: the branch a decision takes, NODE=LABEL; again for its next visit")
	f.StringVar(&o.answers, "answers", "", "answer every call from this answers file with the replay agent, no model")
	f.StringVar(&o.branch, "branch", "", "run one branch of a fork alone, FORK/NAME as 'dtree plan --matrix' names it, and end before its join")
	return cmd
}

// registerWalk registers the flags of how a run goes, dtree run's and
// dtree resume's.
func (o *runOptions) registerWalk(f *pflag.FlagSet) {
	o.register(f)
	f.StringVar(&o.cli, "cli", "", "default agent CLI for nodes that name none (default_cli)")
	f.StringVar(&o.validateCLI, "validate-cli", "", "CLI that validates results (default_validate_cli; default: the node's CLI)")
	f.StringVar(&o.retryCLI, "retry-cli", "", "CLI for retries (default_retry_cli; default: the node's CLI)")
	f.IntVar(&o.retries, "retries", 0, "retries per node after a failed attempt (default_retry_count, default 3)")
	f.StringVar(&o.timeout, "timeout", "", "time limit of one agent call: 600, 90s, 15m (default_timeout, default 10m)")
	f.StringVar(&o.workdir, "workdir", "", "directory the agents run in (default: the current directory)")
	f.StringVar(&o.logDir, "log-dir", "", "where run logs go (log_dir, default .dtree/runs)")
	f.BoolVar(&o.noValidate, "no-validate", false, "skip validation calls")
	f.IntVar(&o.maxSteps, "max-steps", run.DefaultMaxSteps, "stop after this many node executions")
	f.BoolVar(&o.json, "json", false, "print a JSON summary of the run on stdout")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing on stderr but errors, warnings of files put back, and how to answer a gate the run waits at")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every agent call")
	f.StringVar(&o.maxCost, "max-cost", "", "stop the run once its agent calls cost this many US dollars, in the middle of the call that crosses it where its CLI streams usage (max_cost)")
	f.StringVar(&o.maxTokens, "max-tokens", "", "stop the run once its agent calls used this many tokens, in the middle of the call that crosses it where its CLI streams usage (max_tokens)")
	f.BoolVar(&o.allowUnmetered, "allow-unmetered", false, "run with a budget even if some CLIs cannot report what it bounds: their calls go uncounted (allow_unmetered)")
	f.StringVar(&o.maxTurns, "max-turns", "", "stop an agent call after this many model turns (max_turns; a node's max_turns wins)")
	f.StringVar(&o.junit, "junit", "", "write a JUnit XML report of the run to this file (junit)")
	f.StringVar(&o.rollback, "rollback", "", "attempt: undo a failed attempt's change to the working tree before its retry (needs git); keep: the retry builds on it (rollback, default keep)")
	f.StringVar(&o.context, "context", "", "how much of the run so far each agent prompt gets: path (every step, the default), previous or none")
	f.StringVar(&o.model, "model", "", "model for the agent calls, passed with each CLI's own flag (a node's model metadata wins for its CLI)")
	f.BoolVar(&o.noCheckpoints, "no-checkpoints", false, "record no checkpoints of the working tree, run no git command (checkpoints: false)")
	f.BoolVar(&o.trust, "trust", false, "trust ./dtree.yaml for this run, as DTREE_TRUST=1 does: for a CI job running its own repository")
	f.StringVar(&o.worktree, "worktree", "", "run in a new git worktree on branch dtree/RUN-ID: head (the default of --worktree, from HEAD), dirty (from the working tree, uncommitted changes too) or off (worktree)")
	f.Lookup("worktree").NoOptDefVal = settings.WorktreeHead
	f.BoolVar(&o.approveAll, "approve-all", false, "approve every approval gate without asking: for an unattended run")
	f.BoolVar(&o.rejectAll, "reject-all", false, "reject every approval gate without asking")
	f.IntVar(&o.parallel, "parallel", 0, "how many agent calls and command steps run at once across a fork's branches, 1 or more (parallel, default 4)")
}

// allGates is the answer every gate gets: --approve-all's or
// --reject-all's, else the approvals setting's; "" for none (ask). Both
// flags given is a usage error.
func (o *runOptions) allGates(s *settings.Settings) (string, error) {
	switch {
	case o.approveAll && o.rejectAll:
		return "", &UsageError{Err: errors.New("--approve-all and --reject-all do not go together"),
			Hint: "give one of them, or neither to have the run stop at its gates"}
	case o.approveAll:
		return run.Approve, nil
	case o.rejectAll:
		return run.Reject, nil
	}
	switch s.Approvals {
	case settings.ApprovalsApprove:
		return run.Approve, nil
	case settings.ApprovalsReject:
		return run.Reject, nil
	}
	return "", nil
}

// runError carries a run's exit code through to exitCode; the run's own
// messages were already printed. also holds more "dtree: error:" lines
// and hint a hint, for a run stopped by its logs.
type runError struct {
	code int
	err  error
	also []string
	hint string
}

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

func (a *App) run(ctx context.Context, path string, o runOptions, fs *pflag.FlagSet) (err error) {
	s, err := a.runSettings(o, fs, settings.LoadOptions{})
	if err != nil {
		return err
	}
	var c *chart.Chart
	defer func() {
		// A run refused before it started still has its reports for CI
		// (readme/ci.md): why it did not run.
		if err != nil && !o.dryRun && !a.walked {
			var diags []types.Diagnostic
			if ce := (*ChartError)(nil); c != nil && errors.As(err, &ce) {
				diags = c.Errors
			}
			a.notRunReports(s.JUnit, path, err, diags)
		}
	}()
	reg := agent.NewRegistry(s.CLIs)
	given, err := givenVars(o.varSet, o.varFile)
	if err != nil {
		return err
	}
	c, err = a.loadRunChart(ctx, path, o.format, s, reg, given)
	if err != nil {
		return err
	}
	page, start, err := a.runTarget(c, o, path)
	if err != nil {
		return err
	}
	if o.vars, err = runVars(c.Doc, given); err != nil {
		return err
	}
	var answers *replay.Runner
	if o.answers != "" {
		if answers, err = loadAnswers(c, page, o.answers); err != nil {
			return err
		}
	}
	return a.walkChart(ctx, walkJob{o: o, s: s, reg: reg, c: c, page: page, start: start, answers: answers,
		replay: func(file string) string {
			return replayCommand(path, givenFlags(fs, "format", "config", "trust", "page", "start", "branch", "retries", "max-steps", "no-validate"), file)
		}})
}

// loadRunChart reads the chart to run, CLIs named by the settings and
// variables given; a chart on stdin may never come, and an interrupt
// ends the wait.
func (a *App) loadRunChart(ctx context.Context, path, format string, s *settings.Settings, reg *agent.Registry, given map[string]string) (*chart.Chart, error) {
	c, err := chart.Load(path, ctxReader{ctx: ctx, r: a.In}, chart.Options{Format: format, Defaults: s.Defaults(), Names: reg.Names(),
		Vars: slices.Collect(maps.Keys(given))})
	if err != nil && ctx.Err() != nil {
		return nil, &runError{code: types.ExitInterrupted, err: ctx.Err()}
	}
	return c, err
}

// walkJob is a run ready to start: dtree run's, or dtree resume's.
type walkJob struct {
	o       runOptions
	s       *settings.Settings
	reg     *agent.Registry
	c       *chart.Chart
	page    types.Page
	start   string
	answers *replay.Runner
	// resume is the run this one goes on from (dtree resume), nil for a
	// new run.
	resume *run.Carried
	// replay is the command line that replays the run from its
	// answers.yaml at the path given.
	replay func(answers string) string
	// branch and worktree are the worktree the resumed run went on in
	// (readme/workspace.md#worktrees), "" when it went on in the
	// checkout.
	branch, worktree string
	// approval is dtree resume's answer to the gate the run waited at:
	// run.Approve or run.Reject, and its reason.
	approval, reason string
	// who gave it (run.Approval.Who): "" or run.WhoCIInput.
	who string
}

// walkHeap is the heap a run may grow to before the collector works
// harder (readme/performance.md#long-runs), unless the chart alone takes
// half of it. GOGC=200 (root.go) is for an import, which allocates the
// chart at once; a run holds what is bounded (its newest steps) and what
// grows slowly (its path, its answers for answers.yaml), and at 200% a
// 100,000-step run peaked at three times what it held.
const walkHeap = 48 << 20

// limitWalkMemory sets the soft memory limit of the walk to walkHeap, or
// to twice the heap the chart and settings take when that is more, and
// returns what puts the limit before it back. A run whose heap stays
// under it (any run of a few thousand steps) collects as before. GOGC or
// GOMEMLIMIT in the environment wins. A collection is forced to see what
// the chart takes only when the heap, garbage and all, could make twice
// that more than walkHeap: forced always, it took 1.3-3.6 ms of every
// run's start (readme/performance.md).
func limitWalkMemory(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := int64(walkHeap)
	if heapObjects() > walkHeap/2 {
		runtime.GC() // what the chart holds, without what reading it left
		limit = max(limit, 2*heapObjects())
	}
	before := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(before) }
}

// heapObjects is the heap's objects now, live or not yet collected.
func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return walkHeap // unknown: collect and see
	}
	return int64(min(s[0].Value.Uint64(), 1<<62))
}

// walkChart checks that the chart's CLIs can run, opens the run's logs
// and walks the chart.
func (a *App) walkChart(ctx context.Context, j walkJob) error {
	o, s, reg, c, page, start, answers := j.o, j.s, j.reg, j.c, j.page, j.start, j.answers
	o.budgetUSD, o.budgetTok = s.MaxCost, s.MaxTokens
	all, err := o.allGates(s)
	if err != nil {
		return err
	}
	warn := func(msg string) {
		if !o.quiet {
			fmt.Fprintf(a.Err, "dtree: warning: %s\n", msg)
		}
	}
	pf := preflight(c, page, start, reg, o.noValidate, answers != nil || o.dryRun, os.Geteuid() == 0, a.Getenv, warn)
	if err := pf.err(); err != nil && !o.dryRun {
		return err
	}
	// A budget never fails open silently (readme/run.md#budgets); a
	// replay costs nothing.
	if answers == nil && !s.AllowUnmetered {
		o.unmetered = unmetered(c, start, reg, o.noValidate, o.budgetUSD, o.budgetTok, a.Getenv)
		if len(o.unmetered) > 0 && !o.dryRun {
			return unmeteredError(o.unmetered)
		}
	}
	wait, err := a.backoff()
	if err != nil {
		return err
	}
	if answers != nil {
		wait = func(int) time.Duration { return 0 } // no service to spare
	}
	workdir := o.workdir
	if workdir == "" {
		workdir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(workdir); err == nil {
		workdir = abs
	}
	// A resumed run's worktree may be gone (dtree clean): it is made again.
	if st, err := os.Stat(workdir); (err != nil || !st.IsDir()) && j.branch == "" {
		return &UsageError{Err: fmt.Errorf("--workdir %s is not a directory", workdir)}
	}
	if o.dryRun {
		return a.dryRun(ctx, c, page, start, reg, workdir, o, pf, all)
	}
	// A worktree of the run's own (readme/workspace.md#worktrees), made
	// before anything runs; the logs stay in log_dir.
	var (
		wt    *runWorktree
		runID string
	)
	if mode := s.Worktree; j.branch != "" || j.resume == nil && mode != settings.WorktreeOff {
		runID = runlog.NewRunID(time.Now())
		logAbs, _ := filepath.Abs(s.LogDir)
		if wt, workdir, err = worktreeFor(ctx, workdir, mode, j.branch, j.worktree, runID, logAbs); err != nil {
			return err
		}
		defer func() {
			if wt != nil {
				wt.release()
			}
		}()
	}
	// Checkpoints (readme/workspace.md): outside git said once, here.
	repo, off, note := a.runWorkspace(ctx, s, workdir)
	var inWorktree *workspace.Worktree
	if wt != nil {
		inWorktree = wt.wt
		if repo != nil { // checkpoints false stays false
			repo = wt.wt.Repo
		}
	}
	if repo == nil {
		if err := needsGit(c, page, s, off); err != nil {
			return err
		}
	}
	for _, f := range agent.RemoveStalePromptFiles(workdir) {
		if !o.quiet {
			fmt.Fprintf(a.Err, "dtree: removed %s, the prompt file of a dtree that was killed\n", f)
		}
	}
	env := os.Environ()
	// Secrets are masked wherever dtree writes (readme/logs.md#secrets,
	// mask.go): the logs, stderr, the --json summary, answers.yaml and
	// graph.svg.
	log, err := runlog.Open(runlog.Options{Dir: s.LogDir, RunID: runID, Short: s.WriteLogShort, Long: s.WriteLogLong, Redactor: a.redactor(),
		LongCallMax: s.LongLogCallMax, LongMax: s.LongLogMax, Streams: s.WriteLogLong, StreamMax: s.StreamLogMax})
	if err != nil {
		return &UsageError{Err: fmt.Errorf("open run log in %s: %w", s.LogDir, err), Hint: "pass --log-dir with a directory dtree can write, or set log_dir"}
	}
	defer log.Close()
	a.exceptRun(log.Redactor())
	skip := ""
	if j.resume != nil {
		skip = j.resume.Start.RunID
	}
	a.keepRuns(ctx, s.LogDir, s.KeepRuns, skip, o.quiet)
	// The outline of the graph walked, for a resume to say what changed
	// since (readme/resume.md); a run goes on without it.
	if b, err := json.Marshal(c.Outline(page.ID)); err == nil {
		_ = log.WriteFile(outlineFile, b)
	}
	if j.resume != nil && !o.quiet {
		fmt.Fprintf(a.Err, "%s\n", resumeLine(log.RunID, j.resume, c))
	}

	// Every process the agents start is ended when its step ends, and all of
	// them when the run does, however it ends
	// (readme/run.md#what-dtree-stops-and-when).
	if err := a.Procs.Subreap(); err != nil {
		fmt.Fprintf(a.Err, "dtree: warning: cannot become the reaper of the agents' processes (%v): what an agent leaves outside its process group is not stopped\n", err)
	}
	if err := a.Procs.Watch(log.RunID); err != nil {
		fmt.Fprintf(a.Err, "dtree: warning: cannot start the watcher of the run's processes (%v): if dtree is killed, what its steps started runs on\n", err)
	}
	defer func() {
		// The run is over: what keep_running steps left goes now (up to
		// the grace period), and an interrupt meanwhile says so.
		a.interrupts.setDoing(func() string { return "what the run left running" }, nil)
		a.Procs.EndAll()
		a.interrupts.setDoing(nil, nil)
	}()
	runner := func(ctx context.Context, c agent.Call) (agent.Result, error) {
		call := agent.Run
		// The replay agent answers the agents' calls in process; a command
		// step runs in a replay too: it is the chart's own command.
		if answers != nil && c.Request.Purpose != agent.PurposeCommand {
			call = answers.Call
		}
		return call(ctx, c) // the walker calls StepStarted and StepEnded (CallStarted, CallEnded)
	}

	stderr := a.Err
	p := newProgress(stderr, o.quiet, o.verbose, isTerminal(a.Err, a.Getenv) && !a.inActions())
	p.actions, p.chart, p.mask = a.inActions(), c.Doc.Source, a.redactor().String
	p.cmd = &untilError{w: a.commandWriter(stderr)}
	p.cols, p.ascii = a.termWidth(stderr), a.ascii
	p.rows = a.termHeight(stderr)
	a.interrupts.setDoing(func() string { return a.redactor().String(p.doing()) }, p.notice)
	a.walked = true
	defer limitWalkMemory(a.Getenv)()
	if note != "" && !o.quiet {
		fmt.Fprintln(a.Err, note)
	}
	gates := run.Approval{Answer: j.approval, Reason: j.reason, Who: j.who, All: all}
	if answers != nil {
		gates.Answers = answers.Gate
	}
	// A person at a terminal answers a gate there (gateprompt.go).
	if a.asksAtTerminal(o.json) {
		gates.Ask = (&gatePrompt{p: p, in: a.In}).ask
	}
	sum, werr := run.Walk(ctx, run.Options{
		Chart: c, Page: page, Start: start, Registry: reg, Runner: runner,
		Workdir: workdir, Env: env, MaxSteps: o.maxSteps, NoValidate: o.noValidate,
		Log: log, Progress: p, Backoff: wait, Settings: settingsForLog(s), Model: o.model, Context: o.context, Vars: o.vars, MaxCost: o.budgetUSD, MaxTokens: o.budgetTok,
		Resume: j.resume, Answers: o.answers, Branch: o.branch,
		ReplayCommand: j.replay(filepath.Join(log.Dir, "answers.yaml")),
		Picture:       runPicture(s.WriteLogGraph, log.Dir, c.Doc, log.Redactor().String),
		Workspace:     repo, WorkspaceOff: off, Worktree: inWorktree, Rollback: s.Rollback,
		Approval: gates, CallStarted: a.Procs.StepStarted, CallEnded: a.Procs.StepEnded, Parallel: s.Parallel,
	})
	if answers != nil && sum.Status == run.StatusSucceeded {
		warnUnused(stderr, answers)
	}
	if s.WriteLogShort {
		sum.Logs.Short = filepath.Join(log.Dir, "short.json")
	}
	if s.WriteLogLong {
		sum.Logs.Long = filepath.Join(log.Dir, "long.log")
	}
	p.finished(sum)
	if wt != nil {
		_ = a.finishWorktree(ctx, wt, log.RunID, sum, filepath.Dir(log.Dir), o.quiet)
		wt = nil
	}
	// Reports for CI (readme/ci.md), whatever the outcome; an interrupt
	// does not stop them: they are what the CI page shows of it.
	reported := a.ciReports(context.WithoutCancel(ctx), s.JUnit, c.Doc, sum)
	if o.json {
		if err := writeJSON(a.maskedOut(true), sum); err != nil {
			return err
		}
	}
	if werr == nil && len(reported) > 0 {
		return &runError{code: types.ExitUsage, err: errors.New(reported[0]), also: reported[1:],
			hint: "the run itself succeeded; give --junit (junit) a file dtree can write, or check $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT"}
	}
	if werr != nil {
		var (
			nf    *agent.NotFoundError
			wrote *runlog.WriteError
		)
		if errors.As(werr, &nf) {
			return &runError{code: types.ExitUsage, err: werr}
		}
		re := &runError{code: sum.ExitCode, err: werr, also: reported}
		if n := sum.EventsUnwritten; n > 0 {
			re.also = append(re.also, fmt.Sprintf("%s could not take the run's last %s either, run_end among them",
				sum.Logs.Events, types.Plural(n, "event")))
		}
		var waiting *run.WaitingError
		if errors.As(werr, &waiting) {
			re.hint = waiting.Hint()
		}
		if errors.As(werr, &wrote) {
			re.hint = fmt.Sprintf("free space on the disk of %s, or pass --log-dir (log_dir) a directory on another disk, then run the chart again", s.LogDir)
		}
		// A replay is not resumed (resume.go): it is run again, for nothing.
		if re.hint == "" && sum.Status != run.StatusSucceeded && sum.RunID != "" && answers == nil {
			re.hint = run.ResumeHint(sum.RunID, filepath.Dir(log.Dir))
			// A branch run alone is run again: stopped inside its branch,
			// resume refuses it (ForkRefused); before its fork, a resume
			// would run every branch and the join.
			if o.branch != "" {
				re.hint = "run the branch again: " + shellJoin([]string{"dtree", "run", c.Doc.Source, "--branch", o.branch})
			}
		}
		return re
	}
	return nil
}

// ctxReader is a reader that gives up when ctx ends, even while a Read
// blocks (a chart piped from a process that hangs); the blocked Read is
// left to end with the process.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	type result struct {
		n   int
		err error
	}
	buf := make([]byte, len(p)) // not p: the Read may outlive this call
	done := make(chan result, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return copy(p, buf[:r.n]), r.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}

// runSettings loads the settings and lays the flags over them; lo says
// more of where to look (a resumed run's settings).
func (a *App) runSettings(o runOptions, fs *pflag.FlagSet, lo settings.LoadOptions) (*settings.Settings, error) {
	lo.ConfigFile, lo.Getenv, lo.Flags, lo.Trust = o.config, a.Getenv, fs, o.trust
	lo.FlagSet = o.flagSet()
	s, err := settings.Load(lo)
	if err != nil {
		return nil, err
	}
	a.maskSettings(s)
	if o.answers != "" && o.dryRun {
		return nil, &UsageError{Err: errors.New("--answers and --dry-run do not go together"),
			Hint: "a dry run takes --answer NODE=LABEL for its decisions; --answers replays a run through the replay agent"}
	}
	if len(o.answer) > 0 && !o.dryRun {
		return nil, &UsageError{Err: errors.New("--answer is for --dry-run"),
			Hint: "to script a real run's answers, write an answers file and pass --answers FILE"}
	}
	if o.answers == "" && !o.dryRun && s.DefaultCLI == agent.ReplayName {
		return nil, &UsageError{Err: fmt.Errorf("the replay agent needs --answers FILE (default_cli is replay, from %s)", s.Sources[settings.KeyDefaultCLI]),
			Hint: "a run's answers.yaml (in its log directory) replays it; 'dtree docs replay' says how to write one"}
	}
	if o.maxSteps < 1 {
		return nil, &UsageError{Err: fmt.Errorf("--max-steps %d: must be 1 or more", o.maxSteps)}
	}
	if _, ok := types.ContextMode(o.context); o.context != "" && !ok {
		return nil, &UsageError{Err: fmt.Errorf("--context %q: not one of %s", o.context, strings.Join(types.ContextModes, ", ")),
			Hint: "path gives each prompt every step so far, previous the step before, none nothing ('dtree docs context')"}
	}
	return s, nil
}

// flagSet is what the flags that are not a setting's own say: they
// override the files (an untrusted file's value then does nothing).
func (o *runOptions) flagSet() map[string]settings.FlagValue {
	set := map[string]settings.FlagValue{}
	if o.noCheckpoints {
		set[settings.KeyCheckpoints] = settings.FlagValue{Value: "false", Flag: "--no-checkpoints"}
	}
	switch {
	case o.approveAll && o.rejectAll: // allGates says so
	case o.approveAll:
		set[settings.KeyApprovals] = settings.FlagValue{Value: settings.ApprovalsApprove, Flag: "--approve-all"}
	case o.rejectAll:
		set[settings.KeyApprovals] = settings.FlagValue{Value: settings.ApprovalsReject, Flag: "--reject-all"}
	}
	return set
}

// runTarget picks the page and start node, and refuses a chart with errors
// on that page (a --start settles ambiguous_root and no_root).
func (a *App) runTarget(c *chart.Chart, o runOptions, path string) (types.Page, string, error) {
	var page types.Page
	if len(c.Doc.Pages) > 0 {
		p, err := choosePage(c, cmp.Or(o.page, c.Doc.Pages[0].ID))
		if err != nil {
			return page, "", err
		}
		page = *p
	}
	var settled []string
	if o.start != "" {
		settled = []string{"ambiguous_root", "no_root"}
	}
	if err := a.checkPage(c, path, &page, o.quiet, settled...); err != nil {
		return page, "", err
	}
	if err := a.checkBranch(c, page, o.branch); err != nil {
		return page, "", err
	}
	if o.start == "" {
		return page, page.Root, nil
	}
	matches := c.FindNode(page.ID, o.start)
	switch len(matches) {
	case 1:
		return page, matches[0], nil
	case 0:
		return page, "", &UsageError{Err: fmt.Errorf("--start %q: no node on page %s has that id or text%s", o.start, page.ID, c.NearNode(page.ID, o.start)),
			Hint: "'dtree inspect CHART' lists the nodes with their ids"}
	}
	return page, "", &UsageError{Err: fmt.Errorf("--start %q: nodes %s all have that text", o.start, strings.Join(matches, ", ")),
		Hint: "pass the id of the one to start from"}
}

// preflight checks, before any agent starts, that every CLI the reachable
// nodes may use can run and is installed, and, when dtree runs as root,
// that none of them will refuse to run as root (claude without
// IS_SANDBOX=1): each of those would fail its first call, after the nodes
// before it did their work. An in-process CLI (replay) has nothing to
// install: it can run when inProcess says the run answers it (--answers,
// or a dry run, which calls nothing). A run stops on what it finds; a dry
// run notes it.
func preflight(c *chart.Chart, page types.Page, start string, reg *agent.Registry, noValidate, inProcess, asRootUser bool, getenv func(string) string, warn func(string)) cliProblems {
	g := c.Graph
	root, _ := g.Index(start)
	reach := g.ReachableUntil(root, func(i int) bool {
		n := &c.Nodes[i]
		return n.Role == types.RoleTerminator && i != root
	})
	var problems, asRoot []string
	checked := map[string]string{} // a CLI → why it cannot run, "" when it can
	// check says why the CLI cannot run, "" when it can; each CLI once.
	check := func(name string) string {
		if why, seen := checked[name]; seen {
			return why
		}
		why := ""
		def, err := reg.Lookup(name)
		switch {
		case err != nil:
			why = err.Error()
		case def.InProcess:
			if !inProcess {
				why = fmt.Sprintf("CLI %s answers from an answers file, and this run has none: pass --answers FILE", def.Name)
			}
		default:
			if _, _, err := agent.LookPath(def); err != nil {
				why = fmt.Sprintf("CLI %s needs %q, which is not on PATH", def.Name, def.Binary)
				for _, alt := range def.AltBinaries {
					why += fmt.Sprintf(" (nor is %q)", alt)
				}
				if def.InstallHint != "" {
					why += "; " + def.InstallHint
				}
			} else if asRootUser && agent.RefusesRoot(def, getenv) {
				asRoot = append(asRoot, def.Name)
			}
		}
		checked[name] = why
		return why
	}
	reported := map[string]bool{}
	report := func(why string) {
		if !reported[why] {
			reported[why] = true
			problems = append(problems, why)
		}
	}
	fellBack := map[string]bool{}
	for i, ok := range reach {
		n := &c.Nodes[i]
		if !ok || !n.Step.Agent() {
			continue // a command step needs no CLI, only /bin/sh
		}
		// The node's CLI list: one that can run is enough, and its retry
		// and validation CLIs, when they are its own, follow it.
		chain := n.CLIChain()
		var missing []string
		runs := ""
		for _, name := range chain {
			if why := check(name); why == "" {
				runs = name
				break
			} else {
				missing = append(missing, why)
			}
		}
		switch {
		case runs == "":
			for _, why := range missing {
				report(why)
			}
		case len(missing) > 0:
			if key := strings.Join(chain, ","); !fellBack[key] {
				fellBack[key] = true
				warn(fmt.Sprintf("%s; the steps whose CLI list is %s use %s", missing[0], strings.Join(chain, ", "), runs))
			}
		}
		var need []string
		if n.Retries > 0 && n.RetryCLI != n.CLI {
			need = append(need, n.RetryCLI)
		}
		if n.Validate && !noValidate && n.ValidateCLI != n.CLI {
			need = append(need, n.ValidateCLI)
		}
		for _, name := range need {
			if why := check(name); why != "" {
				report(why)
			}
		}
	}
	return cliProblems{cannot: problems, asRoot: asRoot}
}

// cliProblems is what preflight found: why CLIs the chart needs cannot
// run, and those that would refuse to run as root.
type cliProblems struct {
	cannot, asRoot []string
}

// err is the error that stops a run, nil when every CLI can run.
func (p cliProblems) err() error {
	if len(p.cannot) == 0 && len(p.asRoot) > 0 {
		return &UsageError{Err: fmt.Errorf("dtree runs as root, and %s",
			p.notes()[0]), Hint: agent.RootHint}
	}
	if len(p.cannot) == 0 {
		return nil
	}
	return &UsageError{Err: fmt.Errorf("the chart needs CLIs that cannot run:\n  %s", strings.Join(p.cannot, "\n  ")),
		Hint: "install them, pick others with --cli or the nodes' cli metadata, or define them under clis: in the settings"}
}

// notes are the problems one per line, for a dry run.
func (p cliProblems) notes() []string {
	notes := slices.Clone(p.cannot)
	if len(p.asRoot) > 0 {
		notes = append(notes, fmt.Sprintf("CLI %s refuses to run as root with --dangerously-skip-permissions unless IS_SANDBOX=1", strings.Join(p.asRoot, ", ")))
	}
	return notes
}

// backoff is the wait after an agent error; DTREE_RETRY_BACKOFF (seconds
// or a duration, 0 for none) sets its base, for tests and impatient users.
func (a *App) backoff() (func(int) time.Duration, error) {
	base := time.Second
	if v := strings.TrimSpace(a.Getenv("DTREE_RETRY_BACKOFF")); v == "0" || v == "0s" {
		base = 0
	} else if v != "" {
		d, err := nodeconf.ParseDuration(v)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("DTREE_RETRY_BACKOFF: %w", err)}
		}
		base = d
	}
	return run.Backoff(base), nil
}

// settingsForLog is every setting's effective value, for the run_start
// event; custom CLIs by name.
func settingsForLog(s *settings.Settings) map[string]string {
	m := map[string]string{}
	for _, k := range settings.KeyNames() {
		if v, ok := s.Value(k); ok {
			m[k] = v
		}
	}
	var clis []string
	for name := range s.CLIs {
		clis = append(clis, name)
	}
	slices.Sort(clis)
	m["clis"] = strings.Join(clis, ",")
	return m
}

// runPicture draws a run's graph.svg into its directory when it ends
// (write_log_graph), but not for a page too large for SVG: that run has no
// picture, which is not an error.
func runPicture(on bool, dir string, doc *types.Document, mask func(string) string) func(context.Context) (string, error) {
	if !on {
		return nil
	}
	return func(ctx context.Context) (string, error) {
		path, err := export.WriteRunPicture(ctx, dir, doc, "svg", mask)
		var large *export.TooLargeError
		if errors.As(err, &large) {
			return "", nil
		}
		return path, err
	}
}

// dryRun walks the chart with no agent: each call is printed, not made.
//
// The plan is the command's output, on stdout; with --json the summary is,
// and the plan goes to stderr. A CLI that is not installed is noted, not
// an error: a dry run starts none.
func (a *App) dryRun(ctx context.Context, c *chart.Chart, page types.Page, start string, reg *agent.Registry, workdir string, o runOptions, pf cliProblems, all string) error {
	picks, err := dryAnswers(c, page.ID, o.answer)
	if err != nil {
		return err
	}
	w := a.maskedOut(false)
	if o.json {
		w = a.Err
	}
	d := &dryRun{w: w, c: c, answers: picks, asked: map[string]int{}}
	fmt.Fprintf(w, "dry run of %s: no agent is started, and every attempt succeeds\n", c.Doc.Source)
	fmt.Fprintf(w, "(a failed attempt would be retried with the node's retry CLI, its prompt followed by a \"Previous attempt feedback\" section per failure)\n")
	if notes := pf.notes(); len(notes) > 0 {
		for _, n := range notes {
			fmt.Fprintf(w, "not ready: %s\n", n)
		}
		fmt.Fprintf(w, "(a real run would stop before its first step, with exit status 2, until these are fixed)\n")
	}
	if o.budgetUSD > 0 || o.budgetTok > 0 {
		var parts []string
		if o.budgetUSD > 0 {
			parts = append(parts, fmt.Sprintf("$%s (--max-cost)", strconv.FormatFloat(o.budgetUSD, 'f', -1, 64)))
		}
		if o.budgetTok > 0 {
			parts = append(parts, fmt.Sprintf("%d tokens (--max-tokens)", o.budgetTok))
		}
		fmt.Fprintf(w, "budget: %s; a real run stops at the agent call that crosses it; a dry run spends nothing\n", strings.Join(parts, " and "))
		if len(o.unmetered) > 0 {
			fmt.Fprintf(w, "not ready: %s cannot report what the budget bounds: %s (a real run refuses to start unless --allow-unmetered)\n",
				types.Plural(len(o.unmetered), "CLI"), strings.Join(o.unmetered, ", "))
		}
	}
	sum, werr := run.Walk(ctx, run.Options{
		Chart: c, Page: page, Start: start, Registry: reg, Runner: d.Call,
		Workdir: workdir, Env: os.Environ(), MaxSteps: o.maxSteps, NoValidate: o.noValidate,
		Progress: d, Backoff: func(int) time.Duration { return 0 }, Model: o.model, Context: o.context, Vars: o.vars, MaxCost: o.budgetUSD, MaxTokens: o.budgetTok,
		Approval: run.Approval{All: all, Answers: d.gate}, Branch: o.branch,
	})
	d.finished(sum)
	sum.DryRun = true
	if o.json {
		if err := writeJSON(a.maskedOut(true), sum); err != nil {
			return err
		}
	}
	if werr != nil {
		return &runError{code: sum.ExitCode, err: werr}
	}
	return nil
}
