// Package cli is dtree's command tree. Commands are thin: flags become an
// options struct, a domain package does the work, and exitCode maps the
// error to the exit codes of readme/exit-codes.md.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/dtree-dev/dtree/types"
	"io"
	"os"
	"runtime/debug"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/procs"
	"github.com/dtree-dev/dtree/internal/runlog"
)

// App is what every command needs from the outside world. Main builds the
// real one; tests build their own.
type App struct {
	In  io.Reader
	Out io.Writer // data only
	Err io.Writer // progress, warnings, errors, hints
	// Getenv reads the environment (settings' DTREE_* variables).
	Getenv func(string) string
	// Environ is the environment whose secrets are masked (mask.go);
	// nil means os.Environ.
	Environ func() []string

	// mask masks the secrets in what the command writes (mask.go).
	mask atomic.Pointer[runlog.Redactor]

	// Procs ends what a run's agents leave running
	// (readme/run.md#what-dtree-stops-and-when); nil in tests that run
	// commands in process, where the test binary's other children are not the
	// run's.
	Procs *procs.Reaper

	// interrupts is the signal handler Main installs; nil in tests.
	interrupts *interrupts

	// started is set once a command's own code runs; an error before that
	// is cobra rejecting the command line.
	started bool
	// walked is set once a run starts walking its chart: an error before
	// that is a run that never started (readme/ci.md).
	walked bool
	// command is the command running, "dtree lint", for messages.
	command string
	// warned are the settings warnings printed, each said once.
	warned map[string]bool
	// ascii is set when the locale is not UTF-8 (locale.go).
	ascii bool
}

// gcPercent is dtree's garbage collector target when GOGC is not set. An
// import allocates its whole chart at once; collecting at 200% rather than
// 100% halves the collections while the heap grows, for a few percent more
// peak memory (readme/performance.md has the figures).
const gcPercent = 200

// Main runs dtree with the process's arguments and streams and returns the
// exit code.
func Main() int {
	if code, ok := procs.WatcherMain(); ok {
		return code // this is a run's watcher, not a command line
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reaper := procs.New(0).WithWatcher(os.Args[0])
	in := &interrupts{err: os.Stderr, cancel: cancel, procs: reaper}
	stop := in.watch()
	defer stop()
	app := &App{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv, Procs: reaper, interrupts: in}
	return app.Run(ctx, os.Args[1:])
}

// gracefulInterrupt is the annotation of a command that stops its own work
// when interrupted (the context ends) and must be waited for. Any other
// command only reads, and an interrupt ends it at once.
const gracefulInterrupt = "graceful-interrupt"

// Run executes one command line and returns its exit code.
func (a *App) Run(ctx context.Context, args []string) int {
	// Everything on stderr is masked: warnings quote the chart, errors
	// the agents and the settings.
	a.ascii = !utf8Locale(a.Getenv)
	a.Err = a.masked(a.Err, false)
	out := wroteWriter{w: a.Out, wrote: new(atomic.Bool)}
	if f, ok := a.Out.(interface{ Fd() uintptr }); ok {
		a.Out = wroteFile{out, f}
	} else {
		a.Out = out
	}
	a.mask.Store(nil)
	root := a.newRoot()
	root.SetArgs(args)
	graceful := false
	if c, _, ferr := root.Find(args); ferr == nil {
		graceful = c.Annotations[gracefulInterrupt] != ""
	}
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		if !graceful {
			fmt.Fprintln(a.Err, "dtree: interrupted")
			return types.ExitInterrupted
		}
		err = <-done
	}
	if err != nil && !a.started {
		var usage *UsageError
		if !errors.As(err, &usage) {
			path := root.CommandPath()
			c, _, ferr := root.Find(args)
			if ferr == nil {
				path = c.CommandPath()
			} else {
				err = unknownCommand(root, args, err)
			}
			err = &UsageError{Err: err, Cmd: path}
		}
	}
	if err != nil && errors.Is(err, syscall.EPIPE) && !a.walked {
		// What reads stdout stopped reading (| head): it has what it
		// wanted, and a shell says nothing of that; nor does dtree.
		return types.ExitOK
	}
	if err != nil {
		a.printError(err)
		if !out.wrote.Load() && wantsJSON(root, args) {
			// Scripts get the reason as data too (readme/exit-codes.md#json).
			_ = writeJSON(a.maskedOut(true), newErrorReport(err))
		}
	}
	return exitCode(err)
}

// wroteWriter notes whether anything was written through it.
type wroteWriter struct {
	w     io.Writer
	wrote *atomic.Bool
}

func (w wroteWriter) Write(p []byte) (int, error) {
	w.wrote.Store(true)
	return w.w.Write(p)
}

// wroteFile is a wroteWriter on a file, which keeps its Fd.
type wroteFile struct {
	wroteWriter
	f interface{ Fd() uintptr }
}

func (w wroteFile) Fd() uintptr { return w.f.Fd() }

// wantsJSON reports whether the command line asks for JSON: --json given
// to a command that has it, parsed or, when the line did not parse, as
// written before any "--".
func wantsJSON(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(args)
	if err != nil || c.Flags().Lookup("json") == nil {
		return false
	}
	if f := c.Flags().Lookup("json"); f.Changed {
		return f.Value.String() == "true"
	}
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true", "--json=1":
			return true
		}
	}
	return false
}

func (a *App) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "dtree",
		Short: "Run flowcharts as LLM agent workflows",
		Long: `dtree runs a flowchart (a Lucidchart CSV export, Lucid API JSON, or a chart
written in dtree's YAML) as an agent workflow: each step is sent to an agent
CLI, decisions pick a labelled branch, results are validated and retried.

Its documentation is built in: 'dtree docs' lists the topics.`,
		Example: `  dtree lint chart.csv                         # check a Lucid export
  dtree run --dry-run chart.csv                # every agent call, none made
  dtree run chart.csv                          # run it with Claude Code
  dtree docs run                               # how a run goes`,
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			a.started = true
			a.command = cmd.CommandPath()
		},
	}
	root.SetIn(a.In)
	root.SetOut(a.Out)
	root.SetErr(a.Err)
	root.SetVersionTemplate("dtree {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: flagError(c, err), Cmd: c.CommandPath()}
	})
	// -v is --verbose, on every command (dtree run and resume print every
	// agent call with it), so that `dtree -v run` and `dtree run -v` say
	// the same; the version is --version alone, or dtree version.
	root.Flags().Bool("version", false, "print dtree's version")
	root.PersistentFlags().BoolP("verbose", "v", false, "print more: every agent call of dtree run and dtree resume")
	root.DisableSuggestions = true // unknownCommand suggests, in dtree's words
	root.AddCommand(a.newVersion(), a.newInspect(), a.newLint(), a.newRun(), a.newResume(), a.newSettings())
	root.AddCommand(a.newConvert(), a.newGraph(), a.newDiff(), a.newUndo())
	root.AddCommand(a.newCLIs(), a.newTrust(), a.newDocs(), a.newClean(), a.newPlan(), a.newJoin())
	for _, c := range root.Commands() {
		switch c.Name() {
		case "run", "inspect", "graph", "convert", "plan":
			c.ValidArgsFunction = completeChart(false)
		case "lint":
			c.ValidArgsFunction = completeChart(true)
		case "resume", "diff", "undo":
			c.ValidArgsFunction = a.completeRun
		}
		a.registerCompletions(c)
	}
	a.strictCompletion(root)
	return root
}
