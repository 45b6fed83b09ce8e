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

// mermaidBlock is the author's own Mermaid text of the chart's page page:
// the file's whole text (.mmd, .mermaid), or the body of its ```mermaid
// flowchart block (.md) that is the page (the reader makes block N page
// N), src being the file's bytes.
func mermaidBlock(src []byte, doc *types.Document, page string) ([]byte, error) {
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
	return src[blocks[k][0]:blocks[k][1]], nil
}

// mermaidIDs reads body, the text of doc's page page, with the Mermaid
// reader alone, and maps each of the page's node ids to the id the text
// names it by: the same but in a later block of a Markdown file that
// reuses an earlier block's id, which the reader prefixes with "N:" (the
// page). It is errNotTheText when the text holds another graph than the
// page (other nodes, kinds or lines, in the reader's order), as when the
// file changed since doc was read. Linear in the page.
func mermaidIDs(body []byte, doc *types.Document, page string) (map[string]string, error) {
	alone, err := document.Read("-", document.FormatMermaid, bytes.NewReader(body))
	if err != nil || len(alone.Pages) != 1 {
		return nil, fmt.Errorf("%w: its flowchart %s cannot be read again", errNotTheText, page)
	}
	changed := fmt.Errorf("%w: flowchart %s of %s holds another graph than the chart read", errNotTheText, page, doc.Source)
	ids := map[string]string{}
	k := 0
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		if n.Page != page {
			continue
		}
		if k == len(alone.Nodes) {
			return nil, changed
		}
		a := &alone.Nodes[k]
		k++
		if a.Kind != n.Kind || a.ID != n.ID && n.ID != page+":"+a.ID {
			return nil, changed
		}
		ids[n.ID] = a.ID
	}
	if k != len(alone.Nodes) {
		return nil, changed
	}
	k = 0
	for i := range doc.Edges {
		e := &doc.Edges[i]
		if e.Page != page {
			continue
		}
		if k == len(alone.Edges) {
			return nil, changed
		}
		a := &alone.Edges[k]
		k++
		if ids[e.From] != a.From || ids[e.To] != a.To || e.Label != a.Label {
			return nil, changed
		}
	}
	if k != len(alone.Edges) {
		return nil, changed
	}
	return ids, nil
}

// pageTextIDs maps each node id of doc's page to the id its Mermaid text
// names it by, as mermaidIDs does, without reading the text again: the
// reader prefixes "N:" (the page) to an id an earlier block used, and a
// Mermaid id has no ":" of its own. For graph --run, which read the text
// it draws on with the chart (graphOnto); linear in the chart.
func pageTextIDs(doc *types.Document, page string) map[string]string {
	ids := map[string]string{}
	for i := range doc.Nodes {
		if n := &doc.Nodes[i]; n.Page == page {
			ids[n.ID] = strings.TrimPrefix(n.ID, page+":")
		}
	}
	return ids
}

// textTrace is t with its node ids as the text names them (mermaidIDs);
// an id the page does not have stays as it is, for MermaidOnto to find
// missing.
func textTrace(t *export.Trace, ids map[string]string) *export.Trace {
	to := func(id string) string {
		if m, ok := ids[id]; ok {
			return m
		}
		return id
	}
	out := *t
	out.Visits = make(map[string]int, len(t.Visits))
	for id, v := range t.Visits {
		out.Visits[to(id)] += v
	}
	out.Stopped = to(t.Stopped)
	if t.Interrupted != nil {
		out.Interrupted = make(map[string]bool, len(t.Interrupted))
		for id := range t.Interrupted {
			out.Interrupted[to(id)] = true
		}
	}
	out.Steps = make([]export.Step, len(t.Steps))
	for i, st := range t.Steps {
		out.Steps[i] = export.Step{From: to(st.From), To: to(st.To), Label: st.Label, Branch: st.Branch}
	}
	return &out
}

