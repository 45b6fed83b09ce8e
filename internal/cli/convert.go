package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/nodeconf"
	"github.com/dtree-dev/dtree/types"
)

type convertOptions struct {
	chartFlags
	to  string
	out string
}

func (a *App) newConvert() *cobra.Command {
	var o convertOptions
	cmd := &cobra.Command{
		Use:   "convert CHART --to yaml|json|csv|drawio|mermaid|dot [-o FILE]",
		Short: "Write a chart in another format",
		Long: `Convert imports CHART (a file, or - for stdin) and writes it as dtree's YAML,
Lucid API JSON, a CSV in the layout of Lucid's export, a draw.io file, a
Mermaid flowchart or a Graphviz DOT graph: on stdout, or atomically to -o FILE. Without --to the
format comes from FILE's extension. The graph, texts, tags and metadata are
kept; what is left out (tags in JSON, swim lanes, containers and
subgraphs in every format, comments) is named on stderr. 'dtree docs convert' describes each format.

A chart with errors prints them on stderr and exits 3, as inspect does.

Docs: dtree docs convert`,
		Example: `  dtree convert --to yaml chart.csv -o chart.yaml
  dtree convert chart.yaml -o chart.json
  dtree convert --to csv chart.json > chart.csv`,
		Args: oneChart,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.convert(cmd.Context(), args[0], o)
		},
	}
	o.register(cmd.Flags())
	cmd.Flags().StringVar(&o.to, "to", "", "format to write: "+strings.Join(export.Formats, ", ")+" (default: from -o's extension)")
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "write to FILE instead of stdout")
	return cmd
}

// pictureByExt is the picture format an output file's extension names;
// the chart formats' are in document's table (document.ByOutput).
var pictureByExt = map[string]string{".dot": "dot", ".gv": "dot", ".svg": "svg"}

// formatOf is the format an output file's name says: a chart format's
// (document's table), else a picture's; "" for none.
func formatOf(out string) string {
	if f, ok := document.ByOutput(out); ok {
		return f.Name
	}
	return pictureByExt[strings.ToLower(filepath.Ext(out))]
}

// outputNames are the extensions of the allowed formats' files, for a
// message: ".yaml, .yml, …".
func outputNames(allowed []string) string {
	var out []string
	for _, f := range document.Written() {
		if !slices.Contains(allowed, f.Name) {
			continue
		}
		for _, e := range f.Output {
			// graph (whose formats have svg) draws Mermaid into a .mmd
			// only, and refuses a .md: do not offer it.
			if e == ".md" && slices.Contains(allowed, "svg") {
				continue
			}
			out = append(out, e)
		}
	}
	for _, e := range slices.Sorted(maps.Keys(pictureByExt)) {
		if slices.Contains(allowed, pictureByExt[e]) {
			out = append(out, e)
		}
	}
	return strings.Join(out, ", ")
}

// outputFormat is flag's value, else the format out's extension names.
func outputFormat(flag, name, out string, allowed []string) (string, error) {
	f := flag
	if f == "" && out != "" {
		f = formatOf(out)
		if !slices.Contains(allowed, f) {
			hint := fmt.Sprintf("pass --%s %s, or name the file %s", name, strings.Join(allowed, "|"), outputNames(allowed))
			return "", &UsageError{Err: fmt.Errorf("cannot tell the format to write from the name %q: no format dtree writes has its extension", out), Hint: hint}
		}
	}
	if f == "" {
		return "", &UsageError{Err: fmt.Errorf("no --%s", name), Hint: fmt.Sprintf("pass --%s %s", name, strings.Join(allowed, "|"))}
	}
	if low := strings.ToLower(f); low == "yml" || low == "gv" || low == "mmd" {
		f = formatOf("x." + low) // the extensions' names for their formats
	}
	if !slices.Contains(allowed, f) {
		return "", &UsageError{Err: fmt.Errorf("unknown --%s %q%s", name, f, types.DidYouMean(f, allowed)), Hint: "use one of: " + strings.Join(allowed, ", ")}
	}
	return f, nil
}

