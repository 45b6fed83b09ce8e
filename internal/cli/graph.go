package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

type graphOptions struct {
	chartFlags
	run    string
	to     string // the picture's format
	out    string
	page   string
	logDir string
}

func (a *App) newGraph() *cobra.Command {
	var o graphOptions
	cmd := &cobra.Command{
		Use:   "graph CHART [--run RUN_ID|latest] [--to mermaid|dot|svg|drawio] [-o FILE]",
		Short: "Draw a chart, and the path a run took through it",
		Long: `Graph draws CHART (a file, or - for stdin) as a Mermaid flowchart, a Graphviz
DOT graph or an SVG picture (laid out by dtree itself: no outside program),
on stdout or atomically to -o FILE. Without --to the format comes from
FILE's extension, else it is mermaid. --format is the chart's format, as
in every command (--format dot or svg, the old spelling, is taken as --to,
and so is --format mermaid for a chart not named .mmd, .mermaid or .md).

With --run, the run's nodes and the edges it took are marked, with visit
and retry counts and the node where it failed or stopped; RUN is a run id
under log_dir (--log-dir), latest, or a run directory. Only the run's page
is drawn unless --page says otherwise. A Mermaid chart's run in Mermaid
is the author's own text, unchanged, with classDef and class lines after
it that mark the run on its nodes. 'dtree docs graph' has examples.

--to drawio writes a draw.io file: a draw.io CHART itself, every page and
style kept, with the run's nodes and edges coloured and its counts in their
tooltips; any other chart as convert --to drawio writes it, the run drawn
on it the same way.

A chart with errors prints them on stderr and exits 3, as inspect does.

Docs: dtree docs graph`,
		Example: `  dtree graph chart.csv
  dtree graph --run latest chart.csv -o run.svg
  dtree graph --to dot chart.csv | dot -Tpng -o chart.png`,
		Args: oneChart,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.graph(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	o.register(f)
	// --chart-format was the chart's format while --format was the
	// picture's; both spellings still work.
	f.StringVar(&o.chartFlags.format, "chart-format", "", "the chart's format: the same as --format")
	_ = f.MarkHidden("chart-format")
	f.StringVar(&o.to, "to", "", "picture format: mermaid, dot, svg or drawio (default: from -o's extension, else mermaid)")
	f.StringVar(&o.run, "run", "", "mark the path of this run: a run id, latest, or a run directory")
	f.StringVarP(&o.out, "output", "o", "", "write to FILE instead of stdout")
	f.StringVar(&o.page, "page", "", "draw one page: its id, title or number (default: every page; with --run, the run's)")
	f.StringVar(&o.logDir, "log-dir", "", "where run logs are (log_dir, default .dtree/runs)")
	return cmd
}

// oldGraphSpelling says whether --format is the picture's format, as it
// was before --to: a picture format that is no chart format (dot, svg),
// or mermaid, which is both, given with no --to for a chart whose name
// says it is of another format (graph --format mermaid chart.csv).
func oldGraphSpelling(path string, o graphOptions) bool {
	name := strings.ToLower(o.chartFlags.format)
	if !slices.Contains(export.PictureFormats, name) {
		return false
	}
	if _, chartFormat := document.ByName(name); !chartFormat {
		return true
	}
	f, ok := document.ByExtension(path)
	return o.to == "" && ok && f.Name != name
}

func (a *App) graph(ctx context.Context, path string, o graphOptions) error {
	if oldGraphSpelling(path, o) {
		// The old spelling: --format was the picture's format.
		if o.to != "" {
			return &UsageError{Err: fmt.Errorf("--format %s and --to %s: the picture's format is --to", o.chartFlags.format, o.to),
				Hint: "--format is the chart's format (" + document.NameList() + "), as in every command"}
		}
		o.to, o.chartFlags.format = o.chartFlags.format, ""
	}
	format := o.to
	if format == "" && o.out == "" {
		format = "mermaid"
	}
	format, err := outputFormat(format, "to", o.out, graphFormats)
	if err != nil {
		return err
	}
	if format == "mermaid" && strings.EqualFold(filepath.Ext(o.out), ".md") {
		return &UsageError{Err: fmt.Errorf("graph draws Mermaid into a .mmd, not into %s", o.out),
			Hint: "name the file .mmd; 'dtree convert -o FILE.md' writes the chart as Markdown"}
	}
	var trace *export.Trace
	if o.run != "" {
		dir, err := a.runDir(o.run, o.logDir, o.config)
		if err != nil {
			return err
		}
		if trace, err = export.ReadTrace(dir); err != nil {
			return &UsageError{Err: fmt.Errorf("read run %s: %w", o.run, err), Hint: "pass a run id from log_dir, or latest"}
		}
	}
	var stdin bytes.Buffer // a chart on stdin, kept for graphOnto
	if path == "-" && trace != nil && format == "mermaid" {
		in := a.In
		a.In = io.TeeReader(in, &stdin)
		defer func() { a.In = in }()
	}
	var before os.FileInfo // the chart file as it was loaded, for graphOnto
	if path != "-" && trace != nil && format == "mermaid" {
		before, _ = os.Stat(path)
	}
	c, broken, err := a.loadDrawn(path, o.chartFlags, func(c *chart.Chart) (string, error) {
		return graphPage(c, o.page, trace)
	})
	if err != nil {
		return err
	}
	page, _ := graphPage(c, o.page, trace)
	if trace != nil {
		if err := checkTrace(c, trace, o.run); err != nil {
			return err
		}
	}
	if format == "drawio" {
		if err := a.graphDrawio(ctx, path, c, o.out, trace); err != nil {
			return err
		}
		return broken
	}
	if trace != nil && format == "mermaid" && c.Doc.Format == document.FormatMermaid && broken == nil {
		// The author's own text, the run on it (readme/graph.md#a-mermaid-chart).
		src := stdin.Bytes()
		if path != "-" {
			if src, err = readUnchanged(path, before); err != nil {
				return &UsageError{Err: fmt.Errorf("cannot draw run %s onto %s: %w", o.run, path, err),
					Hint: "pass the chart file itself, unchanged while dtree reads it"}
			}
		}
		return a.graphOnto(src, c, page, trace, o)
	}
	err = a.output(o.out, func(w io.Writer) error {
		return export.Picture(ctx, w, c.Doc, format, export.PictureOptions{Page: page, Trace: trace, Errors: c.Errors})
	})
	if err != nil && broken != nil {
		return broken // a chart too broken to draw (no page): its errors say why
	}
	if err != nil {
		return exportError(err, format)
	}
	return broken
}

// readUnchanged reads the file at path, the text of the chart loaded from
// it when it was as before says (its size and time): the text is not read
// as a chart again (graphOnto).
func readUnchanged(path string, before os.FileInfo) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if before == nil || st.Size() != before.Size() || !st.ModTime().Equal(before.ModTime()) {
		return nil, fmt.Errorf("%w: %s changed while it was read", errNotTheText, path)
	}
	src, err := io.ReadAll(f)
	if err == nil && int64(len(src)) != before.Size() {
		err = fmt.Errorf("%w: %s changed while it was read", errNotTheText, path)
	}
	return src, err
}

// graphPage is the id of the page to draw: --page's, else the run's, else
// "" for every page.
func graphPage(c *chart.Chart, sel string, t *export.Trace) (string, error) {
	if len(c.Doc.Pages) == 0 {
		return "", nil
	}
	if sel != "" {
		p, err := choosePage(c, sel)
		if err != nil {
			return "", err
		}
		return p.ID, nil
	}
	if t != nil && pageByID(c, t.Page) != nil {
		return t.Page, nil
	}
	return "", nil
}

// pageByID returns the chart's page with this id, or nil.
func pageByID(c *chart.Chart, id string) *types.Page {
	for i := range c.Doc.Pages {
		if c.Doc.Pages[i].ID == id && id != "" {
			return &c.Doc.Pages[i]
		}
	}
	return nil
}

// runDir finds a run's log directory: a path (it has a slash), or a run id
// or latest under log_dir.
func (a *App) runDir(run, logDir, config string) (string, error) {
	dir := run
	byName := !strings.ContainsRune(run, '/') && !strings.ContainsRune(run, filepath.Separator)
	if byName {
		if logDir == "" {
			s, err := a.settings(config, append([]string{settings.KeyLogDir}, settings.ChartKeys...))
			if err != nil {
				return "", err
			}
			logDir = s.LogDir
		}
		dir = filepath.Join(logDir, run)
	}
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	if err != nil {
		hint := "pass --run latest, a run id, or a run directory"
		switch {
		case errors.Is(err, fs.ErrNotExist) && byName && !hasRuns(logDir):
			// "pass --run latest" would send the user to what is missing
			err = fmt.Errorf("no run %q: there are no runs yet in %s", run, logDir)
			hint = "run the chart first (dtree run CHART), then draw it with --run latest; pass --log-dir if its runs are elsewhere"
		case errors.Is(err, fs.ErrNotExist):
			err = fmt.Errorf("no run %q: %s does not exist", run, dir)
			hint = "pass --run latest, or a run id from " + filepath.Dir(dir) + " (set --log-dir if the runs are elsewhere)"
		}
		return "", &UsageError{Err: err, Hint: hint}
	}
	return dir, nil
}

// hasRuns reports whether the log directory holds any run: a directory
// with an events.jsonl.
func hasRuns(logDir string) bool {
	entries, err := os.ReadDir(logDir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(logDir, e.Name(), "events.jsonl")); err == nil {
			return true
		}
	}
	return false
}

