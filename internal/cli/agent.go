package cli

import (
	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/replay"
)

// newAgent holds the agents built into dtree, which dtree runs as child
// processes of itself like any agent CLI. Users do not call them.
func (a *App) newAgent() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "agent",
		Short:  "dtree's built-in agents, run by dtree itself",
		Hidden: true,
		Args:   cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "replay",
		Short: "Answer one agent call from the run's answers file (see --answers)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if code := replay.Serve(a.Getenv, a.In, a.Out, a.Err); code != 0 {
				return exitStatus(code)
			}
			return nil
		},
	})
	return cmd
}
