package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/readme"
	"github.com/dtree-dev/dtree/types"
)

func (a *App) newDocs() *cobra.Command {
	return &cobra.Command{
		Use:   "docs [TOPIC]",
		Short: "Print dtree's documentation, one topic at a time",
		Long: `Docs prints a topic of dtree's documentation, which is built into dtree: no
clone of the repository and no network is needed. Without TOPIC it lists
the topics. The topics are Markdown; a link to another topic (settings.md)
is read with dtree docs settings.`,
		Example: `  dtree docs
  dtree docs run | less
  dtree docs settings`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &UsageError{Err: fmt.Errorf("docs takes one TOPIC, got %d", len(args)), Cmd: cmd.CommandPath()}
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, t := range readme.Topics() {
				names = append(names, t.Name+"\t"+t.Title)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				tw := tabwriter.NewWriter(a.Out, 0, 0, 2, ' ', 0)
				for _, t := range readme.Topics() {
					fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Title)
				}
				return tw.Flush()
			}
			text, ok := readme.Read(args[0])
			if !ok {
				var names []string
				for _, t := range readme.Topics() {
					names = append(names, t.Name)
				}
				return &UsageError{Err: fmt.Errorf("no topic %q%s", args[0], types.DidYouMean(args[0], names)),
					Hint: "the topics are: " + strings.Join(names, ", ")}
			}
			_, err := fmt.Fprint(a.Out, text)
			return err
		},
	}
}
