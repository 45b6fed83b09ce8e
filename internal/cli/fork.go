package cli

import (
	"fmt"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/types"
)

// refuseForks stops a run of a page that has a fork before anything runs:
// lint, inspect, graph and convert know forks (readme/parallel.md), but
// this version's walker follows one path at a time, so it does not run
// branches side by side yet. This is the one place that says so; the
// walker that runs them removes it.
func refuseForks(c *chart.Chart, page types.Page) error {
	for i := range c.Doc.Nodes {
		n := &c.Doc.Nodes[i]
		if n.Page != page.ID || n.Fork == nil {
			continue
		}
		return &UsageError{
			Err: fmt.Errorf("%s: node %s is a fork (parallel: true) and this version of dtree does not run parallel branches yet; nothing was run",
				c.Doc.Source, n.Describe()),
			Hint: "lint, inspect, graph and convert know forks; to run the chart now, draw the branches one after another ('dtree docs parallel')",
		}
	}
	return nil
}
