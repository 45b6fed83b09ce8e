package cli

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/types"
)

type lintOptions struct {
	chartFlags
	json bool
}

// lintReport is what `dtree lint --json` prints for each chart.
type lintReport struct {
	FormatVersion int                `json:"format_version"`
	Source        string             `json:"source"`
	Errors        []types.Diagnostic `json:"errors"`
	Warnings      []types.Diagnostic `json:"warnings"`
	// Error is why the chart could not be read; absent when it was.
	Error string `json:"error,omitempty"`
}

func (a *App) newLint() *cobra.Command {
	var o lintOptions
	cmd := &cobra.Command{
		Use:   "lint CHART...",
		Short: "Check charts for errors and warnings",
		Long: `Lint imports each CHART (a file, or - for stdin) and reports every error
(the chart cannot run) and warning (it can, but probably not as meant), each
with its class, the ids involved, the line of the file, and a hint how to fix
it. 'dtree docs lint' lists the classes.

Exit status: 0 when no chart has errors (warnings allowed), 3 when one has,
or cannot be read; every chart is linted either way.

Docs: dtree docs lint`,
		Example: `  dtree lint chart.csv
  dtree lint flows/*.csv flows/*.yaml
  dtree lint --json chart.csv | jq -r '.errors[].class' `,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &UsageError{Err: errors.New("lint takes one or more chart files (or - for stdin), got none"), Cmd: cmd.CommandPath()}
			}
			if n := slices.Index(args, "-"); n >= 0 && slices.Index(args[n+1:], "-") >= 0 {
				return &UsageError{Err: errors.New("lint reads stdin (-) once"), Cmd: cmd.CommandPath()}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.lintAll(args, o)
		},
	}
	o.register(cmd.Flags())
	cmd.Flags().BoolVar(&o.json, "json", false, "print the findings as JSON: one document per chart")
	return cmd
}

// lintAll lints each chart in turn, as go vet does its packages: a chart
// that cannot be read is reported and the next one linted. A usage or
// settings error stops them all.
func (a *App) lintAll(paths []string, o lintOptions) error {
	if len(paths) == 1 {
		return a.lint(paths[0], o)
	}
	var failed error
	for _, path := range paths {
		err := a.lint(path, o)
		switch code := exitCode(err); {
		case err == nil:
		case code == types.ExitChart:
			var chart *ChartError
			if !errors.As(err, &chart) {
				// unreadable: said here, as the next chart goes on
				a.printError(err)
				if o.json {
					_ = writeJSON(a.maskedOut(true), lintReport{FormatVersion: types.FormatVersion, Source: path,
						Errors: []types.Diagnostic{}, Warnings: []types.Diagnostic{}, Error: err.Error()})
				}
			}
			failed = exitStatus(types.ExitChart)
		default:
			return err
		}
	}
	return failed
}

func (a *App) lint(path string, o lintOptions) error {
	c, _, err := a.load(path, o.chartFlags)
	if err != nil {
		return err
	}
	src := c.Doc.Source
	// The findings quote the chart, where a secret may stand.
	if o.json {
		if err := writeJSON(a.maskedOut(true), lintReport{FormatVersion: types.FormatVersion, Source: src, Errors: c.Errors, Warnings: c.Warnings}); err != nil {
			return err
		}
	} else {
		out := a.maskedOut(false)
		printDiagnostics(out, src, "error", c.Errors)
		printDiagnostics(out, src, "warning", c.Warnings)
		if a.inActions() { // stdout stays the findings a script reads
			a.annotate(src, "error", c.Errors)
			a.annotate(src, "warning", c.Warnings)
		}
		fmt.Fprintf(a.Err, "%s: %s, %s (%s, %s)\n", src, types.Plural(len(c.Errors), "error"), types.Plural(len(c.Warnings), "warning"),
			types.Plural(len(c.Doc.Nodes), "node"), types.Plural(len(c.Doc.Pages), "page"))
	}
	if len(c.Errors) > 0 {
		return &ChartError{Source: src, Path: path, Count: len(c.Errors), Quiet: true}
	}
	return nil
}
