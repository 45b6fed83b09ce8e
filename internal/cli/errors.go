package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/run"
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
	Format string // its document.Format's name
	Count  int
	Quiet  bool
	// Diags are the errors, for --json (errorJSON).
	Diags []types.Diagnostic
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
		stray      *StrayPathError
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
	case errors.As(err, &chart), errors.As(err, &unreadable), errors.As(err, &changed), errors.As(err, &stray):
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
		if ran.hint != "" {
			fmt.Fprintf(a.Err, "dtree: hint: %s\n", ran.hint)
		}
		return
	}
	msgs, hints := errorText(err)
	if waiting := new(run.WaitingError); ran != nil && errors.As(err, &waiting) {
		// Not an error: the run's own status, as the line before says it,
		// then how to go on (exit 5 all the same).
		fmt.Fprintf(a.Err, "dtree: %s\n", visible(msgs[0]))
		msgs = msgs[1:]
	}
	for _, m := range msgs {
		fmt.Fprintf(a.Err, "dtree: error: %s\n", visible(m))
	}
	for _, h := range hints {
		fmt.Fprintf(a.Err, "dtree: hint: %s\n", visible(h))
	}
}

// visible is s with each control character but tab and line feed, and
// each bidirectional override, spelt as a Go escape (\x1b, \r,
// \u202e): an error may quote a key or a line of a file dtree did not
// write (a checkout's dtree.yaml, a chart, an agent's stderr), which must
// not drive the terminal (retitle it, clear the screen, rewrite the line
// the error is on) nor reorder what the user reads.
func visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return r != '\n' && r != '\t' && unicode.IsControl(r) ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// errorText is what dtree says of err: its error lines and its hints.
func errorText(err error) (msgs, hints []string) {
	msgs = append(msgs, err.Error())
	var ran *runError
	if errors.As(err, &ran) {
		msgs = append(msgs, ran.also...)
	}
	var (
		usage      *UsageError
		unreadable *document.UnreadableError
		bad        *settings.Error
		changed    *ChangedChartError
		stray      *StrayPathError
		chart      *ChartError
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
	case errors.As(err, &stray):
		hint = stray.Hint
	case errors.As(err, &chart):
		hint = chartFixHint(chart)
	}
	for _, h := range strings.Split(hint, "\n") {
		if h != "" {
			hints = append(hints, h)
		}
	}
	return msgs, hints
}

// errorReport is what a command given --json prints on stdout when it
// fails before printing its own JSON (readme/exit-codes.md#json): the
// exit code, the error lines and hints that stderr has too, and a chart's
// errors as lint --json gives them.
type errorReport struct {
	FormatVersion int                `json:"format_version"`
	ExitCode      int                `json:"exit_code"`
	Error         string             `json:"error"`
	Errors        []string           `json:"errors"`
	Hints         []string           `json:"hints"`
	Chart         string             `json:"chart,omitempty"`
	Diagnostics   []types.Diagnostic `json:"diagnostics"`
}

func newErrorReport(err error) errorReport {
	msgs, hints := errorText(err)
	r := errorReport{FormatVersion: types.FormatVersion, ExitCode: exitCode(err), Error: msgs[0], Errors: msgs,
		Hints: hints, Diagnostics: []types.Diagnostic{}}
	if r.Hints == nil {
		r.Hints = []string{}
	}
	var chart *ChartError
	if errors.As(err, &chart) && chart.Diags != nil {
		r.Chart, r.Diagnostics = chart.Source, chart.Diags
	}
	return r
}

// chartFixHint says where a chart's errors are mended: in Lucid for its
// exports, in the file for YAML, and for a chart on stdin in what sent it.
func chartFixHint(e *ChartError) string {
	if e.Path == "-" && len(e.Diags) == 1 && e.Diags[0].Class == "empty_chart" {
		return "check the command that pipes the chart in"
	}
	fix := document.FixHint(e.Format)
	if e.Path == "-" {
		return fix + "; pipe it to 'dtree lint -' to list them"
	}
	return fmt.Sprintf("%s; 'dtree lint %s' lists them", fix, shellJoin([]string{e.Path}))
}
