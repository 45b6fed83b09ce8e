package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/settings"
)

type trustOptions struct {
	show   bool
	revoke bool
}

func (a *App) newTrust() *cobra.Command {
	var o trustOptions
	cmd := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Trust a project's dtree.yaml to say what runs",
		Long: `Trust trusts FILE (default ./dtree.yaml) as it is now. A ./dtree.yaml comes
with a checkout, so until you trust it, it may not define CLIs (clis:),
name a junit file, or loosen your budget: dtree run refuses it, and no
command runs its CLIs. Its other settings apply either way.

Trust is kept in $XDG_CONFIG_HOME/dtree/trusted/, by the file's path and
the sha256 of its content: a file that changes is untrusted again. --trust
or DTREE_TRUST=1 trusts ./dtree.yaml for one command, for a CI job running
its own repository; a file given to --config is trusted, as you named it.

Docs: dtree docs settings`,
		Example: `  dtree trust                  # ./dtree.yaml, after reading it
  dtree trust --show           # the trusted files, and which changed since
  dtree trust --revoke`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 || o.show && len(args) > 0 {
				return &UsageError{Err: fmt.Errorf("%s takes at most one FILE, and none with --show", cmd.CommandPath()), Cmd: cmd.CommandPath()}
			}
			return nil
		},
		ValidArgsFunction: completeYAMLFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			file := "dtree.yaml"
			if len(args) == 1 {
				file = args[0]
			}
			return a.trust(file, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.show, "show", false, "list the trusted files: trusted, changed since, or gone")
	f.BoolVar(&o.revoke, "revoke", false, "trust the file no more")
	cmd.MarkFlagsMutuallyExclusive("show", "revoke")
	return cmd
}

func (a *App) trust(file string, o trustOptions) error {
	dir := settings.LoadOptions{Getenv: a.Getenv}.TrustDir()
	if dir == "" {
		return &UsageError{Err: errors.New("cannot tell where to keep trust: neither XDG_CONFIG_HOME nor HOME is set"),
			Hint: "set HOME, or XDG_CONFIG_HOME to an absolute path"}
	}
	if o.show {
		return a.trustShow(dir)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	if o.revoke {
		ok, err := settings.Revoke(dir, abs)
		switch {
		case err != nil:
			return err
		case ok:
			fmt.Fprintf(a.Err, "dtree: %s is no longer trusted\n", abs)
		default:
			fmt.Fprintf(a.Err, "dtree: %s was not trusted\n", abs)
		}
		return nil
	}
	// Only a settings file that reads: trusting a chart or a typo is a
	// mistake to say now, not at the next run.
	data, err := settings.ReadSettingsFile(abs)
	if err != nil {
		return settingsFailure(err)
	}
	if err := settings.Trust(dir, abs, data); err != nil {
		return fmt.Errorf("trust %s: %w", abs, err)
	}
	fmt.Fprintf(a.Err, "dtree: trusted %s as it is now (sha256 %.12s…); a change to it untrusts it\n", abs, settings.Digest(data))
	return nil
}

// trustShow lists the trusted files and whether each still is.
func (a *App) trustShow(dir string) error {
	recs, err := settings.TrustedFiles(dir)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(a.Out, 0, 0, 2, ' ', 0)
	for _, r := range recs {
		state := "trusted"
		data, err := os.ReadFile(r.Path)
		switch {
		case err != nil:
			state = "gone"
		case settings.Digest(data) != r.SHA256:
			state = "changed"
		}
		fmt.Fprintf(tw, "%s\t%s\n", state, r.Path)
	}
	return tw.Flush()
}
