package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

// exportMatch is the chart a run is resumed with, set against the one it
// walked when their ids differ (a Lucid CSV exported again renumbers every
// row): the old nodes matched to the new (chart.Match), and what it says.
type exportMatch struct {
	ids     map[string]string // old id → new id
	whole   bool              // the same graph, only renumbered
	was, is chart.Outline
}

// matchExport matches the nodes of the run's chart to those of c when c's
// page has none of the graph the run walked under the same ids: the run's
// outline.json (with its texts), or else the chart file the run read, if
// it is still the one the run walked. nil when the ids are the run's, or
// there is nothing to match by.
func (a *App) matchExport(ctx context.Context, c *chart.Chart, page types.Page, start runlog.RunStart, dir, path, format string,
	s *settings.Settings, reg *agent.Registry, vars map[string]string) *exportMatch {
	if start.GraphDigest == "" || c.Digest(page.ID) == start.GraphDigest {
		return nil
	}
	var was chart.Outline
	if b, err := os.ReadFile(filepath.Join(dir, outlineFile)); err == nil {
		_ = json.Unmarshal(b, &was)
	}
	if !hasTexts(was) && start.Source != "" && start.Source != "-" && start.Source != "stdin" && start.Source != path {
		// A run of a dtree whose outline had no texts: the chart file it
		// read, when it is still the one it walked.
		if old, err := a.loadRunChart(ctx, start.Source, format, s, reg, vars); err == nil && old.Digest(start.Page) == start.GraphDigest {
			was = old.Outline(start.Page)
		}
	}
	if !hasTexts(was) {
		return nil
	}
	is := c.Outline(page.ID)
	ids, whole := chart.Match(was, is)
	return &exportMatch{ids: ids, whole: whole, was: was, is: is}
}

func hasTexts(o chart.Outline) bool {
	return slices.ContainsFunc(o.Nodes, func(n chart.OutlineNode) bool { return n.Text != "" })
}

// covers says whether every node of the carried steps, and where they
// led, has a match.
func (m *exportMatch) covers(c *run.Carried) bool {
	ok := func(id string) bool { _, found := m.ids[id]; return id == "" || found }
	if !ok(c.Start.Start) || !ok(c.At) {
		return false
	}
	for _, s := range c.Steps {
		if !ok(s.Start.Node) || !ok(s.End.Next) {
			return false
		}
	}
	return true
}

// changes says what changed in the graph, the old nodes named by their
// new ids where they have a match, else as "old ID".
func (m *exportMatch) changes() []string {
	return chart.Changes(m.was.Renamed(m.ids, "old "), m.is)
}

// notes are the lines dtree resume prints of a match it goes on with:
// that the ids changed, and each node whose text changed.
func (m *exportMatch) notes(runID, path string) []string {
	lines := []string{fmt.Sprintf("dtree: the node ids of %s are not those run %s walked (exported again?): its nodes are matched to the run's by kind, text and place in the graph", path, runID)}
	texts := make(map[string]string, len(m.is.Nodes))
	for _, n := range m.is.Nodes {
		texts[n.ID] = n.Text
	}
	const most = 10
	more := 0
	for _, n := range m.was.Nodes {
		id, ok := m.ids[n.ID]
		if !ok || texts[id] == n.Text {
			continue
		}
		if len(lines) > most {
			more++
			continue
		}
		lines = append(lines, fmt.Sprintf("dtree: node %s (was %s) changed: %s → %s", id, n.ID,
			types.Quote(types.Excerpt(firstLineOf(n.Text), 60)), types.Quote(types.Excerpt(firstLineOf(texts[id]), 60))))
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("dtree: and %d more changed", more))
	}
	return lines
}

// resumePage is the page of c the run goes on with: the one of the id
// it walked, else, in a chart of one page (exported again, its page's id
// new), that page; the first for a run that recorded none.
func resumePage(c *chart.Chart, runID, path, id string) (types.Page, error) {
	for _, p := range c.Doc.Pages {
		if p.ID == id {
			return p, nil
		}
	}
	if len(c.Doc.Pages) == 1 || id == "" {
		return c.Doc.Pages[0], nil
	}
	var names []string
	for _, p := range c.Doc.Pages {
		names = append(names, fmt.Sprintf("%s %s", p.ID, types.Quote(p.Title)))
	}
	return types.Page{}, &UsageError{Err: fmt.Errorf("resume: run %s walked page %s, which %s does not have (its pages: %s)", runID, id, path, strings.Join(names, ", ")),
		Hint: "its ids changed since (exported again?): start a new run of the page with dtree run --page"}
}
