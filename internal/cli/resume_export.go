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
	// reworded are the paired nodes whose text changed, in the old
	// outline's order: "node 13 (was 11): "Ship it" → "Ship it now"".
	reworded []string
}

// newExportMatch matches was to is and notes the texts that changed.
func newExportMatch(was, is chart.Outline) *exportMatch {
	ids, whole := chart.Match(was, is)
	m := &exportMatch{ids: ids, whole: whole, was: was, is: is}
	texts := make(map[string]string, len(is.Nodes))
	for _, n := range is.Nodes {
		texts[n.ID] = n.Text
	}
	for _, n := range was.Nodes {
		if id, ok := ids[n.ID]; ok && texts[id] != n.Text {
			m.reworded = append(m.reworded, fmt.Sprintf("node %s (was %s): %s → %s", id, n.ID,
				types.Quote(types.Excerpt(firstLineOf(n.Text), 60)), types.Quote(types.Excerpt(firstLineOf(texts[id]), 60))))
		}
	}
	return m
}

// renumbered says whether the chart is the one the run walked, exported
// again: the same graph under new ids, and at most half of its nodes
// reworded. More than that, it is another chart of the same shape (a
// line of steps from a Start is paired node for node with any other).
func (m *exportMatch) renumbered() bool {
	return m.whole && 2*len(m.reworded) <= len(m.was.Nodes)
}

// walkedOutline returns, once asked, the outline of the graph the run
// walked with its texts: the run's outline.json, or else, for a run of a
// dtree whose outline had no texts, the chart file it read if it is still
// the one it walked. Empty when neither has them.
func (a *App) walkedOutline(ctx context.Context, start runlog.RunStart, dir, path, format string,
	s *settings.Settings, reg *agent.Registry, vars map[string]string) func() chart.Outline {
	var (
		was  chart.Outline
		done bool
	)
	return func() chart.Outline {
		if done {
			return was
		}
		done = true
		if b, err := os.ReadFile(filepath.Join(dir, outlineFile)); err == nil {
			_ = json.Unmarshal(b, &was)
		}
		if !hasTexts(was) && start.Source != "" && start.Source != "-" && start.Source != "stdin" && start.Source != path {
			if old, err := a.loadRunChart(ctx, start.Source, format, s, reg, vars); err == nil && old.Digest(start.Page) == start.GraphDigest {
				was = old.Outline(start.Page)
			}
		}
		if !hasTexts(was) {
			was = chart.Outline{}
		}
		return was
	}
}

// matchExport matches the nodes of the graph the run walked to those of
// c's page when the page has none of it under the same ids. nil when the
// ids are the run's, or there is nothing to match by.
func matchExport(c *chart.Chart, page types.Page, start runlog.RunStart, walked func() chart.Outline) *exportMatch {
	if start.GraphDigest == "" || c.Digest(page.ID) == start.GraphDigest {
		return nil
	}
	was := walked()
	if len(was.Nodes) == 0 {
		return nil
	}
	return newExportMatch(was, c.Outline(page.ID))
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
	all := true
	err := c.Each(func(s *run.CarriedStep) bool {
		all = ok(s.Start.Node) && ok(s.End.Next)
		return all
	})
	return all && err == nil
}

// changes says what changed: in the graph, the old nodes named by their
// new ids where they have a match, else as "old ID"; or, for a graph of
// the same shape, the texts.
func (m *exportMatch) changes() []string {
	if !m.whole {
		changes := chart.Changes(m.was.Renamed(m.ids, "old "), m.is)
		if m.moved() { // renumbered too: say whose ids these are
			return append([]string{"its node ids are not the run's (exported again?); the run's nodes are named by the ids of the nodes they match:"}, changes...)
		}
		return changes
	}
	out := []string{fmt.Sprintf("the graph has the same shape, but %d of its %d nodes have another text:", len(m.reworded), len(m.was.Nodes))}
	return append(out, atMost(m.reworded, 10)...)
}

// moved says whether a node has another id than the run's.
func (m *exportMatch) moved() bool {
	for x, y := range m.ids {
		if x != y {
			return true
		}
	}
	return false
}

// notes are the lines dtree resume prints of a match it goes on with:
// that the ids changed, and each node whose text changed; none when the
// ids are the run's (a graph changed, gone on with --force).
func (m *exportMatch) notes(runID, path string) []string {
	if !m.moved() {
		return nil
	}
	lines := []string{fmt.Sprintf("dtree: the node ids of %s are not those run %s walked (exported again?): its nodes are matched to the run's by kind, text and place in the graph", path, runID)}
	for _, r := range atMost(m.reworded, 10) {
		lines = append(lines, "dtree: changed: "+r)
	}
	return lines
}

// atMost is the first n of lines, then how many more there are.
func atMost(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(slices.Clone(lines[:n]), fmt.Sprintf("and %d more", len(lines)-n))
}

// resumePage is the page of c the run goes on with: the one of the id
// it walked, when it is that graph or no other page is; else, its ids new
// (exported again), the only page, or the one page that is the run's
// renumbered; the first for a run that recorded none.
func resumePage(c *chart.Chart, runID, path string, start runlog.RunStart, walked func() chart.Outline) (types.Page, error) {
	id := start.Page
	var same []types.Page
	renumbered := func() []types.Page {
		if was := walked(); same == nil && len(was.Nodes) > 0 {
			same = []types.Page{}
			for _, p := range c.Doc.Pages {
				if newExportMatch(was, c.Outline(p.ID)).renumbered() {
					same = append(same, p)
				}
			}
		}
		return same
	}
	for _, p := range c.Doc.Pages {
		if p.ID != id {
			continue
		}
		// A page of the id but another graph: an export of more pages
		// can give the run's page id to another page.
		if start.GraphDigest != "" && c.Digest(p.ID) != start.GraphDigest && len(c.Doc.Pages) > 1 {
			if r := renumbered(); len(r) == 1 {
				return r[0], nil
			}
		}
		return p, nil
	}
	if len(c.Doc.Pages) == 1 || id == "" {
		return c.Doc.Pages[0], nil
	}
	if r := renumbered(); len(r) == 1 {
		return r[0], nil
	}
	var names []string
	for _, p := range c.Doc.Pages {
		names = append(names, fmt.Sprintf("%s %s", p.ID, types.Quote(p.Title)))
	}
	return types.Page{}, &UsageError{Err: fmt.Errorf("resume: run %s walked page %s, which %s does not have (its pages: %s)", runID, id, path, strings.Join(names, ", ")),
		Hint: "its ids changed since (exported again?), and no one page of it has the graph the run walked: start a new run with dtree run"}
}
