package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

// UsageError is a command line dtree cannot act on: a bad flag or argument.
type UsageError struct {
	Err  error
	Cmd  string
	Hint string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ChartError says a chart has lint errors. They were already printed, one
// per line, so it carries only the count. Quiet is set when the command's
// own output already said so (lint's summary line).
type ChartError struct {
	Source string // the chart's name in messages ("stdin" for -)
	Path   string // as given on the command line
	Count  int
	Quiet  bool
}

func (e *ChartError) Error() string {
	return fmt.Sprintf("%s has %s", e.Source, types.Plural(e.Count, "error"))
}

// exitStatus is an exit code whose reason the command already printed.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// exitCode is the one table from errors to exit codes.
func exitCode(err error) int {
	var (
		usage      *UsageError
		chart      *ChartError
		unreadable *document.UnreadableError
		ran        *runError
		bad        *settings.Error
		status     exitStatus
		changed    *ChangedChartError
	)
	switch {
	case err == nil:
		return types.ExitOK
	case errors.As(err, &status):
		return int(status)
	case errors.As(err, &ran):
		return ran.code
	case errors.As(err, &usage), errors.As(err, &bad):
		return types.ExitUsage
	case errors.As(err, &chart), errors.As(err, &unreadable), errors.As(err, &changed):
		return types.ExitChart
	}
	return types.ExitFailed
}

// printError writes err in age's style: "dtree: error: …" then hints.
func (a *App) printError(err error) {
	var (
		chart  *ChartError
		status exitStatus
	)
	if errors.As(err, &chart) && chart.Quiet || errors.As(err, &status) {
		return
	}
	var ran *runError
	if errors.As(err, &ran) && ran.code == types.ExitInterrupted {
		fmt.Fprintln(a.Err, "dtree: interrupted; agents stopped, logs closed")
		return
	}
	fmt.Fprintf(a.Err, "dtree: error: %v\n", err)
	if ran != nil {
		for _, line := range ran.also {
			fmt.Fprintf(a.Err, "dtree: error: %s\n", line)
		}
	}
	var (
		usage      *UsageError
		unreadable *document.UnreadableError
		bad        *settings.Error
		changed    *ChangedChartError
	)
	hint := ""
	switch {
	case ran != nil:
		hint = ran.hint
	case errors.As(err, &usage):
		hint = usage.Hint
		if hint == "" && usage.Cmd != "" {
			hint = fmt.Sprintf("run '%s --help' for usage", usage.Cmd)
		}
	case errors.As(err, &unreadable):
		hint = unreadable.Hint
	case errors.As(err, &bad):
		hint = bad.Hint
	case errors.As(err, &changed):
		hint = "the steps it took may not be the chart's now: start a new run with dtree run, or go on all the same with --force"
	case errors.As(err, &chart):
		hint = fmt.Sprintf("fix the errors above in the chart and export it again; 'dtree lint %s' lists them", chart.Path)
	}
	for _, h := range strings.Split(hint, "\n") {
		if h != "" {
			fmt.Fprintf(a.Err, "dtree: hint: %s\n", h)
		}
	}
}
