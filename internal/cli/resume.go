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
latest (the default) is the newest run.

The chart is read again from the file the run read (or --chart), and
refused when its graph changed since (exit 3) unless --force. Settings,
variables and the run's flags are the run's own unless given again.

Exit status: as dtree run's; 2 also when there is no such run, it is still
going, or it got to its end and --from names no step to go back to.

Docs: dtree docs resume`,
		Example: `  dtree resume                   # the latest run
  dtree resume 20261125T083512Z-dfaa7a
  dtree resume latest --from 7   # run node 7 and what follows again`,
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
	f.BoolVar(&o.force, "force", false, "go on even though the chart's graph changed since the run")
	f.StringVar(&o.chart, "chart", "", "the chart to go on with, - for stdin (default: the file the run read)")
	return cmd
}

func (a *App) resume(ctx context.Context, id string, o resumeOptions, fs *pflag.FlagSet) error {
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
	if runlog.Going(dir) {
		return &UsageError{Err: fmt.Errorf("resume: run %s is still going: a dtree holds its events.jsonl", runID),
			Hint: "wait for it to end, or stop it (Ctrl-C), then resume it"}
	}
	carried, err := readCarried(dir)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("resume: run %s: %w", runID, err)}
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
	s, err := a.runSettings(o.runOptions, fs, settings.LoadOptions{Run: recorded, RunID: runID})
	if err != nil {
		return err
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
	if err := checkOutline(c, rs, dir, path, o.force); err != nil {
		return err
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
			Hint: fmt.Sprintf("to run steps of it again, name the first with --from NODE; its path: %s", strings.Join(carried.Path(), " → "))}
	}
	return a.walkChart(ctx, walkJob{o: o.runOptions, s: s, reg: reg, c: c, page: page, start: start, resume: carried,
		replay: func(file string) string { return resumeReplayCommand(path, rs, o.runOptions, fs, file) }})
}

// readCarried reads the run's events.jsonl for dtree resume.
func readCarried(dir string) (*run.Carried, error) {
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return run.ReadCarried(f)
}

// resumedOptions are the options of the run that is resumed, with those
// given again on the command line over them.
func resumedOptions(o runOptions, rs runlog.RunStart, fs *pflag.FlagSet) runOptions {
	o.page, o.start = rs.Page, rs.Start
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
	if !fs.Changed("workdir") {
		o.workdir = rs.Workdir
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
	return fmt.Sprintf("dtree: run %s goes on from run %s at %s: %s taken from it, no agent called for them",
		runID, r.Start.RunID, at, types.Plural(len(r.Steps), "finished step"))
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
// flag is the user's and stands.
func (a *App) keepBudget(s, s0 *settings.Settings, runID string) {
	keep := func(key string, looser bool, set func(), mine, logged string) {
		if s.Sources[key].Layer != settings.LayerRun || !looser {
			return
		}
		set()
		s.Sources[key] = s0.Sources[key]
		fmt.Fprintf(a.Err, "dtree: warning: run %s's log has %s %s, looser than the %s of %s: the run keeps %s\n",
			runID, key, logged, mine, s0.Sources[key], mine)
		fmt.Fprintf(a.Err, "dtree: hint: to spend more, give it again: --%s VALUE\n", strings.ReplaceAll(key, "_", "-"))
	}
	keep(settings.KeyMaxCost, s0.MaxCost > 0 && (s.MaxCost == 0 || s.MaxCost > s0.MaxCost), func() { s.MaxCost = s0.MaxCost },
		dollars(s0.MaxCost), dollars(s.MaxCost))
	keep(settings.KeyMaxTokens, s0.MaxTokens > 0 && (s.MaxTokens == 0 || s.MaxTokens > s0.MaxTokens), func() { s.MaxTokens = s0.MaxTokens },
		tokens(s0.MaxTokens), tokens(s.MaxTokens))
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
