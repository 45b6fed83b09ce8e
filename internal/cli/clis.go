package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/nodeconf"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

type clisOptions struct {
	json   bool
	config string
	trust  bool
}

func (a *App) newCLIs() *cobra.Command {
	var o clisOptions
	cmd := &cobra.Command{
		Use:   "clis",
		Short: "List the agent CLIs dtree can run, installed or not",
		Long: `Clis lists every agent CLI dtree knows, built-in and defined under clis: in
the settings: its binary, whether it is on PATH and its version (when
--version answers within 10 seconds; all are asked at once), whether one of its API key variables is
set, how it takes the prompt, what usage it reports, and its model flag.
A CLI that an untrusted ./dtree.yaml defines is looked up, never run
('dtree trust', or --trust). 'dtree docs clis' describes each built-in.

Docs: dtree docs clis`,
		Example: `  dtree clis
  dtree clis --json | jq -r '.clis[] | select(.installed) | .name' `,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.clis(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the list as JSON")
	f.StringVar(&o.config, "config", "", "settings file to use instead of ./dtree.yaml")
	f.BoolVar(&o.trust, "trust", false, "trust ./dtree.yaml, and ask its CLIs for their version, as DTREE_TRUST=1 does")
	return cmd
}

// clisReport is what `dtree clis --json` prints.
type clisReport struct {
	FormatVersion int       `json:"format_version"`
	CLIs          []cliInfo `json:"clis"`
}

// cliInfo is one CLI in `dtree clis` (readme/clis.md#dtree-clis).
type cliInfo struct {
	Name         string         `json:"name"`
	Aliases      []string       `json:"aliases"`
	Builtin      bool           `json:"builtin"`
	Custom       bool           `json:"custom"`
	Default      bool           `json:"default"`
	Binary       string         `json:"binary"`
	AltBinaries  []string       `json:"alt_binaries"`
	Path         string         `json:"path"`
	Installed    bool           `json:"installed"`
	Version      string         `json:"version"`
	VersionError string         `json:"version_error"`
	KeyVars      []agent.KeyVar `json:"key_vars"`
	KeySet       bool           `json:"key_set"`
	Prompt       string         `json:"prompt"`
	LongPrompt   string         `json:"long_prompt"`
	Stdin        bool           `json:"stdin"`
	Output       string         `json:"output"`
	Usage        []string       `json:"usage"`
	ModelFlag    string         `json:"model_flag"`
	ModelValues  []string       `json:"model_values"`
	InstallHint  string         `json:"install_hint"`
	// InProcess says dtree itself answers for it (replay): it has no
	// binary, and is always there.
	InProcess bool `json:"in_process"`
	// Untrusted says an untrusted ./dtree.yaml defines it, so it was not
	// run (readme/settings.md#trust).
	Untrusted bool `json:"untrusted"`
	// slow says --version did not answer in time (the table shows "slow").
	slow bool
	// notAsked says a custom CLI without version_args was not run (the
	// table shows "not asked").
	notAsked bool
}

func (a *App) clis(ctx context.Context, o clisOptions) error {
	s, err := a.listSettings(settings.LoadOptions{ConfigFile: o.config, Check: []string{settings.KeyDefaultCLI}, Trust: o.trust})
	if err != nil {
		return err
	}
	timeout := agent.VersionTimeout
	if v := strings.TrimSpace(a.Getenv("DTREE_VERSION_TIMEOUT")); v != "" {
		d, err := nodeconf.ParseDuration(v)
		if err != nil || d <= 0 {
			return &UsageError{Err: fmt.Errorf("DTREE_VERSION_TIMEOUT: %q is not a duration such as 10s", v)}
		}
		timeout = d
	}
	entries := agent.NewRegistry(s.CLIs).Entries()
	infos := make([]cliInfo, len(entries))
	env := os.Environ()
	var wg sync.WaitGroup
	for i, e := range entries {
		t := agent.TraitsOf(e, a.Getenv)
		info := cliInfo{Name: e.Def.Name, Aliases: e.Aliases, Builtin: e.Builtin, Custom: e.Custom,
			Default: e.Def.Name == s.DefaultCLI, Binary: e.Def.Binary, KeyVars: t.KeyVars,
			Prompt: t.Prompt, LongPrompt: t.Long, Stdin: t.Prompt == "stdin" || t.Long == "stdin",
			Output: e.Def.Output, Usage: t.Usage, ModelFlag: t.ModelFlag, InstallHint: e.Def.InstallHint}
		if info.Aliases == nil {
			info.Aliases = []string{}
		}
		info.ModelValues = append([]string{}, e.Def.ModelValues...)
		info.AltBinaries = append([]string{}, e.Def.AltBinaries...)
		if info.Output == "" {
			info.Output = agent.OutputText
		}
		info.KeySet = slices.ContainsFunc(t.KeyVars, func(k agent.KeyVar) bool { return k.Set })
		if e.Def.InProcess {
			info.InProcess, info.Installed, info.Version = true, true, "dtree "+version()
			infos[i] = info
			continue
		}
		infos[i] = info
		if s.Untrusted.Has(settings.KeyCLIs + "." + e.Def.Name) {
			// Its program is the checkout's: looked up, never run.
			infos[i].Untrusted = true
			if path, name, err := agent.LookPath(e.Def); err == nil {
				infos[i].Path, infos[i].Installed, infos[i].Binary = path, true, name
			}
			infos[i].VersionError = fmt.Sprintf("not run: %s is not trusted ('dtree trust' trusts it)", s.Untrusted.File)
			continue
		}
		if e.Custom && len(e.Def.VersionArgs) == 0 {
			// Its program may take any argument for a prompt: it is looked
			// up, not run (readme/clis.md#dtree-clis).
			if path, name, err := agent.LookPath(e.Def); err == nil {
				infos[i].Path, infos[i].Installed, infos[i].Binary = path, true, name
				infos[i].VersionError, infos[i].notAsked = "not asked: give the definition version_args to have dtree clis run it for its version", true
			} else {
				infos[i].VersionError = "not installed"
			}
			continue
		}
		wg.Go(func() {
			p := agent.ProbeVersion(ctx, e.Def, env, timeout)
			infos[i].Path, infos[i].Installed = p.Path, p.Path != ""
			if p.Binary != "" {
				infos[i].Binary = p.Binary // the name it was found under
			}
			infos[i].Version, infos[i].VersionError, infos[i].slow = p.Version, p.VersionError, p.Slow
		})
	}
	wg.Wait()
	if o.json {
		return writeJSON(a.Out, clisReport{FormatVersion: types.FormatVersion, CLIs: infos})
	}
	tw := tabwriter.NewWriter(a.Out, 0, 0, 2, ' ', 0)
	w := a.masked(tw, false) // spelt in ASCII before the columns are aligned
	fmt.Fprintln(w, "CLI\tBINARY\tINSTALLED\tVERSION\tKEY\tPROMPT\tUSAGE\tMODEL FLAG")
	for _, c := range infos {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", nameCell(c), binaryCell(c), yesNo(c.Installed),
			versionCell(c), keyCell(c), promptCell(c), usageCell(c.Usage), modelCell(c.ModelFlag))
	}
	return tw.Flush()
}

func nameCell(c cliInfo) string {
	var notes []string
	if c.Default {
		notes = append(notes, "default")
	}
	if c.Custom {
		notes = append(notes, "custom")
	}
	if len(notes) == 0 {
		return c.Name
	}
	return c.Name + " (" + strings.Join(notes, ", ") + ")"
}

// binaryCell is the program found, or, when none was, the names it was
// looked for under ("cursor-agent|agent"); "-" for one dtree answers
// itself.
func binaryCell(c cliInfo) string {
	if c.InProcess {
		return "-"
	}
	if c.Installed {
		return c.Binary
	}
	return strings.Join(append([]string{c.Binary}, c.AltBinaries...), "|")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// versionCell is the version line, cut to fit a table: "-" when the CLI
// is not installed, "slow" when --version did not answer in time, "?"
// when it gave no version otherwise (--json says why).
func versionCell(c cliInfo) string {
	const width = 40
	v := c.Version
	switch r := []rune(v); {
	case len(r) == 0 && !c.Installed:
		return "-"
	case len(r) == 0 && c.slow:
		return "slow"
	case len(r) == 0 && c.Untrusted:
		return "untrusted"
	case len(r) == 0 && c.notAsked:
		return "not asked"
	case len(r) == 0:
		return "?"
	case len(r) > width:
		return string(r[:width-1]) + "…"
	}
	return v
}

// keyCell names the key variable that is set, else says none is.
func keyCell(c cliInfo) string {
	if len(c.KeyVars) == 0 {
		return "-"
	}
	for _, k := range c.KeyVars {
		if k.Set {
			return k.Name
		}
	}
	return "not set"
}

func promptCell(c cliInfo) string {
	switch {
	case c.Prompt == c.LongPrompt:
		return c.Prompt
	case c.LongPrompt == "":
		return c.Prompt + " (no long prompts)"
	}
	return c.Prompt + " (" + c.LongPrompt + " if long)"
}

func usageCell(u []string) string {
	var parts []string
	switch in, out := slices.Contains(u, "input_tokens"), slices.Contains(u, "output_tokens"); {
	case in && out:
		parts = append(parts, "tokens")
	case in:
		parts = append(parts, "input tokens")
	case out:
		parts = append(parts, "output tokens")
	}
	if slices.Contains(u, "cost_usd") {
		parts = append(parts, "cost")
	}
	if slices.Contains(u, "duration_ms") {
		parts = append(parts, "duration")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// modelCell is the model flag without its placeholder: "--model", "-m".
func modelCell(flag string) string {
	if flag == "" {
		return "-"
	}
	f := strings.TrimSpace(strings.NewReplacer("={model}", "", " {model}", "", "{model}", "").Replace(flag))
	if f == "" {
		return "(positional)"
	}
	return f
}
