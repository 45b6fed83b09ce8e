package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

// outlineFile is the outline of the graph a run walked, in its log
// directory (chart.Outline).
const outlineFile = "outline.json"

type resumeOptions struct {
	runOptions
	from  string
	force bool
	chart string
	// approve and reject answer the gate the run waits at, reason says
	// why (readme/resume.md#approval-gates).
	approve, reject bool
	reason          string
	// ciInput: the answer came from a CI system's inputs (action.yml's
	// approve and reject); approval_given's who says so, nothing else.
	ciInput bool
}

func (a *App) newResume() *cobra.Command {
	var o resumeOptions
	cmd := &cobra.Command{
		Use:   "resume [RUN_ID|latest]",
		Short: "Go on with a run that stopped, from the step that did not finish",
		Long: `Resume goes on with a run that failed, was interrupted or killed, or reached a
limit: the steps it finished are taken from its events.jsonl, with no agent
call, and the run goes on at the step that did not finish, in a new run
directory that records resumed_from. RUN_ID is a directory of --log-dir;
latest (the default) is the newest run. A run that waits at an approval
gate (exit 5) goes on with its answer: --approve, or --reject --reason TEXT.

The chart is read again from the file the run read (or --chart), and
refused when its graph changed since (exit 3) unless --force; a chart
exported again, its ids new, is matched to the run's by kind, text and
place in the graph. Each step taken must be a step of the chart (exit 3).
Settings, variables and the run's flags are the run's own unless given
again.

Exit status: as dtree run's; 2 also when there is no such run, it is still
going or being resumed, its events.jsonl is damaged mid-way (unless
--force), or it got to its end and --from names no step to go back to;
and for a gate's answer that cannot be taken: a waiting run given none,
--reject without --reason, --approve with --reject, --reason alone, or
--approve or --reject for a run that waits at no gate.

Docs: dtree docs resume`,
		Example: `  dtree resume                   # the latest run
  dtree resume 20261125T083512Z-dfaa7a
  dtree resume latest --from 7   # run node 7 and what follows again
  dtree resume latest --approve   # approve the gate it waits at`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: map[string]string{gracefulInterrupt: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			id := runlog.Latest
			if len(args) > 0 {
				id = args[0]
			}
			return a.resume(cmd.Context(), id, o, cmd.Flags())
		},
	}
	f := cmd.Flags()
	o.registerWalk(f)
	f.StringVar(&o.from, "from", "", "run again from this node of the run's path (its latest visit): its id or its text")
	f.BoolVar(&o.force, "force", false, "go on even though the chart's graph changed since the run, or its events.jsonl is damaged mid-way")
	f.StringVar(&o.chart, "chart", "", "the chart to go on with, - for stdin (default: the file the run read)")
	f.BoolVar(&o.approve, "approve", false, "approve the gate the run waits at: it goes on along the branch labelled approved")
	f.BoolVar(&o.reject, "reject", false, "reject the gate the run waits at (with --reason): it goes on along the branch labelled rejected")
	f.StringVar(&o.reason, "reason", "", "why the gate is approved or rejected: the steps after it see it in the run so far")
	f.BoolVar(&o.ciInput, "ci-input", false, "say in the log that --approve or --reject came from a CI system's inputs (who: ci_input); the action passes it")
	return cmd
}

// gateAnswer is the answer --approve or --reject gives the gate the run
// waits at, "" for none, or why the flags do not go together.
func (o *resumeOptions) gateAnswer() (string, error) {
	switch {
	case o.approve && o.reject:
		return "", &UsageError{Err: errors.New("resume: --approve and --reject do not go together"), Hint: "give one of them"}
	case o.reject && strings.TrimSpace(o.reason) == "":
		return "", &UsageError{Err: errors.New("resume: --reject needs --reason TEXT"),
			Hint: "say why with --reason: the steps after the gate see it, and the next agent can act on it"}
	case o.ciInput && !o.approve && !o.reject:
		return "", &UsageError{Err: errors.New("resume: --ci-input says who gave --approve or --reject"), Hint: "give --approve or --reject with it"}
	case o.reason != "" && !o.approve && !o.reject && !o.approveAll && !o.rejectAll:
		return "", &UsageError{Err: errors.New("resume: --reason is the reason of --approve or --reject"), Hint: "give --approve or --reject with it"}
	case o.approve:
		return run.Approve, nil
	case o.reject:
		return run.Reject, nil
	}
	return "", nil
}