func (a *App) convert(ctx context.Context, path string, o convertOptions) error {
	to, err := outputFormat(o.to, "to", o.out, export.Formats)
	if err != nil {
		if strings.EqualFold(o.to, "svg") || (o.to == "" && strings.EqualFold(filepath.Ext(o.out), ".svg")) {
			// SVG is laid out by graph; convert's formats do not have it
			out := o.out
			if out == "" {
				out = "chart.svg"
			}
			return &UsageError{Err: fmt.Errorf("convert does not draw SVG"),
				Hint: "draw it with dtree graph: " + shellJoin([]string{"dtree", "graph", "--to", "svg", "-o", out, path})}
		}
		return err
	}
	c, broken, err := a.loadDrawn(path, o.chartFlags, nil)
	if err != nil {
		return err
	}
	markdown := to == "mermaid" && strings.EqualFold(filepath.Ext(o.out), ".md")
	if to == "mermaid" && !markdown && o.out != "" && o.out != "-" && len(c.Doc.Pages) > 1 {
		// A .mmd is one flowchart; a .md holds a ```mermaid block a page.
		return &UsageError{Err: fmt.Errorf("%s holds one Mermaid flowchart, and %s has %d pages", o.out, path, len(c.Doc.Pages)),
			Hint: "name the file .md: it is written as Markdown, a ```mermaid block a page, which dtree reads as the pages"}
	}
	var dropped []string
	err = a.output(o.out, func(w io.Writer) error {
		var err error
		switch write, chart := export.Writers[to]; {
		case to == "json":
			doc, carried := tagsAsMetadata(c)
			if dropped, err = export.JSON(w, doc); carried > 0 {
				dropped = append(dropped, fmt.Sprintf("JSON has no tags: the CLI and NoValidation tags of %s are custom data cli and validate instead, which mean the same",
					types.Plural(carried, "node")))
			}
		case markdown:
			dropped, err = export.MermaidMarkdown(w, c.Doc)
		case chart:
			dropped, err = write(w, c.Doc)
		default:
			dropped = export.PictureLosses(c.Doc, to)
			err = export.Picture(ctx, w, c.Doc, to, export.PictureOptions{Errors: c.Errors})
		}
		return err
	})
	if err != nil && broken != nil {
		return broken // a chart too broken to draw (no page): its errors say why
	}
	if err != nil {
		return exportError(err, to)
	}
	for _, d := range dropped {
		fmt.Fprintf(a.Err, "dtree: warning: %s\n", d)
	}
	if to == "csv" {
		if w := export.FormulaWarning(c.Doc); w != "" {
			fmt.Fprintf(a.Err, "dtree: warning: %s\n", w)
		}
	}
	return broken
}

// loadDrawn reads a chart for a command that shows it (inspect, graph,
// convert): warnings on stderr, and errors (with page: those on that
// page and the whole document's) too. A chart with errors is still shown,
// its errors marked, so a broken export can be seen: broken is the
// *ChartError (exit 3) the command returns once it has shown it. A chart
// with nothing to draw (nothingToDraw) is that error, returned as err.
func (a *App) loadDrawn(path string, f chartFlags, page func(*chart.Chart) (string, error)) (c *chart.Chart, broken, err error) {
	c, _, err = a.load(path, f)
	if err != nil {
		return nil, nil, err
	}
	sel := ""
	if page != nil {
		if sel, err = page(c); err != nil {
			return nil, nil, err
		}
	}
	broken = a.checkPage(c, path, pageByID(c, sel), false)
	if nothingToDraw(c) {
		// A picture or a conversion of it would be its title alone.
		return nil, nil, broken
	}
	return c, broken, nil
}

// nothingToDraw reports whether the chart is not a flowchart, or has no
// shape at all: its error says so, and no picture or conversion is
// written for it.
func nothingToDraw(c *chart.Chart) bool {
	for _, d := range c.Errors {
		if d.Class == "not_a_flowchart" || d.Class == "empty_chart" {
			return true
		}
	}
	return false
}

// output writes to stdout, or atomically to the file out.
func (a *App) output(out string, write func(io.Writer) error) error {
	if out == "" || out == "-" {
		return write(a.Out)
	}
	var werr error
	err := export.WriteFile(out, func(w io.Writer) error {
		werr = write(w)
		return werr
	})
	if err != nil && werr == nil {
		return &UsageError{Err: err, Hint: "pass -o a file in a directory that exists and that dtree can write"}
	}
	return err
}

// exportError gives a writer's refusal the exit code and hint it needs.
func exportError(err error, to string) error {
	var usage *UsageError
	if errors.As(err, &usage) {
		return err
	}
	var big *export.TooLargeError
	var col *export.ColumnError
	switch {
	case errors.As(err, &big):
		return &UsageError{Err: err, Hint: "draw one page with --page, or use --to dot and Graphviz (dot -Tsvg; sfdp for large graphs)"}
	case errors.As(err, &col):
		return &UsageError{Err: fmt.Errorf("cannot write CSV: %w", err), Hint: "rename the metadata key, or convert to yaml or json, which keep any key"}
	}
	return fmt.Errorf("write %s: %w", to, err)
}

// tagsAsMetadata is the chart's document with what its nodes' tags say
// written as custom data (nodeconf.TagsAsMetadata), for Lucid's API JSON,
// which has no tags: a node tagged codex gets cli: codex instead of
// losing its CLI. carried counts the nodes that changed.
func tagsAsMetadata(c *chart.Chart) (doc *types.Document, carried int) {
	out := *c.Doc
	out.Nodes = slices.Clone(c.Doc.Nodes)
	for i := range out.Nodes {
		n := &out.Nodes[i]
		meta, rest := nodeconf.TagsAsMetadata(n, c.Names)
		if len(meta) == 0 {
			continue
		}
		carried++
		merged := maps.Clone(n.Metadata)
		if merged == nil {
			merged = types.Metadata{}
		}
		maps.Copy(merged, meta)
		n.Metadata, n.Tags = merged, rest
	}
	return &out, carried
}
