package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

type settingsOptions struct {
	config string
	json   bool
}

func (a *App) newSettings() *cobra.Command {
	var o settingsOptions
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Show and edit dtree's settings",
		Long: `Settings shows the settings dtree runs with and edits the user file,
$XDG_CONFIG_HOME/dtree/config.yaml (~/.config/dtree/config.yaml when
XDG_CONFIG_HOME is unset).

A setting comes from, highest first: a flag of dtree run, a DTREE_*
environment variable (DTREE_DEFAULT_CLI), the project file (--config FILE,
or ./dtree.yaml), the user file, the built-in default. get and list show the
effective settings here; set and unset change only the user file. Custom
CLIs (clis:) are edited in the file. 'dtree docs settings' describes them all.

Docs: dtree docs settings`,
		Example: `  dtree settings list
  dtree settings set default_cli codex
  dtree settings get log_dir
  dtree settings unset default_cli`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				var names []string
				for _, c := range cmd.Commands() {
					names = append(names, c.Name())
				}
				return &UsageError{Err: fmt.Errorf("unknown command %q for %q%s", args[0], cmd.CommandPath(), types.DidYouMean(args[0], names)), Cmd: cmd.CommandPath()}
			}
			return cmd.Help()
		},
	}
	cmd.PersistentFlags().StringVar(&o.config, "config", "", "read this settings file instead of ./dtree.yaml (get, list)")
	get := &cobra.Command{
		Use:   "get KEY",
		Short: "Print the value of a setting that applies here",
		Example: `  dtree settings get default_cli
  dtree settings get clis`,
		Args:              nArgs(1, "a KEY"),
		ValidArgsFunction: a.completeSetting(false, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.settingsGet(args[0], o)
		},
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set a setting in the user file",
		Example: `  dtree settings set default_cli codex
  dtree settings set default_timeout 15m`,
		Args:              nArgs(2, "a KEY and a VALUE"),
		ValidArgsFunction: a.completeSetting(true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.settingsSet(args[0], args[1], o)
		},
	}
	// A negative number after KEY is a value, not a flag.
	set.Flags().SetInterspersed(false)
	unset := &cobra.Command{
		Use:               "unset KEY",
		Short:             "Remove a setting from the user file",
		Example:           `  dtree settings unset default_timeout`,
		Args:              nArgs(1, "a KEY"),
		ValidArgsFunction: a.completeSetting(false, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.settingsUnset(args[0])
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List every setting that applies here and where it comes from",
		Example: `  dtree settings list
  dtree settings list --json`,
		Args: nArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.settingsList(o)
		},
	}
	list.Flags().BoolVar(&o.json, "json", false, "print the settings as JSON")
	path := &cobra.Command{
		Use:     "path",
		Short:   "Print the path of the user file",
		Example: `  $EDITOR "$(dtree settings path)"`,
		Args:    nArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.userFile()
			if err == nil {
				_, err = fmt.Fprintln(a.Out, p)
			}
			return err
		},
	}
	cmd.AddCommand(get, set, unset, list, path)
	return cmd
}

// nArgs is the Args check of a command taking n arguments.
func nArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &UsageError{Err: fmt.Errorf("%s takes %s, got %s", cmd.CommandPath(), what, types.Plural(len(args), "argument")), Cmd: cmd.CommandPath()}
		}
		return nil
	}
}

func (a *App) settingsLoadOptions(o settingsOptions) settings.LoadOptions {
	// get and list show an untrusted ./dtree.yaml's CLIs; they run none.
	return settings.LoadOptions{ConfigFile: o.config, Getenv: a.Getenv, ListUntrusted: true}
}

// settingsFailure makes a bad setting a usage error (exit 2) carrying its
// hint.
func settingsFailure(err error) error {
	var serr *settings.Error
	if errors.As(err, &serr) {
		return &UsageError{Err: err, Hint: serr.Hint}
	}
	return err
}

// userFile is the user file's path, or an error when the environment does
// not say where home is.
// openUserFile opens the user settings file for editing.
func (a *App) openUserFile() (string, *settings.UserFile, error) {
	path, err := a.userFile()
	if err != nil {
		return "", nil, err
	}
	f, err := settings.OpenUserFile(path)
	if err != nil {
		return "", nil, settingsFailure(err)
	}
	return path, f, nil
}

func (a *App) userFile() (string, error) {
	p := settings.LoadOptions{Getenv: a.Getenv}.UserFile()
	if p == "" {
		return "", &UsageError{Err: errors.New("cannot tell where the user settings file is: neither XDG_CONFIG_HOME nor HOME is set"),
			Hint: "set HOME, or XDG_CONFIG_HOME to an absolute path"}
	}
	return p, nil
}

// checkKey returns key if it is a setting: clis only when clisOK.
func (a *App) checkKey(key string, clisOK bool) (string, error) {
	k := strings.ToLower(strings.TrimSpace(key))
	if k == settings.KeyCLIs && !clisOK {
		hint := "edit the user file; 'dtree docs settings' describes a CLI definition"
		if p, err := a.userFile(); err == nil {
			hint = fmt.Sprintf("edit %s; 'dtree docs settings' describes a CLI definition", p)
		}
		return "", &UsageError{Err: errors.New("clis holds custom CLI definitions, which are edited in the file"), Hint: hint}
	}
	if _, ok := settings.LookupKey(k); ok || k == settings.KeyCLIs {
		return k, nil
	}
	known := settings.KeyNames()
	if !clisOK {
		known = known[:len(known)-1]
	}
	return "", &UsageError{Err: fmt.Errorf("unknown setting %q%s", key, types.DidYouMean(k, known)), Hint: "the settings are: " + strings.Join(known, ", ")}
}