// who is who gave the answer, for approval_given (run.Approval.Who).
func (o *resumeOptions) who() string {
	if o.ciInput {
		return run.WhoCIInput
	}
	return ""
}

func (a *App) resume(ctx context.Context, id string, o resumeOptions, fs *pflag.FlagSet) error {
	answer, err := o.gateAnswer()
	if err != nil {
		return err
	}
	s0, err := a.runSettings(o.runOptions, fs, settings.LoadOptions{})
	if err != nil {
		return err
	}
	logDir := s0.LogDir
	dir, err := runlog.FindRun(logDir, id)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("resume: %w", err),
			Hint: fmt.Sprintf("give the id of a run under %s (its directory's name), or latest; pass --log-dir when its logs are elsewhere", logDir)}
	}
	runID := filepath.Base(dir)
	// Held until the resumed run ends: a second resume of the run started
	// at the same moment is refused, not run beside it.
	release, err := runlog.LockResume(dir)
	if err != nil {
		var busy *runlog.ResumingError
		if errors.As(err, &busy) {
			return &UsageError{Err: fmt.Errorf("resume: run %s: %w", runID, err),
				Hint: "wait for that resume to end; the run it goes on in is the latest under " + logDir}
		}
		return &UsageError{Err: fmt.Errorf("resume: run %s: %w", runID, err)}
	}
	defer release()
	if runlog.Going(dir) {
		return &UsageError{Err: fmt.Errorf("resume: run %s is still going: a dtree holds its events.jsonl", runID),
			Hint: "wait for it to end, or stop it (Ctrl-C), then resume it"}
	}
	carried, err := readCarried(dir)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("resume: run %s: %w", runID, err)}
	}
	if err := a.damagedLog(runID, carried, o.force); err != nil {
		return err
	}
	if answer != "" && carried.Status != run.StatusWaiting {
		hint := "resume it without --approve or --reject"
		if carried.Status == run.StatusSucceeded { // nothing to go on with: only --from runs it again
			hint = "it got to its end: to run steps of it again, name the first with --from NODE, without --approve or --reject"
		}
		return &UsageError{Err: fmt.Errorf("resume: run %s does not wait at an approval gate (%s): --%s has nothing to answer", runID, cmp.Or(carried.Status, "it has no end"), answer),
			Hint: hint}
	}
	rs := carried.Start
	if rs.Answers != "" {
		return &UsageError{Err: fmt.Errorf("resume: run %s replayed the answers file %s, and a replay is not resumed", runID, rs.Answers),
			Hint: "replay it again, which costs nothing: " + shellJoin([]string{"dtree", "run", rs.Source, "--answers", rs.Answers})}
	}

	// The run's settings, under the flags given now.
	recorded := maps.Clone(rs.Settings)
	delete(recorded, settings.KeyLogDir) // the run is where it was found
	// Where its report goes is this job's business, not how the run goes:
	// the flag, the environment and the files say it now.
	delete(recorded, settings.KeyJUnit)
	// A run goes on where it went: in its worktree, or in the checkout
	// (readme/workspace.md#worktrees).
	delete(recorded, settings.KeyWorktree)
	branch, worktree := recordedWorktree(dir)
	if branch == "" && fs.Changed("worktree") && o.worktree != settings.WorktreeOff {
		return &UsageError{Err: fmt.Errorf("resume: run %s went on in the checkout, not in a worktree: it goes on there", runID),
			Hint: "resume it without --worktree, or start a new run with dtree run --worktree"}
	}
	s, err := a.runSettings(o.runOptions, fs, settings.LoadOptions{Run: recorded, RunID: runID})
	if err != nil {
		return err
	}
	if all, err := o.allGates(s); err != nil {
		return err
	} else if carried.Status == run.StatusWaiting && answer == "" && all == "" && o.from == "" && !a.asksAtTerminal(o.json) {
		// Going on without an answer would stop at the gate again; on a
		// terminal the gate asks there.
		return &UsageError{Err: fmt.Errorf("resume: run %s waits at an approval gate: answer it", runID),
			Hint: run.GateHint(runID, logDir)}
	}
	a.keepBudget(s, s0, runID)
	s.LogDir = logDir
	o.runOptions = resumedOptions(o.runOptions, rs, fs)

	path := o.chart
	if path == "" {
		if rs.Source == "-" || rs.Source == "" || rs.Source == "stdin" {
			return &UsageError{Err: fmt.Errorf("resume: run %s read its chart from stdin", runID),
				Hint: "give it again: --chart FILE, or --chart - with the chart on stdin"}
		}
		path = rs.Source
	}
	reg := agent.NewRegistry(s.CLIs)
	given, err := givenVars(o.varSet, o.varFile)
	if err != nil {
		return err
	}
	vars, err := recordedVars(runID, rs.Vars, given)
	if err != nil {
		return err
	}
	c, err := a.loadRunChart(ctx, path, o.format, s, reg, vars)
	if err != nil {
		var unreadable *document.UnreadableError
		if errors.As(err, &unreadable) && o.chart == "" {
			return &UsageError{Err: fmt.Errorf("resume: run %s read the chart %s, which cannot be read now: %w", runID, path, err),
				Hint: "pass the chart with --chart FILE"}
		}
		return err
	}
	renumbered := false
	if len(c.Doc.Pages) > 0 {
		// The chart exported again, its ids new (resume.md#a-chart-exported-again).
		walked := a.walkedOutline(ctx, rs, dir, path, o.format, s, reg, vars)
		p, err := resumePage(c, runID, path, rs, walked)
		if err != nil {
			return err
		}
		o.page = p.ID
		switch m := matchExport(c, p, rs, walked); {
		case m == nil:
		case m.renumbered() || o.force && m.covers(carried):
			carried.Renumber(m.ids)
			rs, o.start, renumbered = carried.Start, carried.Start.Start, true
			if !o.quiet {
				for _, l := range m.notes(runID, path) {
					fmt.Fprintln(a.Err, l)
				}
			}
		case !o.force:
			return &ChangedChartError{RunID: runID, Path: path, Changes: m.changes()}
		}
		// Else --force with steps that match nothing: the checks below
		// say what cannot be followed.
	}
	if !renumbered {
		if err := checkOutline(c, rs, dir, path, o.force); err != nil {
			return err
		}
	}
	if o.start != "" && len(c.FindNode(o.page, o.start)) == 0 {
		// Never "--start …": the user gave none.
		return &UsageError{Err: fmt.Errorf("resume: run %s started at node %s, which %s does not have", runID, o.start, path),
			Hint: "its ids changed since, and its nodes could not be matched to the run's: start a new run with dtree run"}
	}
	page, start, err := a.runTarget(c, o.runOptions, path)
	if err != nil {
		return err
	}
	if o.vars, err = runVars(c.Doc, vars); err != nil {
		return err
	}
	if o.from != "" {
		node := o.from
		if m := c.FindNode(page.ID, o.from); len(m) == 1 {
			node = m[0]
		}
		if err := carried.From(node); err != nil {
			return &UsageError{Err: fmt.Errorf("resume: %w", err), Hint: "give --from a node the run took, by its id or its text"}
		}
	} else if carried.Ended {
		return &UsageError{Err: fmt.Errorf("resume: run %s got to its end (%s): there is no step to go on at", runID, cmp.Or(carried.Status, "succeeded")),
			Hint: fmt.Sprintf("to run steps of it again, name the first with --from NODE; its path: %s", pathLine(carried.Path()))}
	}
	if err := carried.ForkRefused(); err != nil {
		hint := fmt.Sprintf("run the whole fork again: dtree resume %s --from %s", runID, carried.Fork.Node)
		if b := carried.Fork.Alone; b != "" {
			hint = "run the branch again: " + shellJoin([]string{"dtree", "run", rs.Source, "--branch", b})
		}
		return &UsageError{Err: fmt.Errorf("resume: run %s: %w", runID, err), Hint: hint}
	}
	if err := carried.Check(c, start); err != nil {
		return strayPath(runID, path, carried, err, o.force)
	}
	return a.walkChart(ctx, walkJob{o: o.runOptions, s: s, reg: reg, c: c, page: page, start: start, resume: carried, branch: branch, worktree: worktree,
		replay: func(file string) string { return resumeReplayCommand(path, rs, o.runOptions, fs, file) }, approval: answer, reason: o.reason, who: o.who()})
}

