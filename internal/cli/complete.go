package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/checkpoints"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
	"github.com/dtree-dev/dtree/types"
)

// Shell completion (README.md, Install): chart files by
// their extension, and the values of the flags and arguments that name
// something dtree knows: CLIs, formats, a chart's pages and nodes, runs,
// settings. A completion never fails: what cannot be read completes
// nothing.

type completeFunc = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective)

// completeChart completes a chart file, the first argument only unless
// many says a command takes several.
func completeChart(many bool) completeFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 && !many {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return document.Extensions(), cobra.ShellCompDirectiveFilterFileExt
	}
}

// completeYAMLFile completes a YAML file: settings, variables, answers.
func completeYAMLFile(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeWords completes a fixed list.
func completeWords(words ...string) completeFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeSettings loads the settings for a completion, checking none of
// their values; nil when they cannot be read.
func (a *App) completeSettings(cmd *cobra.Command) *settings.Settings {
	config := ""
	if f := cmd.Flags().Lookup("config"); f != nil {
		config = f.Value.String()
	}
	// Names only: completion never runs a CLI, and says nothing of trust.
	s, err := settings.Load(settings.LoadOptions{ConfigFile: config, Getenv: a.Getenv, Check: []string{}, ListUntrusted: true})
	if err != nil {
		return nil
	}
	return s
}

// completeCLI completes a CLI's name: the built-ins and the custom CLIs.
func (a *App) completeCLI(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var defs map[string]agent.Definition
	if s := a.completeSettings(cmd); s != nil {
		defs = s.CLIs
	}
	return agent.NewRegistry(defs).Names().List(), cobra.ShellCompDirectiveNoFileComp
}

// completeChartPart completes from the chart the command's first argument
// names: its pages, or its nodes (of --page's page, else the first).
func (a *App) completeChartPart(nodes bool) completeFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 || args[0] == "-" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		format := ""
		if f := cmd.Flags().Lookup("format"); f != nil {
			if _, ok := document.ByName(f.Value.String()); ok {
				format = f.Value.String()
			}
		}
		var defs map[string]agent.Definition
		if s := a.completeSettings(cmd); s != nil {
			defs = s.CLIs // a node may name a custom CLI
		}
		c, err := chart.Load(args[0], nil, chart.Options{Format: format, Defaults: types.BuiltinDefaults(), Names: agent.NewRegistry(defs).Names()})
		if err != nil || c == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		if !nodes {
			for _, p := range c.Doc.Pages {
				// A draw.io page's id is a random string; its name is the
				// tab the user sees, and --page takes it when it picks
				// this page.
				if c.Doc.Format == document.FormatDrawio && p.Title != "" {
					if q, err := c.Page(p.Title); err == nil && q.ID == p.ID {
						out = append(out, cobra.CompletionWithDesc(p.Title, "page "+p.ID))
						continue
					}
				}
				out = append(out, cobra.CompletionWithDesc(p.ID, p.Title))
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		page := ""
		if len(c.Doc.Pages) > 0 {
			page = c.Doc.Pages[0].ID
			if f := cmd.Flags().Lookup("page"); f != nil && f.Value.String() != "" {
				if p, err := c.Page(f.Value.String()); err == nil {
					page = p.ID
				}
			}
		}
		for _, n := range c.Doc.Nodes {
			if n.Page == page {
				out = append(out, cobra.CompletionWithDesc(n.ID, types.Excerpt(n.Text, 50)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeRun completes a run: latest and the run ids under the log
// directory (--log-dir, else log_dir), newest first.
func (a *App) completeRun(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch {
	case cmd.Name() == "diff" && len(args) == 1:
		return a.completeRanNode(cmd, args, "")
	case cmd.Name() != "graph" && len(args) > 0:
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	dir := a.completeLogDir(cmd)
	entries, _ := os.ReadDir(dir)
	var ids []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			ids = append(ids, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	out := []cobra.Completion{cobra.CompletionWithDesc("latest", "the newest run in "+filepath.Clean(dir))}
	return append(out, ids...), cobra.ShellCompDirectiveNoFileComp
}

// completeLogDir is the log directory a completion reads: --log-dir,
// else log_dir.
func (a *App) completeLogDir(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("log-dir"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	if s := a.completeSettings(cmd); s != nil {
		return s.LogDir
	}
	return ".dtree/runs"
}

// completeRanNode completes a node of the run the first argument names:
// the nodes that ran, in the order they first did (dtree diff RUN NODE,
// dtree undo RUN --to NODE).
func (a *App) completeRanNode(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	dir, err := runlog.FindRun(a.completeLogDir(cmd), args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	rec, err := checkpoints.ReadDir(dir)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return rec.Nodes(), cobra.ShellCompDirectiveNoFileComp
}

// completeSetting completes `dtree settings get|unset KEY` and `dtree
// settings set KEY VALUE`: the keys, then the values a key takes when
// they are few (CLIs, true or false).
func (a *App) completeSetting(withValue, clis bool) completeFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch {
		case len(args) == 0:
			var out []cobra.Completion
			for _, k := range settings.Keys() {
				out = append(out, cobra.CompletionWithDesc(k.Name, k.Help))
			}
			if clis {
				out = append(out, cobra.CompletionWithDesc(settings.KeyCLIs, "the custom CLIs' names"))
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		case len(args) == 1 && withValue:
			k, ok := settings.LookupKey(args[0])
			if !ok {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			switch values := k.Values(); {
			case values != nil:
				return values, cobra.ShellCompDirectiveNoFileComp
			case k.IsCLI():
				names, dir := a.completeCLI(cmd, nil, "")
				return slices.DeleteFunc(names, func(n string) bool { return n == agent.ReplayName }), dir
			case k.IsPath():
				return nil, cobra.ShellCompDirectiveDefault
			}
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// registerCompletions gives the flags of cmd that name something their
// completions; a flag cmd does not have is passed over.
func (a *App) registerCompletions(cmd *cobra.Command) {
	flags := map[string]completeFunc{
		"cli":          a.completeCLI,
		"validate-cli": a.completeCLI,
		"retry-cli":    a.completeCLI,
		"format":       completeWords(document.Names()...),
		"chart-format": completeWords(document.Names()...),
		"context":      completeWords(types.ContextModes...),
		"page":         a.completeChartPart(false),
		"start":        a.completeChartPart(true),
		"fork":         a.completeChartPart(true),
		"run":          a.completeRun,
		"config":       completeYAMLFile,
		"vars":         completeYAMLFile,
		"answers":      completeYAMLFile,
		"chart":        completeChart(false),
		"worktree":     completeWords(settings.WorktreeOff, settings.WorktreeHead, settings.WorktreeDirty),
	}
	if cmd.Name() == "undo" {
		flags["to"] = a.completeRanNode
	} else if cmd.Name() == "graph" {
		flags["to"] = completeWords(graphFormats...)
	} else {
		flags["to"] = completeWords(export.Formats...)
	}
	for name, f := range flags {
		if cmd.Flags().Lookup(name) == nil {
			continue
		}
		if err := cmd.RegisterFlagCompletionFunc(name, f); err != nil {
			panic(fmt.Sprintf("completion of --%s of %s: %v", name, cmd.Name(), err))
		}
	}
}

// strictCompletion makes `dtree completion SHELL` refuse a shell it does
// not know, as an error (exit 2), where cobra's command prints its help
// and exits 0.
func (a *App) strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sh := range c.Commands() {
			shells = append(shells, sh.Name())
		}
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return &UsageError{Err: fmt.Errorf("no shell %q%s", args[0], types.DidYouMean(args[0], shells)),
				Hint: "dtree completes in " + strings.Join(shells, ", ") + ": dtree completion bash, for one"}
		}
		c.RunE = func(cmd *cobra.Command, args []string) error {
			return cmd.Help() // no shell: what the command is for
		}
		c.Example = `  source <(dtree completion bash)
  dtree completion zsh > "${fpath[1]}/_dtree"
  dtree completion fish | source`
	}
}