// checkTrace refuses a run of another chart. A run records the digest
// of the graph it walked (run_start's graph_digest: the page's node ids
// and kinds and its lines, not its texts), so a chart edited only in its
// texts or settings still takes the run, while another chart whose ids
// overlap does not: Lucid CSV ids are 1, 2, 3… in every chart. A log
// older than the digest has none; then every node the run entered must be
// in the chart, and every step it took a line of it.
func checkTrace(c *chart.Chart, t *export.Trace, run string) error {
	hint := "pass the chart the run ran"
	if t.Source != "" {
		hint += " (" + t.Source + ")"
	}
	hint += ", with the nodes and lines it had then; its texts and settings may have changed"
	if t.GraphDigest != "" {
		if pageByID(c, t.Page) == nil {
			return &UsageError{Err: fmt.Errorf("run %s ran page %s, which %s does not have", run, t.Page, c.Doc.Source), Hint: hint}
		}
		if d := c.Digest(t.Page); d != t.GraphDigest {
			return &UsageError{Err: fmt.Errorf("run %s walked another graph than page %s of %s: nodes, their kinds or lines differ (graph_digest %.12s, the chart's %.12s)",
				run, t.Page, c.Doc.Source, t.GraphDigest, d), Hint: hint}
		}
		return nil
	}
	ids := make([]string, 0, len(t.Visits))
	for id := range t.Visits {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, ok := c.Graph.Index(id); !ok {
			return &UsageError{Err: fmt.Errorf("run %s went through node %s, which %s does not have", run, id, c.Doc.Source), Hint: hint}
		}
	}
	lines := make(map[[2]string]bool, len(c.Doc.Edges))
	for _, e := range c.Doc.Edges {
		lines[[2]string{e.From, e.To}] = true
	}
	for _, s := range t.Steps {
		if !lines[[2]string{s.From, s.To}] {
			return &UsageError{Err: fmt.Errorf("run %s went from node %s to node %s, but %s has no line between them", run, s.From, s.To, c.Doc.Source), Hint: hint}
		}
	}
	return nil
}

