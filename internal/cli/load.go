package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

// chartFlags are the flags of every command that reads a chart.
type chartFlags struct {
	format  string
	config  string
	varSet  []string // --var NAME=VALUE
	varFile string   // --vars FILE
}

func (f *chartFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.format, "format", "", "chart format: "+document.NameList()+" (default: from the file's extension or content)")
	fs.StringVar(&f.config, "config", "", "settings file to use instead of ./dtree.yaml")
	fs.StringArrayVar(&f.varSet, "var", nil, "a variable's value, NAME=VALUE, for {{var.NAME}} in node text; again for another")
	fs.StringVar(&f.varFile, "vars", "", "a YAML file of variables' values (--var wins over it)")
}

// settings loads the settings (readme/settings.md) for a command that
// uses those named by check (and the custom CLIs): a bad value of any
// other setting is a warning, not an error, as the command does not use
// it; dtree run, which uses them all, stops on it.
func (a *App) settings(config string, check []string) (*settings.Settings, error) {
	return a.listSettings(settings.LoadOptions{ConfigFile: config, Check: check})
}

// listSettings loads the settings for a command that runs none of the
// CLIs: what an untrusted ./dtree.yaml may not set is kept, to show and to
// check names against, with a warning (readme/settings.md#trust).
func (a *App) listSettings(lo settings.LoadOptions) (*settings.Settings, error) {
	lo.Getenv, lo.ListUntrusted = a.Getenv, true
	s, err := settings.Load(lo)
	if err != nil {
		return nil, err
	}
	a.maskSettings(s)
	a.warnIgnored(s)
	a.warnUntrusted(s)
	return s, nil
}

// warnUntrusted says, once, that dtree run would refuse what the project
// file sets.
func (a *App) warnUntrusted(s *settings.Settings) {
	u := s.Untrusted
	if u == nil || a.warned["untrusted"] {
		return
	}
	if a.warned == nil {
		a.warned = map[string]bool{}
	}
	a.warned["untrusted"] = true
	fmt.Fprintf(a.Err, "dtree: warning: %s is not trusted, and it sets what only a trusted file may: %s; dtree run refuses it, and no command runs its CLIs\n", u.File, u.Names())
	fmt.Fprintf(a.Err, "dtree: hint: read it; if you trust what it sets, run 'dtree trust' ('dtree docs settings' says why)\n")
}

// warnIgnored warns of the bad values the command passed over, once each.
func (a *App) warnIgnored(s *settings.Settings) {
	for _, e := range s.Ignored {
		if a.warned[e.Error()] {
			continue // graph --run loads them twice
		}
		if a.warned == nil {
			a.warned = map[string]bool{}
		}
		a.warned[e.Error()] = true
		fmt.Fprintf(a.Err, "dtree: warning: %s (%s does not use %s; dtree run will refuse it)\n", visible(e.Error()), a.command, visible(e.Key))
	}
}

// load reads and checks a chart with the settings' defaults and CLIs.
func (a *App) load(path string, f chartFlags) (*chart.Chart, types.Defaults, error) {
	if _, ok := document.ByName(f.format); !ok && f.format != "" {
		return nil, types.Defaults{}, &UsageError{Err: fmt.Errorf("unknown --format %q", f.format), Hint: document.UnknownFormatHint()}
	}
	s, err := a.settings(f.config, settings.ChartKeys)
	if err != nil {
		return nil, types.Defaults{}, err
	}
	given, err := givenVars(f.varSet, f.varFile)
	if err != nil {
		return nil, types.Defaults{}, err
	}
	d := s.Defaults()
	c, err := chart.Load(path, a.In, chart.Options{Format: f.format, Defaults: d, Names: agent.NewRegistry(s.CLIs).Names(),
		Vars: slices.Collect(maps.Keys(given))})
	return c, d, err
}

// printDiagnostics writes findings the way compilers do, one per line with
// its hint under it: "chart.csv:12: error: dangling_line: …".
func printDiagnostics(w io.Writer, source, severity string, diags []types.Diagnostic) {
	for _, d := range diags {
		loc := source
		if d.Line > 0 {
			loc = fmt.Sprintf("%s:%d", source, d.Line)
		}
		fmt.Fprintf(w, "%s: %s: %s: %s\n", loc, severity, d.Class, d.Message)
		if d.Hint != "" {
			fmt.Fprintf(w, "    hint: %s\n", d.Hint)
		}
	}
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// oneChart is the Args check of commands that read one chart.
func oneChart(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return &UsageError{Err: fmt.Errorf("%s takes one chart file (or - for stdin), got %d arguments", cmd.Name(), len(args)), Cmd: cmd.CommandPath()}
	}
	return nil
}

// choosePage is the page --page names (its id, title or number), nil for
// a chart without pages or an empty sel.
func choosePage(c *chart.Chart, sel string) (*types.Page, error) {
	if sel == "" || len(c.Doc.Pages) == 0 {
		return nil, nil
	}
	p, err := c.Page(sel)
	if err != nil {
		return nil, &UsageError{Err: err, Hint: "pass --page with a page's id, title or number"}
	}
	return &p, nil
}

// checkPage is what every command that takes a chart does before its
// work: it prints the warnings on page (nil: the whole chart) unless
// quiet, then the errors, and refuses a chart with errors there as a
// *ChartError (exit 3). Errors of the classes in settled are not counted
// (run's --start settles ambiguous_root and no_root).
func (a *App) checkPage(c *chart.Chart, path string, page *types.Page, quiet bool, settled ...string) error {
	errs := chart.OnPage(c.Errors, page)
	if len(settled) > 0 {
		errs = slices.DeleteFunc(slices.Clone(errs), func(d types.Diagnostic) bool { return slices.Contains(settled, d.Class) })
	}
	show := printDiagnostics
	if a.inActions() {
		// Annotations on the chart's lines (readme/ci.md#github-actions).
		show = func(_ io.Writer, source, severity string, diags []types.Diagnostic) {
			a.annotate(source, severity, diags)
		}
	}
	if !quiet {
		show(a.Err, c.Doc.Source, "warning", chart.OnPage(c.Warnings, page))
	}
	if len(errs) > 0 {
		show(a.Err, c.Doc.Source, "error", errs)
		return &ChartError{Source: c.Doc.Source, Path: path, Format: c.Doc.Format, Count: len(errs), Diags: errs}
	}
	return nil
}
