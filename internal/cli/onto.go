package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/ci"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// A run of a Mermaid chart is drawn back onto the author's own text
// (readme/graph.md#a-mermaid-chart): by graph --run --to mermaid, and in
// the job summary under GitHub Actions.

// maxMermaidSource bounds the Markdown file the job summary reads again
// for the block of a run's chart: the diagram GitHub draws is at most
// ci.MermaidLimit characters, but the file around it may be a long
// README.
const maxMermaidSource = 8 << 20

// errNotTheText says that the text read again is not the chart the run
// walked: the file changed since, or its block cannot be told.
var errNotTheText = errors.New("not the chart's text")

// authorMermaid is the author's own Mermaid text of the chart's page
// page: the file's whole text (.mmd, .mermaid) or the body of its
// ```mermaid block (.md) that is the page, src being the file's bytes.
// digest, when not "", is the graph the text must hold
// (chart.Chart.Digest: a run's graph_digest): the text is read again by
// the Mermaid reader and refused, with errNotTheText, when it holds
// another graph, as it does when the file changed since it was loaded.
func authorMermaid(src []byte, doc *types.Document, page, digest string) ([]byte, error) {
	blocks := document.MermaidBlocks(src)
	k := -1
	for i, p := range doc.Pages {
		if p.ID == page {
			k = i
		}
	}
	if k < 0 || len(blocks) != len(doc.Pages) {
		return nil, fmt.Errorf("%w: %d Mermaid flowcharts in %s, %d pages in the chart", errNotTheText, len(blocks), doc.Source, len(doc.Pages))
	}
	body := src[blocks[k][0]:blocks[k][1]]
	if digest == "" {
		return body, nil
	}
	if len(body) > ci.MermaidLimit {
		return body, nil // too large to draw: the caller says so, without reading it
	}
	c, err := chart.Load("-", bytes.NewReader(body), chart.Options{Format: formatMermaid})
	if err != nil || len(c.Doc.Pages) != 1 || c.Digest(c.Doc.Pages[0].ID) != digest {
		return nil, fmt.Errorf("%w: flowchart %d of %s holds another graph than the run's", errNotTheText, k+1, doc.Source)
	}
	return body, nil
}

// pageIDs says whether a node id is one of the page's nodes.
func pageIDs(doc *types.Document, page string) func(string) bool {
	ids := map[string]bool{}
	for i := range doc.Nodes {
		if doc.Nodes[i].Page == page {
			ids[doc.Nodes[i].ID] = true
		}
	}
	return func(id string) bool { return ids[id] }
}

// graphOnto writes the run t onto the author's own Mermaid text of c's
// page, src being the chart file's bytes: graph --run --to mermaid of a
// Mermaid chart.
func (a *App) graphOnto(src []byte, c *chart.Chart, page string, t *export.Trace, o graphOptions) error {
	if page == "" && len(c.Doc.Pages) == 1 {
		page = c.Doc.Pages[0].ID
	}
	body, err := authorMermaid(src, c.Doc, page, c.Digest(page))
	if err != nil {
		return &UsageError{Err: fmt.Errorf("cannot draw run %s onto %s: %w", o.run, c.Doc.Source, err),
			Hint: "pass the chart file itself, unchanged since it was read, or draw dtree's picture of the run with --to svg"}
	}
	var onto export.Onto
	err = a.output(o.out, func(w io.Writer) error {
		var err error
		onto, err = export.MermaidOnto(w, body, t, pageIDs(c.Doc, page))
		if err == nil && len(onto.Missing) > 0 {
			err = &UsageError{Err: fmt.Errorf("run %s went through node %s, which page %s of %s does not have", o.run, onto.Missing[0], page, c.Doc.Source),
				Hint: "pass the chart the run ran, or --page with the page it ran (" + t.Page + ")"}
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, id := range onto.Unnamed {
		fmt.Fprintf(a.Err, "dtree: warning: node %s of run %s is not marked: a Mermaid class line cannot name its id\n", id, o.run)
	}
	return nil
}

// summaryPicture is the Mermaid of a run's job summary, and a note on it:
// the author's own text with the run on it for a Mermaid chart when it
// can be shown (ci.AuthorPicture), else dtree's drawing (ci.Picture),
// the note saying why.
func summaryPicture(ctx context.Context, doc *types.Document, t *export.Trace, mask func(string) string) (diagram, note string, err error) {
	if doc.Format == formatMermaid && doc.Source != "-" && doc.Source != "" {
		diagram, note = authorPicture(doc, t, mask)
		if diagram != "" {
			return diagram, note, nil
		}
	}
	d, n, err := ci.Picture(ctx, doc, t, mask)
	return d, strings.TrimSpace(note + " " + n), err
}

// authorPicture reads the chart file again, bounded, for ci.AuthorPicture.
func authorPicture(doc *types.Document, t *export.Trace, mask func(string) string) (diagram, note string) {
	const instead = "; this is dtree's drawing of the run instead."
	f, err := os.Open(doc.Source)
	if err != nil {
		return "", "The chart's Mermaid could not be read again" + instead
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxMermaidSource+1))
	switch {
	case err != nil:
		return "", "The chart's Mermaid could not be read again" + instead
	case len(src) > maxMermaidSource:
		return "", fmt.Sprintf("The chart's file is over %d MiB, too large to read for its Mermaid%s", maxMermaidSource>>20, instead)
	}
	body, err := authorMermaid(src, doc, t.Page, t.GraphDigest)
	if err != nil {
		return "", "The chart's Mermaid could not be matched to the run (its file changed while the run ran)" + instead
	}
	return ci.AuthorPicture(body, t, pageIDs(doc, t.Page), mask)
}

// formatMermaid is the Mermaid reader's format name (document's table).
const formatMermaid = "mermaid"