// damagedLog refuses a run whose events.jsonl has a line mid-way that is
// not an event (torn or edited), unless force: what the run did after it
// cannot be told, and going on from before it runs again steps that may
// have been paid for. With force it says what it takes.
func (a *App) damagedLog(runID string, c *run.Carried, force bool) error {
	d := c.Damaged
	if d == nil {
		return nil
	}
	before := fmt.Sprintf("%s before it", types.Plural(c.Len(), "finished step"))
	if !force {
		return &UsageError{Err: fmt.Errorf("resume: run %s: its events.jsonl is damaged at line %d, which is not an event (%v): what the run did after it cannot be told", runID, d.Line, d.Err),
			Hint: fmt.Sprintf("mend or remove the line, or go on all the same with --force: the run goes on after the %s, and the steps after it run again", before)}
	}
	fmt.Fprintf(a.Err, "dtree: warning: run %s: its events.jsonl is damaged at line %d, which is not an event (%v): going on after the %s; the steps after it run again\n", runID, d.Line, d.Err, before)
	return nil
}

// readCarried reads the run's events.jsonl for dtree resume.
func readCarried(dir string) (*run.Carried, error) {
	return run.ReadCarriedFile(filepath.Join(dir, "events.jsonl"))
}

// resumedOptions are the options of the run that is resumed, with those
// given again on the command line over them.
func resumedOptions(o runOptions, rs runlog.RunStart, fs *pflag.FlagSet) runOptions {
	o.page, o.start = rs.Page, rs.Start
	o = walkOptionsOf(o, rs, fs)
	if !fs.Changed("workdir") {
		o.workdir = rs.Workdir
	}
	// A run of one branch alone goes on as one: a matrix job's resume
	// runs its branch, not the whole fork.
	if !fs.Changed("branch") {
		o.branch = rs.OnlyBranch
	}
	return o
}

