package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is the module version when built by `go install …@version`, else
// the VCS revision when the build recorded one, else "devel".
func version() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		} else {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v = "devel-" + s.Value[:12]
				}
			}
		}
	}
	return fmt.Sprintf("%s (%s, %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func (a *App) newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print dtree's version",
		Example: `  dtree version
  dtree --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(a.Out, "dtree %s\n", version())
			return err
		},
	}
}
