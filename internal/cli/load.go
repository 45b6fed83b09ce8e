package cli

import (
	"encoding/json"
	"fmt"
	"io"

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
	format string
	config string
}

func (f *chartFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.format, "format", "", "chart format: csv, json or yaml (default: from the file's extension or content)")
	fs.StringVar(&f.config, "config", "", "settings file to use instead of ./dtree.yaml")
}

// settings loads the settings (readme/settings.md): the defaults nodes fall
// back to and the custom CLIs a chart may name.
func (a *App) settings(config string) (*settings.Settings, error) {
	s, err := settings.Load(settings.LoadOptions{ConfigFile: config, Getenv: a.Getenv})
	if err == nil {
		a.maskSettings(s)
	}
	return s, err
}

// load reads and checks a chart with the settings' defaults and CLIs.
func (a *App) load(path string, f chartFlags) (*chart.Chart, types.Defaults, error) {
	switch f.format {
	case "", document.FormatCSV, document.FormatJSON, document.FormatYAML:
	default:
		return nil, types.Defaults{}, &UsageError{Err: fmt.Errorf("unknown --format %q", f.format), Hint: "use --format csv, json or yaml"}
	}
	s, err := a.settings(f.config)
	if err != nil {
		return nil, types.Defaults{}, err
	}
	d := s.Defaults()
	c, err := chart.Load(path, a.In, chart.Options{Format: f.format, Defaults: d, Names: agent.NewRegistry(s.CLIs).Names()})
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