// graphFormats are graph --to's values: the pictures, and drawio, the
// chart's own draw.io file (or its conversion) with the run drawn on it.
var graphFormats = append(slices.Clone(export.PictureFormats), "drawio")

// graphDrawio writes graph --to drawio: a draw.io source file with the
// run drawn on it, every other byte kept; another chart converted to
// draw.io first (export.Drawio), then drawn on the same way.
func (a *App) graphDrawio(ctx context.Context, path string, c *chart.Chart, out string, trace *export.Trace) error {
	var src string
	doc := c.Doc
	if c.Doc.Format == document.FormatDrawio {
		if path == "-" {
			return &UsageError{Err: errors.New("--to drawio draws the run onto the draw.io file itself, which standard input is not"),
				Hint: "pass the .drawio file's path instead of -"}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s again to draw on it: %w", path, err)
		}
		src = string(data)
	} else {
		var b strings.Builder
		dropped, err := export.Drawio(&b, c.Doc)
		if err != nil {
			return exportError(err, "drawio")
		}
		for _, d := range dropped {
			fmt.Fprintf(a.Err, "dtree: warning: %s\n", d)
		}
		src = b.String()
		// The cells as the conversion named them: an edge may have a
		// fresh id (export.Drawio), found here by its ends.
		if read, err := document.FromDrawio(strings.NewReader(src)); err == nil {
			doc = read
		}
	}
	var notes []string
	err := a.output(out, func(w io.Writer) error {
		var err error
		notes, err = export.DrawioRun(ctx, w, src, doc, export.PictureOptions{Trace: trace})
		return err
	})
	for _, n := range notes { // the author's colours, changed since a run was drawn
		fmt.Fprintf(a.Err, "dtree: warning: %s: %s\n", path, n)
	}
	if err != nil {
		var usage *UsageError
		if errors.As(err, &usage) {
			return err
		}
		return &UsageError{Err: fmt.Errorf("draw the run on %s: %w", path, err),
			Hint: "open the file in draw.io (diagrams.net) and save it again, then draw the run on it"}
	}
	return nil
}
