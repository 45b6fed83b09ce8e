package cli

import (
	"bytes"
	"io"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/render"
)

type inspectOptions struct {
	chartFlags
	page string
	json bool
}

func (a *App) newInspect() *cobra.Command {
	var o inspectOptions
	cmd := &cobra.Command{
		Use:   "inspect CHART",
		Short: "Show the flow a chart imports to",
		Long: `Inspect imports CHART (a file, or - for stdin) and shows its flow from the
start of each page: every node with how it will run, branch labels, and a
merge or loop as a reference back to a node already shown.

With --json it prints the normalized document instead ('dtree docs inspect'
describes it). A chart with errors prints them on stderr and exits 3.

Docs: dtree docs inspect`,
		Example: `  dtree inspect chart.csv
  dtree inspect --page Main chart.json
  dtree inspect --json chart.yaml | jq '.pages[0].nodes[] | .id' `,
		Args: oneChart,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.inspect(args[0], o)
		},
	}
	o.register(cmd.Flags())
	cmd.Flags().StringVar(&o.page, "page", "", "show one page: its id, title or number (1 is the first)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the normalized document as JSON")
	return cmd
}

func (a *App) inspect(path string, o inspectOptions) error {
	c, defaults, err := a.load(path, o.chartFlags)
	if err != nil {
		return err
	}
	// With --page, only that page's findings (and the document's) count:
	// a broken page does not hide a good one.
	page, err := choosePage(c, o.page)
	if err != nil {
		return err
	}
	broken := a.checkPage(c, path, page, false)
	if o.json {
		if broken != nil {
			return broken // the errors as JSON (readme/exit-codes.md#json)
		}
		return writeJSON(a.Out, c.Normalized(page))
	}
	// A chart with errors is shown all the same, its errors marked.
	// Drawn whole, then written in one write: the masking and, under
	// GitHub Actions, the inert markers (readme/ci.md#github-actions) see
	// whole lines, where Flow's own buffer would cut one every 64 KiB.
	var out bytes.Buffer
	if err := render.Flow(&out, c, page, defaults); err != nil {
		return err
	}
	if _, err := io.WriteString(a.maskedOut(false), visible(out.String())); err != nil { // no terminal control from the chart
		return err
	}
	return broken
}
