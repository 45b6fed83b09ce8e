package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/types"
)

type lintOptions struct {
	chartFlags
	json bool
}

// lintReport is what `dtree lint --json` prints.
type lintReport struct {
	FormatVersion int                `json:"format_version"`
	Source        string             `json:"source"`
	Errors        []types.Diagnostic `json:"errors"`
	Warnings      []types.Diagnostic `json:"warnings"`
}

func (a *App) newLint() *cobra.Command {
	var o lintOptions
	cmd := &cobra.Command{
		Use:   "lint CHART",
		Short: "Check a chart for errors and warnings",
		Long: `Lint imports CHART (a file, or - for stdin) and reports every error (the
chart cannot run) and warning (it can, but probably not as meant), each with
its class, the ids involved, the CSV line, and a hint how to fix it in Lucid.
readme/lint.md lists the classes.

Exit status: 0 when there are no errors (warnings allowed), 3 when there
are, or when the chart cannot be read.`,
		Args: oneChart,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.lint(args[0], o)
		},
	}
	o.register(cmd.Flags())
	cmd.Flags().BoolVar(&o.json, "json", false, "print the findings as JSON")
	return cmd
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