// walkOptionsOf are the options of how an earlier run walked (its
// --max-steps, --no-validate, --model and --context), with those given
// again on the command line over them: what a resumed run and a joined
// one (dtree join) keep.
func walkOptionsOf(o runOptions, rs runlog.RunStart, fs *pflag.FlagSet) runOptions {
	if !fs.Changed("max-steps") && rs.MaxSteps > 0 {
		o.maxSteps = rs.MaxSteps
	}
	if !fs.Changed("no-validate") {
		o.noValidate = rs.NoValidate
	}
	if !fs.Changed("model") {
		o.model = rs.Model
	}
	if !fs.Changed("context") {
		o.context = rs.Context
	}
	return o
}

// recordedVars are the run's variables with those given again over
// them. A value the log masked (it held a secret) must be given again:
// the log does not have it.
func recordedVars(runID string, recorded, given map[string]string) (map[string]string, error) {
	out := maps.Clone(recorded)
	if out == nil {
		out = map[string]string{}
	}
	var masked []string
	for _, k := range slices.Sorted(maps.Keys(recorded)) {
		if _, ok := given[k]; !ok && runlog.MayBeMasked(recorded[k]) {
			masked = append(masked, k)
		}
	}
	if len(masked) > 0 {
		return nil, &UsageError{Err: fmt.Errorf("resume: run %s's log masks the %s of %s: %s held a secret",
			runID, types.Choose(len(masked), "value", "values"), strings.Join(masked, ", "), types.Choose(len(masked), "it", "they")),
			Hint: fmt.Sprintf("give it again: --var %s=VALUE", masked[0])}
	}
	maps.Copy(out, given)
	return out, nil
}