func (a *App) settingsGet(key string, o settingsOptions) error {
	key, err := a.checkKey(key, true)
	if err != nil {
		return err
	}
	// Only the setting asked for is checked: a bad value of another is
	// no reason not to say this one.
	lo := a.settingsLoadOptions(o)
	lo.Check = []string{key}
	s, err := settings.Load(lo)
	if err != nil {
		return settingsFailure(err)
	}
	a.warnIgnored(s)
	a.warnUntrusted(s)
	if key == settings.KeyCLIs {
		for _, name := range slices.Sorted(maps.Keys(s.CLIs)) {
			fmt.Fprintln(a.Out, name)
		}
		return nil
	}
	v, _ := s.Value(key)
	_, err = fmt.Fprintln(a.Out, v)
	return err
}

func (a *App) settingsSet(key, value string, o settingsOptions) error {
	key, err := a.checkKey(key, false)
	if err != nil {
		return err
	}
	path, f, err := a.openUserFile()
	if err != nil {
		return err
	}
	if err := f.Set(key, value); err != nil {
		return settingsFailure(err)
	}
	if err := f.Save(); err != nil {
		return err
	}
	// Say so when the new value is not the one that applies here.
	s, err := settings.Load(a.settingsLoadOptions(o))
	switch {
	case err != nil:
		fmt.Fprintf(a.Err, "dtree: warning: %s is set, but the settings do not load: %v\n", key, err)
	case s.Sources[key].Layer != settings.LayerUser:
		v, _ := s.Value(key)
		fmt.Fprintf(a.Err, "dtree: warning: %s is set in %s, but %s sets it to %q, which wins here\n", key, path, s.Sources[key], v)
	}
	return nil
}

func (a *App) settingsUnset(key string) error {
	key, err := a.checkKey(key, false)
	if err != nil {
		return err
	}
	path, f, err := a.openUserFile()
	if err != nil {
		return err
	}
	if !f.Unset(key) {
		fmt.Fprintf(a.Err, "dtree: %s was not set in %s\n", key, path)
		return nil
	}
	return f.Save()
}

// settingsReport is what `dtree settings list --json` prints.
type settingsReport struct {
	FormatVersion int           `json:"format_version"`
	UserFile      string        `json:"user_file"`
	ProjectFile   string        `json:"project_file"`
	Settings      []settingJSON `json:"settings"`
	CLIs          []cliJSON     `json:"clis"`
}

type settingJSON struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"` // default, user, project, env, flag
	Origin string `json:"origin"` // the file, variable or flag; "" for a default
	Line   int    `json:"line"`   // in the file; 0 when not from a file
	// Untrusted: an untrusted ./dtree.yaml sets it, and dtree run refuses
	// it (readme/settings.md#trust).
	Untrusted bool `json:"untrusted"`
}

type cliJSON struct {
	Name       string           `json:"name"`
	Source     string           `json:"source"`
	Origin     string           `json:"origin"`
	Line       int              `json:"line"`
	Untrusted  bool             `json:"untrusted"`
	Definition agent.Definition `json:"definition"`
}

func (a *App) settingsList(o settingsOptions) error {
	lo := a.settingsLoadOptions(o)
	s, err := settings.Load(lo)
	if err != nil {
		return settingsFailure(err)
	}
	a.warnUntrusted(s)
	r := settingsReport{FormatVersion: types.FormatVersion, UserFile: lo.UserFile(), ProjectFile: lo.ProjectFile(),
		Settings: []settingJSON{}, CLIs: []cliJSON{}}
	for _, k := range settings.Keys() {
		v, _ := s.Value(k.Name)
		src := s.Sources[k.Name]
		r.Settings = append(r.Settings, settingJSON{Key: k.Name, Value: v, Source: string(src.Layer), Origin: src.Name, Line: src.Line,
			Untrusted: s.Untrusted.Has(k.Name)})
	}
	for _, name := range slices.Sorted(maps.Keys(s.CLIs)) {
		src := s.Sources[settings.KeyCLIs+"."+name]
		r.CLIs = append(r.CLIs, cliJSON{Name: name, Source: string(src.Layer), Origin: src.Name, Line: src.Line,
			Untrusted: s.Untrusted.Has(settings.KeyCLIs + "." + name), Definition: noNulls(s.CLIs[name])})
	}
	if o.json {
		return writeJSON(a.Out, r)
	}
	tw := tabwriter.NewWriter(a.Out, 0, 0, 2, ' ', 0)
	for _, e := range r.Settings {
		v := e.Value
		if v == "" {
			v = `""`
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\n", e.Key, v, s.Sources[e.Key], untrustedMark(e.Untrusted))
	}
	for _, c := range r.CLIs {
		fmt.Fprintf(tw, "%s.%s\t%s\t%s%s\n", settings.KeyCLIs, c.Name, c.Definition.Binary, s.Sources[settings.KeyCLIs+"."+c.Name], untrustedMark(c.Untrusted))
	}
	return tw.Flush()
}

// untrustedMark follows the source of what dtree run refuses.
func untrustedMark(untrusted bool) string {
	if untrusted {
		return " (untrusted)"
	}
	return ""
}

// noNulls gives a definition empty lists rather than nulls in JSON.
func noNulls(d agent.Definition) agent.Definition {
	for _, l := range []*[]string{&d.Args, &d.FallbackArgs, &d.UnsetEnv, &d.KeyVars, &d.VersionArgs} {
		if *l == nil {
			*l = []string{}
		}
	}
	if d.Env == nil {
		d.Env = map[string]string{}
	}
	return d
}
