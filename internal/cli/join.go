package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

type joinOptions struct {
	runOptions
	chart string
}

func (a *App) newJoin() *cobra.Command {
	var o joinOptions
	cmd := &cobra.Command{
		Use:   "join RUN_DIR...",
		Short: "Join the runs of a fork's branches, each run alone (--branch), and go on",
		Long: `Join takes the run directories of a fork's branches, each run on a machine
of its own with 'dtree run CHART --branch FORK/NAME' (a GitHub Actions
matrix: 'dtree plan --matrix'), and goes on after the fork's join: it
checks that they are runs of the same chart and fork, each branch once and
every branch there, makes the fork's tree (trunk.patch of the fork's first
branch on the commit the checkout is at) and each branch's (its
branch.patch on the fork's), and goes on inside the fork as dtree resume
would: the joined run takes the steps before the fork and each branch's,
puts the steps before the fork in the working tree, and the join merges
the branches three-way as on one machine (a conflict is the join's
agent's to resolve, or fails the run with the markers in the files).

A patch that does not apply on the commit the checkout is at fails the
join, exit 1, with nothing applied.

Docs: dtree docs ci`,
		Example: `  dtree join runs/dtree-branch-*           # the downloaded artifacts
  dtree join --cli claude --trust a/ b/ c/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{Err: errors.New("join takes the run directories of the fork's branches"), Cmd: cmd.CommandPath(),
					Hint: "dtree join RUN_DIR... ('dtree docs ci')"}
			}
			return nil
		},
		Annotations: map[string]string{gracefulInterrupt: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.join(cmd.Context(), args, o, cmd.Flags())
		},
	}
	f := cmd.Flags()
	o.registerWalk(f)
	f.StringVar(&o.chart, "chart", "", "the chart to go on with (default: the file the branches' runs read)")
	return cmd
}

// branchRun is what join reads of a run of one branch.
type branchRun struct {
	dir        string
	start      runlog.RunStart
	fork, name string
	branches   int    // how many branch_start events it has
	status     string // its branch_end's
	runStatus  string // its run_end's
}

func (b branchRun) id() string { return b.fork + "/" + b.name }

// readBranchRun reads the events of the run in dir.
func readBranchRun(dir string) (branchRun, error) {
	b := branchRun{dir: dir}
	f, err := runlog.OpenLog(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return b, err
	}
	defer f.Close()
	rd := runlog.NewEventReader(f).Only(runlog.EventRunStart, runlog.EventBranchStart, runlog.EventBranchEnd, runlog.EventRunEnd)
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *runlog.LineError
		if errors.As(err, &le) {
			continue // a torn or edited line; the events join needs are checked below
		}
		if err != nil {
			return b, err
		}
		switch e := ev.(type) {
		case runlog.RunStart:
			b.start = e
		case runlog.BranchStart:
			b.branches++
			b.fork, b.name = e.Fork, e.Name
		case runlog.BranchEnd:
			b.status = e.Status
		case runlog.RunEnd:
			b.runStatus = e.Status
		}
	}
	return b, nil
}

func (a *App) join(ctx context.Context, dirs []string, o joinOptions, fs *pflag.FlagSet) error {
	s, err := a.runSettings(o.runOptions, fs, settings.LoadOptions{})
	if err != nil {
		return err
	}
	runs := make([]branchRun, len(dirs))
	for i, dir := range dirs {
		b, err := readBranchRun(dir)
		switch {
		case err != nil:
			return &UsageError{Err: fmt.Errorf("join: %s: %w", dir, err), Hint: "give the run directories of 'dtree run CHART --branch FORK/NAME'"}
		case b.start.RunID == "":
			return &UsageError{Err: fmt.Errorf("join: %s: its events.jsonl has no run_start", dir)}
		case b.branches != 1:
			return &UsageError{Err: fmt.Errorf("join: %s: run %s ran %d branches, not one: it is not a run of 'dtree run --branch'", dir, b.start.RunID, b.branches),
				Hint: "give the run directories of 'dtree run CHART --branch FORK/NAME', one a branch"}
		case b.status != run.StatusSucceeded || b.runStatus != run.StatusSucceeded:
			return &UsageError{Err: fmt.Errorf("join: %s: branch %s did not get to the join: %s", dir, types.Quote(b.id()), cmp.Or(b.status, b.runStatus, "the run has no end")),
				Hint: "run the branch again (" + types.ShellJoin([]string{"dtree", "run", "CHART", "--branch", b.id()}) + "), then join"}
		}
		for _, p := range []string{run.TrunkPatch, run.BranchPatch} {
			if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
				return &UsageError{Err: fmt.Errorf("join: %s: branch %s has no %s: %w", dir, types.Quote(b.id()), p, err),
					Hint: "the branch ran without checkpoints (outside git?): run it again in the repository"}
			}
		}
		if i > 0 {
			switch first := runs[0]; {
			case b.start.GraphDigest != first.start.GraphDigest:
				return &UsageError{Err: fmt.Errorf("join: %s and %s are runs of different charts (their graphs differ)", first.dir, dir),
					Hint: "give the runs of one chart's fork"}
			case b.fork != first.fork:
				return &UsageError{Err: fmt.Errorf("join: %s ran a branch of fork %s, %s one of fork %s", first.dir, first.fork, dir, b.fork),
					Hint: "give the runs of one fork's branches"}
			}
		}
		runs[i] = b
	}
	first := runs[0]
	rs := first.start

	path := cmp.Or(o.chart, rs.Source)
	if path == "" || path == "-" || path == "stdin" {
		return &UsageError{Err: fmt.Errorf("join: run %s read its chart from stdin", rs.RunID), Hint: "give it again: --chart FILE"}
	}
	reg := agent.NewRegistry(s.CLIs)
	given, err := givenVars(o.varSet, o.varFile)
	if err != nil {
		return err
	}
	vars, err := recordedVars(rs.RunID, rs.Vars, given)
	if err != nil {
		return err
	}
	c, err := a.loadRunChart(ctx, path, o.format, s, reg, vars)
	if err != nil {
		return err
	}
	o.page = rs.Page
	if d := c.Digest(rs.Page); d != rs.GraphDigest {
		return &UsageError{Err: fmt.Errorf("join: the graph of %s changed since the branches ran it", path),
			Hint: "join with the chart the branches ran (--chart FILE), or run the branches again"}
	}
	fork, ok := c.Graph.Node(first.fork)
	if !ok || fork.Fork == nil {
		return &UsageError{Err: fmt.Errorf("join: %s has no fork %s", path, first.fork)}
	}
	// The fork's order; each branch once, every branch there.
	byName := map[string]branchRun{}
	for _, b := range runs {
		if other, ok := byName[b.name]; ok {
			return &UsageError{Err: fmt.Errorf("join: %s and %s are both runs of branch %s", other.dir, b.dir, types.Quote(b.id())),
				Hint: "give one run a branch"}
		}
		byName[b.name] = b
	}
	var ordered []branchRun
	var missing []string
	for _, fb := range fork.Fork.Branches {
		b, ok := byName[fb.Name]
		if !ok {
			missing = append(missing, first.fork+"/"+fb.Name)
			continue
		}
		ordered = append(ordered, b)
		delete(byName, fb.Name)
	}
	for _, b := range byName {
		return &UsageError{Err: fmt.Errorf("join: %s: fork %s of %s has no branch %s", b.dir, first.fork, path, types.Quote(b.name))}
	}
	if len(missing) > 0 {
		return &UsageError{Err: fmt.Errorf("join: fork %s has %d branches, and %s missing: %s", first.fork, len(fork.Fork.Branches),
			types.Choose(len(missing), "one is", fmt.Sprintf("%d are", len(missing))), strings.Join(missing, ", ")),
			Hint: "run each with '" + types.ShellJoin([]string{"dtree", "run", path, "--branch", "ID"}) + "' and give all their run directories"}
	}

	// The fork's tree and each branch's, made of the patches as commits:
	// the trunk's on the commit the checkout is at, each branch's on the
	// fork's, then merged at the join three-way as the branches of a fork
	// in one run (run/fork.go merge).
	workdir := cmp.Or(o.workdir, ".")
	repo, err := workspace.Open(ctx, workdir)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("join: %s: %w", workdir, err), Hint: "join in the git repository the branches ran in"}
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return err
	}
	notApplied := func(what, patch string, err error) error {
		var ae *workspace.ApplyError
		if !errors.As(err, &ae) {
			return fmt.Errorf("join: %s (%s): %w", what, patch, err)
		}
		fmt.Fprintf(a.Err, "dtree: error: join: %s (%s) does not apply on the commit the checkout is at, and nothing was applied: %s\n",
			what, patch, visible(strings.TrimSpace(ae.Git.Error())))
		fmt.Fprintf(a.Err, "dtree: hint: join in a checkout of the commit the branches ran from\n")
		return exitStatus(types.ExitFailed)
	}
	trunkPatch := filepath.Join(ordered[0].dir, run.TrunkPatch)
	base, err := repo.ApplyCommit(ctx, head, trunkPatch, "dtree join: the steps before fork "+first.fork)
	if err != nil {
		return notApplied("the steps before the fork", trunkPatch, err)
	}
	tips := make([]string, len(ordered))
	for i, b := range ordered {
		p := filepath.Join(b.dir, run.BranchPatch)
		if tips[i], err = repo.ApplyCommit(ctx, base, p, "dtree join: branch "+b.id()); err != nil {
			return notApplied("branch "+types.Quote(b.id())+"'s change", p, err)
		}
	}
	// The joined run goes on inside the fork as dtree resume would
	// (readme/resume.md#forks): the steps before it from the first
	// branch's run, then each branch's steps from its own, each branch
	// taken whole at the join, its last checkpoint its commit above.
	joined, err := joinedEvents(ordered, base, tips)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("join: %w", err)}
	}
	defer os.Remove(joined)
	carried, err := run.ReadCarriedFile(joined)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("join: %s: %w", ordered[0].dir, err)}
	}
	if f := carried.Fork; f != nil {
		f.Alone = "" // each branch alone, all of them here: the fork whole
	}
	if carried.Fork == nil || carried.Fork.Node != first.fork || carried.At != first.fork {
		return &UsageError{Err: fmt.Errorf("join: %s: its steps do not lead to fork %s", ordered[0].dir, first.fork),
			Hint: "run the branch again with this dtree"}
	}
	if err := carried.ForkRefused(); err != nil {
		return &UsageError{Err: fmt.Errorf("join: %w", err), Hint: "run the branches again with checkpoints on"}
	}
	o.start = rs.Start
	o.runOptions = walkOptionsOf(o.runOptions, rs, fs)
	page, start, err := a.runTarget(c, o.runOptions, path)
	if err != nil {
		return err
	}
	if err := carried.Check(c, start); err != nil {
		return strayPath(rs.RunID, path, carried, err, false)
	}
	if o.vars, err = runVars(c.Doc, vars); err != nil {
		return err
	}
	// The working tree is the fork's: the join merges the branches onto
	// it.
	if err := repo.Apply(ctx, []string{trunkPatch}); err != nil {
		return notApplied("the steps before the fork", trunkPatch, err)
	}
	if !o.quiet {
		fmt.Fprintf(a.Err, "dtree: joined %s of fork %s: the steps before it from %s, then each branch's steps and change from its own run; merging them at %s\n",
			fmt.Sprintf("%d %s", len(ordered), types.Choose(len(ordered), "branch", "branches")), first.fork, ordered[0].dir, fork.Fork.Join)
	}
	return a.walkChart(ctx, walkJob{o: o.runOptions, s: s, reg: reg, c: c, page: page, start: start, resume: carried,
		replay: func(file string) string {
			return replayCommand(path, givenFlags(fs, "format", "config", "trust", "retries", "max-steps", "no-validate"), file)
		}})
}

// joinedEvents writes the events of a run of the whole fork to a file of
// its own for run.ReadCarriedFile, and returns its path: those of the
// first branch's run before its branch started (the steps before the
// fork), then each branch's from its branch_start to its branch_end,
// their checkpoints base and tips[i] (the commits of the patches here).
func joinedEvents(branches []branchRun, base string, tips []string) (string, error) {
	out, err := os.CreateTemp("", "dtree-join-*.jsonl")
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(out, 1<<16)
	for i, b := range branches {
		if err = branchEvents(w, b, i == 0, base, tips[i]); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", err
	}
	return out.Name(), nil
}

// branchEvents copies the events of the run of branch b to w: those
// before its branch_start when trunk, then the branch's, up to its
// branch_end, the fork's checkpoint in them base and the branch's tip.
func branchEvents(w *bufio.Writer, b branchRun, trunk bool, base, tip string) error {
	f, err := runlog.OpenLog(filepath.Join(b.dir, "events.jsonl"))
	if err != nil {
		return fmt.Errorf("%s: %w", b.dir, err)
	}
	defer f.Close()
	rd := runlog.NewEventReader(f)
	in := false
	for {
		ev, err := rd.NextEvent()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", b.dir, err)
		}
		line := rd.Raw()
		switch e := ev.(type) {
		case runlog.BranchStart:
			if !in && rd.Branch() == b.id() {
				in = true
				line = withCheckpoint(line, e.Checkpoint, base)
			}
		case runlog.BranchEnd:
			if in && rd.Branch() == b.id() {
				w.Write(withCheckpoint(line, e.Checkpoint, tip))
				return w.WriteByte('\n')
			}
		}
		if in || trunk && ev.Type() != runlog.EventRunEnd {
			w.Write(line)
			w.WriteByte('\n')
		}
	}
}

// withCheckpoint is the line of a branch_start or branch_end with its
// checkpoint, from, to instead; a commit id is written as it is read.
func withCheckpoint(line []byte, from, to string) []byte {
	if from == "" || to == "" {
		return line
	}
	return bytes.Replace(line, []byte(`"checkpoint":"`+from+`"`), []byte(`"checkpoint":"`+to+`"`), 1)
}