// ChangedChartError is a chart whose graph changed since the run that is
// resumed walked it (exit 3).
type ChangedChartError struct {
	RunID   string
	Path    string
	Changes []string
}

func (e *ChangedChartError) Error() string {
	msg := fmt.Sprintf("resume: the graph of %s changed since run %s walked it", e.Path, e.RunID)
	if len(e.Changes) > 0 {
		msg += ":\n  " + strings.Join(e.Changes, "\n  ")
	}
	return msg
}

// StrayPathError is a run whose log is not a path of the chart it is
// resumed with (run.PathError): dtree resume does not follow it (exit 3).
type StrayPathError struct {
	RunID string
	Path  string // the chart's file
	Err   error
	Hint  string
}

func (e *StrayPathError) Error() string {
	return fmt.Sprintf("resume: the steps of run %s are not a path of %s: %v", e.RunID, e.Path, e.Err)
}

func (e *StrayPathError) Unwrap() error { return e.Err }

// strayPath is the error of a run whose steps are not a path of the
// chart at path, with the --from that runs the stray step again.
func strayPath(runID, path string, c *run.Carried, err error, force bool) error {
	var pe *run.PathError
	if !errors.As(err, &pe) {
		return err
	}
	hint := fmt.Sprintf("its events.jsonl was edited, or it is not a run of %s: start a new run with dtree run", path)
	if slices.Contains(c.Path(), pe.Node) {
		again := fmt.Sprintf("dtree resume %s --from %s", runID, pe.Node)
		if force {
			again += " --force"
		}
		hint += fmt.Sprintf(", or run node %s and the steps after it again: %s", pe.Node, again)
	}
	return &StrayPathError{RunID: runID, Path: path, Err: pe, Hint: hint}
}

// checkOutline refuses a chart whose graph is not the one the run walked,
// naming what changed when the run kept its outline.
func checkOutline(c *chart.Chart, rs runlog.RunStart, dir, path string, force bool) error {
	if force || rs.GraphDigest == "" {
		return nil
	}
	page, err := c.Page(rs.Page)
	if err != nil || c.Digest(page.ID) == rs.GraphDigest {
		return nil // no page: runTarget says so
	}
	e := &ChangedChartError{RunID: filepath.Base(dir), Path: path}
	if b, err := os.ReadFile(filepath.Join(dir, outlineFile)); err == nil {
		var was chart.Outline
		if json.Unmarshal(b, &was) == nil {
			e.Changes = chart.Changes(was, c.Outline(page.ID))
		}
	}
	return e
}