// textLinks are the links of doc's page as Mermaid 11 numbers them for
// linkStyle (export.MermaidLink), their ends as the text names them: the
// page's edges in the reader's order, which is Mermaid's (each link of a
// chain, each pair of an "&"). An invisible link (~~~) is a link to
// Mermaid and no edge to the reader: a text that has one gets no
// linkStyle line (nil), as its places cannot be told without it.
func textLinks(body []byte, doc *types.Document, page string, ids map[string]string) []export.MermaidLink {
	if bytes.Contains(body, []byte("~~~")) {
		return nil
	}
	to := func(id string) string {
		if m, ok := ids[id]; ok {
			return m
		}
		return id
	}
	var links []export.MermaidLink
	for i := range doc.Edges {
		if e := &doc.Edges[i]; e.Page == page {
			links = append(links, export.MermaidLink{From: to(e.From), To: to(e.To), Label: e.Label})
		}
	}
	return links
}

// missingNodes is the first node, by id, that t entered or stopped at
// and that has does not know; "" when there is none.
func missingNodes(t *export.Trace, has func(string) bool) string {
	first := ""
	check := func(id string) {
		if id != "" && !has(id) && (first == "" || id < first) {
			first = id
		}
	}
	for id := range t.Visits {
		check(id)
	}
	check(t.Stopped)
	return first
}

// known says whether a node id is one the text names (mermaidIDs).
func known(ids map[string]string) func(string) bool {
	named := make(map[string]bool, len(ids))
	for _, m := range ids {
		named[m] = true
	}
	return func(id string) bool { return named[id] }
}

// graphOnto writes the run t onto the author's own Mermaid text of c's
// page, src being the chart file's bytes, the bytes c was read from
// (graph checks that the file did not change in between): graph --run
// --to mermaid of a Mermaid chart.
func (a *App) graphOnto(src []byte, c *chart.Chart, page string, t *export.Trace, o graphOptions) error {
	if page == "" && len(c.Doc.Pages) == 1 {
		page = c.Doc.Pages[0].ID
	}
	body, err := mermaidBlock(src, c.Doc, page)
	ids := pageTextIDs(c.Doc, page)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("cannot draw run %s onto %s: %w", o.run, c.Doc.Source, err),
			Hint: "pass the chart file itself, unchanged since it was read, or draw dtree's picture of the run with --to svg"}
	}
	// Checked before anything is written: a run of another page.
	has := known(ids)
	tt := textTrace(t, ids)
	if missing := missingNodes(tt, has); missing != "" {
		return &UsageError{Err: fmt.Errorf("run %s went through node %s, which page %s of %s does not have", o.run, missing, page, c.Doc.Source),
			Hint: "pass the chart the run ran, or --page with the page it ran (" + t.Page + ")"}
	}
	var onto export.Onto
	err = a.output(o.out, func(w io.Writer) error {
		var err error
		onto, err = export.MermaidOntoLinks(w, body, tt, has, textLinks(body, c.Doc, page, ids))
		return err
	})
	if err != nil {
		return err
	}
	for _, id := range onto.Unnamed {
		fmt.Fprintf(a.Err, "dtree: warning: node %s of run %s is not marked: a Mermaid class line cannot name its id\n", id, o.run)
	}
	if len(t.Steps) > 0 && textLinks(body, c.Doc, page, ids) == nil {
		fmt.Fprintf(a.Err, "dtree: warning: the links of run %s are not marked: the text has an invisible link (~~~), which Mermaid numbers with the others and dtree does not read\n", o.run)
	}
	return nil
}

// summaryPicture is the Mermaid of a run's job summary, and a note on it:
// the author's own text with the run on it for a Mermaid chart when it
// can be shown (ci.AuthorPicture), else dtree's drawing (ci.Picture),
// the note saying why.
func summaryPicture(ctx context.Context, doc *types.Document, t *export.Trace, mask func(string) string) (diagram, note string, err error) {
	if doc.Format == document.FormatMermaid && doc.Source != "-" && doc.Source != "" {
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
	body, err := mermaidBlock(src, doc, t.Page)
	if err != nil {
		return "", "The chart's Mermaid could not be matched to the run (its file changed while the run ran)" + instead
	}
	if len(body) > ci.MermaidLimit { // not read again: AuthorPicture says why
		return ci.AuthorPicture(body, t, nil, nil, mask)
	}
	ids, err := mermaidIDs(body, doc, t.Page)
	if err != nil {
		return "", "The chart's Mermaid could not be matched to the run (its file changed while the run ran)" + instead
	}
	return ci.AuthorPicture(body, textTrace(t, ids), known(ids), textLinks(body, doc, t.Page, ids), mask)
}