// resumeLine is what dtree resume says before it goes on.
func resumeLine(runID string, r *run.Carried, c *chart.Chart) string {
	at := "its start"
	if r.At != "" {
		at = "node " + r.At
		if i, ok := c.Graph.Index(r.At); ok {
			at += " " + types.Quote(types.Excerpt(firstLineOf(c.Nodes[i].Text), 60))
		}
	}
	them := "them"
	if r.Len() == 1 {
		them = "it"
	}
	line := fmt.Sprintf("dtree: run %s goes on from run %s at %s: %s taken from it, no agent called for %s",
		runID, r.Start.RunID, at, types.Plural(r.Len(), "finished step"), them)
	if r.Len() == 0 { // --from the first step: nothing is taken
		line = fmt.Sprintf("dtree: run %s goes on from run %s at %s: no finished step taken from it", runID, r.Start.RunID, at)
	}
	if f := r.Fork; f != nil { // inside the fork: each branch from its own step
		// In the fork's order, as inspect lists them, whichever started first.
		branches := slices.Clone(f.Branches)
		if i, ok := c.Graph.Index(f.Node); ok && c.Nodes[i].Fork != nil {
			order := map[string]int{}
			for k, fb := range c.Nodes[i].Fork.Branches {
				order[fb.Name] = k
			}
			slices.SortStableFunc(branches, func(a, b *run.CarriedBranch) int { return order[a.Name] - order[b.Name] })
		}
		ways := make([]string, 0, len(branches))
		for _, b := range branches[:min(len(branches), 10)] {
			if b.Done {
				ways = append(ways, fmt.Sprintf("%s taken whole", b.ID))
			} else {
				ways = append(ways, fmt.Sprintf("%s at node %s", b.ID, b.At))
			}
		}
		if more := len(branches) - len(ways); more > 0 {
			ways = append(ways, fmt.Sprintf("%d more", more))
		}
		line += "; its branches: " + strings.Join(ways, ", ")
	}
	return line
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// resumeReplayCommand is the command line that replays a resumed run from
// its answers.yaml: its chart, page and start are the first run's.
func resumeReplayCommand(path string, rs runlog.RunStart, o runOptions, fs *pflag.FlagSet, answers string) string {
	flags := givenFlags(fs, "format", "config", "trust")
	if rs.Page != "" {
		flags = append(flags, "--page", rs.Page)
	}
	if rs.Start != "" {
		flags = append(flags, "--start", rs.Start)
	}
	if o.maxSteps != run.DefaultMaxSteps {
		flags = append(flags, "--max-steps", strconv.Itoa(o.maxSteps))
	}
	if o.noValidate {
		flags = append(flags, "--no-validate")
	}
	return replayCommand(path, flags, answers)
}

// keepBudget keeps the budget the files and the environment set (s0)
// where the run's log recorded a looser one (none, or more): the log is a
// file an agent of the run could have edited, and cannot spend the user's
// money past what the user set now (SPEC §12). A budget given again as a
// flag is the user's and stands. allow_unmetered under a budget is kept
// off the same way.
func (a *App) keepBudget(s, s0 *settings.Settings, runID string) {
	keep := func(key string, looser bool, set func(), mine, logged string) {
		if s.Sources[key].Layer != settings.LayerRun || !looser {
			return
		}
		set()
		s.Sources[key] = s0.Sources[key]
		fmt.Fprintf(a.Err, "dtree: warning: run %s's log has %s %s, looser than the %s of %s: the run keeps %s\n",
			runID, key, logged, mine, s0.Sources[key], mine)
		flag := "--" + strings.ReplaceAll(key, "_", "-")
		if key != settings.KeyAllowUnmetered {
			flag += " VALUE"
		}
		fmt.Fprintf(a.Err, "dtree: hint: to spend more, give it again: %s\n", flag)
	}
	keep(settings.KeyMaxCost, s0.MaxCost > 0 && (s.MaxCost == 0 || s.MaxCost > s0.MaxCost), func() { s.MaxCost = s0.MaxCost },
		dollars(s0.MaxCost), dollars(s.MaxCost))
	keep(settings.KeyMaxTokens, s0.MaxTokens > 0 && (s.MaxTokens == 0 || s.MaxTokens > s0.MaxTokens), func() { s.MaxTokens = s0.MaxTokens },
		tokens(s0.MaxTokens), tokens(s.MaxTokens))
	// Calls a budget cannot count are a looser budget too.
	keep(settings.KeyAllowUnmetered, s.AllowUnmetered && !s0.AllowUnmetered && (s.MaxCost > 0 || s.MaxTokens > 0), func() { s.AllowUnmetered = false },
		"false", "true")
}

// tokens is a budget of tokens as the user reads it: 12,000 tokens, or
// none for 0.
func tokens(n int64) string {
	if n == 0 {
		return "none"
	}
	return types.Thousands(n) + " tokens"
}

// dollars is a budget as the user reads it: $0.03, or none for 0.
func dollars(f float64) string {
	if f == 0 {
		return "none"
	}
	return "$" + strconv.FormatFloat(f, 'f', -1, 64)
}
