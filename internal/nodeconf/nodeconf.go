// Package nodeconf resolves a node's run settings — CLI, validation and
// retry CLIs, retries, timeout, validation, visit limit, model — from its
// tags, its metadata and the defaults (the seed's
// NodeToProcessedNodeWithDefaults).
package nodeconf

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/pathglob"
	"github.com/dtree-dev/dtree/types"
)

// CLINames resolves a CLI name to its codename; ok is false for a name dtree
// does not know.
type CLINames interface {
	Canonical(name string) (codename string, ok bool)
	List() []string
}

// Metadata keys, normalized: lower case without '_', '-' or spaces, so that
// validate_cli, validateCli and Validate-CLI are one key.
const (
	keyCLI            = "cli"
	keyValidateCLI    = "validatecli"
	keyRetryCLI       = "retrycli"
	keyRetries        = "retries"
	keyTimeout        = "timeout"
	keyValidatePrompt = "validateprompt"
	keyMaxVisits      = "maxvisits"
	keyValidate       = "validate"
	keyModel          = "model"
	keyKeepRunning    = "keeprunning"
	keyMaxTurns       = "maxturns"
	keyCommand        = "command"
	keyContext        = "context"
	keyPaths          = "paths"
	keyRollback       = "rollback"
	keyApproval       = "approval"
)

// Keys are the metadata keys Resolve reads, normalized (Normalize): a
// reader that wants to warn of a key dtree does not act on asks here. A new
// key above goes in this list too.
func Keys() []string {
	return []string{keyCLI, keyValidateCLI, keyRetryCLI, keyRetries, keyTimeout, keyValidatePrompt, keyMaxVisits,
		keyValidate, keyModel, keyKeepRunning, keyMaxTurns, keyCommand, keyContext, keyPaths, keyRollback, keyApproval}
}

// Normalize folds a tag or metadata key for matching (types.FoldName).
func Normalize(s string) string { return types.FoldName(s) }

// Findings are what Resolve found wrong in a node's tags and metadata.
type Findings struct {
	Errors   []types.Diagnostic // unknown_cli, bad_metadata, conflicting_cli_tags
	Warnings []types.Diagnostic // unknown_cli_tag
}

// Resolve returns the node with its settings resolved, and what is wrong
// with its tags and metadata. Precedence: metadata, then tags, then the
// defaults; the validation and retry CLIs default to the node's own CLI.
func Resolve(n *types.Node, role string, d types.Defaults, names CLINames) (types.ProcessedNode, Findings) {
	p := types.ProcessedNode{Node: n, Settings: &types.Settings{Role: role, Retries: d.Retries, Timeout: d.Timeout, MaxVisits: d.MaxVisits, MaxTurns: d.MaxTurns}}
	var f Findings
	if role == types.RoleTerminator {
		// Never sent to an agent: its tags and metadata have nothing to set.
		p.TimeoutS = p.Timeout.Seconds()
		return p, f
	}
	diag := func(list *[]types.Diagnostic, class, hint, format string, args ...any) {
		line := n.Line
		if k, ok := firstArg(args); ok && n.KeyLines[k] > 0 && strings.HasPrefix(format, "%s") {
			// A message about a key's value, which has a line of its
			// own (a Mermaid %% dtree: line): that line.
			line = n.KeyLines[k]
		}
		*list = append(*list, types.Diagnostic{Class: class, ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: line,
			Message: fmt.Sprintf("node %s: ", n.ID) + fmt.Sprintf(format, args...), Hint: hint})
	}
	bad := func(class, hint, format string, args ...any) { diag(&f.Errors, class, hint, format, args...) }
	knownHint := func() string { return "use one of: " + strings.Join(names.List(), ", ") }

	var meta, keys map[string]string // normalized key -> value, and as written
	if len(n.Metadata) > 0 {
		meta, keys = map[string]string{}, map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(n.Metadata)) {
			if _, dup := meta[Normalize(k)]; !dup {
				meta[Normalize(k)], keys[Normalize(k)] = n.Metadata[k], k
			}
		}
	}

	validate := true
	var tagCLIs []string
	for _, t := range n.Tags {
		norm := Normalize(t)
		m := readTag(t, names)
		switch {
		case m.noValidation:
			validate = false
			continue
		case m.cli != "":
			tagCLIs = appendNew(tagCLIs, m.cli)
			continue
		case m.cliTag && m.named == "":
			bad("unknown_cli", knownHint(), "tag %q names no CLI", t)
			continue
		case m.cliTag:
			bad("unknown_cli", knownHint(), "tag %q names CLI %q, which dtree does not know", t, m.named)
			continue
		}
		if near := nearCLI(norm, names); near != "" {
			diag(&f.Warnings, "unknown_cli_tag", fmt.Sprintf("if the tag is meant to pick a CLI, spell it %s; %s", near, knownHint()),
				"tag %q is not a CLI dtree knows, so it does not change the CLI; did you mean %s?", t, near)
		}
	}
	if list := types.SplitCLIs(d.CLI); len(list) > 0 {
		p.CLI, p.Fallback = list[0], list[1:]
	}
	if len(tagCLIs) > 0 {
		p.CLI, p.Fallback = tagCLIs[0], nil
	}
	if _, set := meta[keyCLI]; len(tagCLIs) > 1 && !set {
		bad("conflicting_cli_tags", "keep one CLI tag on the node, or set its cli metadata",
			"tags name %d CLIs (%s), so which one runs it is unclear", len(tagCLIs), strings.Join(tagCLIs, ", "))
	}

	cli := func(key string, dst *string) {
		v, ok := meta[key]
		if !ok {
			return
		}
		c, known := names.Canonical(v)
		if !known {
			bad("unknown_cli", knownHint(), "%s names CLI %q, which dtree does not know", keys[key], v)
			return
		}
		*dst = c
	}
	if v, ok := meta[keyCLI]; ok {
		// A list is the node's CLI and its fallbacks.
		var list []string
		for _, name := range types.SplitCLIs(v) {
			c, known := names.Canonical(name)
			if !known {
				hint := knownHint()
				if strings.Contains(name, "\n") {
					// cli given on two lines (Mermaid's %% dtree: lines, a
					// YAML block) is one value of two lines.
					hint = "cli is one line: its CLI, then any fallbacks after commas (claude, codex); it was given on several lines, which make one value"
				}
				bad("unknown_cli", hint, "%s names CLI %q, which dtree does not know", keys[keyCLI], name)
				continue
			}
			list = appendNew(list, c)
		}
		if len(list) > 0 {
			p.CLI, p.Fallback = list[0], list[1:]
		} else if len(types.SplitCLIs(v)) == 0 {
			bad("unknown_cli", knownHint(), "%s is empty, and names no CLI", keys[keyCLI])
		}
	}
	if len(p.Fallback) == 0 {
		p.Fallback = nil
	}
	p.ValidateCLI, p.RetryCLI = d.ValidateCLI, d.RetryCLI
	cli(keyValidateCLI, &p.ValidateCLI)
	cli(keyRetryCLI, &p.RetryCLI)
	if p.ValidateCLI == "" {
		p.ValidateCLI = p.CLI
	}
	if p.RetryCLI == "" {
		p.RetryCLI = p.CLI
	}

	// wholeNumber sets *dst from metadata key when it holds a whole number
	// of at least least.
	wholeNumber := func(key string, least int, dst *int, hint string) {
		v, ok := meta[key]
		if !ok {
			return
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case err == nil && n >= least:
			*dst = n
			return
		case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(strings.TrimSpace(v), "-"):
			bad("bad_metadata", hint, "%s is %s, a whole number too large to count to", keys[key], types.Quote(types.Excerpt(v, 40)))
			return
		}
		bad("bad_metadata", hint, "%s is %q, not a whole number of %d or more", keys[key], v, least)
	}
	wholeNumber(keyRetries, 0, &p.Retries, "set retries to a whole number, 0 or more (0 means one attempt and no retry)")
	wholeNumber(keyMaxVisits, 1, &p.MaxVisits, "set max_visits to a whole number, 1 or more")
	wholeNumber(keyMaxTurns, 0, &p.MaxTurns, "set max_turns to a whole number of model turns, 1 or more (0 means no bound)")
	if v, ok := meta[keyTimeout]; ok {
		if t, err := ParseDuration(v); err == nil {
			p.Timeout = t
		} else {
			bad("bad_metadata", "set timeout to seconds (600) or a Go duration (90s, 15m)",
				"%s: %v", keys[keyTimeout], err)
		}
	}
	if v, ok := meta[keyValidate]; ok {
		if b, ok := types.ParseBool(v); ok {
			validate = b // metadata over tags, as everywhere
		} else {
			bad("bad_metadata", "set validate to true or false",
				"%s is %q, not true or false", keys[keyValidate], v)
		}
	}
	if v, ok := meta[keyKeepRunning]; ok {
		if b, ok := types.ParseBool(v); ok {
			p.KeepRunning = b
		} else {
			bad("bad_metadata", "set keep_running to true or false",
				"%s is %q, not true or false", keys[keyKeepRunning], v)
		}
	}
	p.ValidatePrompt = meta[keyValidatePrompt]
	p.Model = strings.TrimSpace(meta[keyModel]) // empty: not set
	p.TimeoutS = p.Timeout.Seconds()
	p.Validate = role == types.RoleProcess && validate
	if v, ok := meta[keyCommand]; ok {
		command(&p, v, meta, keys, bad)
	}
	if v, ok := meta[keyApproval]; ok || types.DrawnStep(n.Shape) == types.StepApproval {
		approval(&p, v, ok, keys, bad)
	}
	if v, ok := meta[keyContext]; ok {
		if m, ok := types.ContextMode(v); ok {
			p.Context = m
		} else {
			bad("bad_metadata", "set context to none, previous or path",
				"%s is %q, not none, previous or path", keys[keyContext], v)
		}
	}
	if v, ok := meta[keyPaths]; ok {
		set, errs := pathglob.Parse(v)
		for _, err := range errs {
			bad("bad_metadata", "write globs as in a .gitignore, relative to the workdir, separated by commas or newlines: src/, *.go, !src/gen/ ('dtree docs workspace')",
				"%s: %v", keys[keyPaths], err)
		}
		if len(errs) == 0 {
			for _, pt := range set.Patterns {
				p.Paths = append(p.Paths, pt.Raw)
			}
		}
	}
	if v, ok := meta[keyRollback]; ok {
		switch r := strings.ToLower(strings.TrimSpace(v)); r {
		case types.RollbackAttempt, types.RollbackKeep:
			p.Rollback = r
		default:
			bad("bad_metadata", "set rollback to attempt (undo a failed attempt's change before its retry) or keep",
				"%s is %q, not attempt or keep", keys[keyRollback], v)
		}
	}
	return p, f
}

// firstArg is a message's first argument when it is a string: the
// metadata key as written, in every message about a key's value.
func firstArg(args []any) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	s, ok := args[0].(string)
	return s, ok
}

// Step is the step kind of a resolved node (types.Step): its role's,
// unless a key of its metadata marked another kind as Resolve read it
// (Settings.Marked: command: marks a command step). chart.Check stores
// it on the node.
func Step(p types.ProcessedNode) types.Step {
	if p.Role != types.RoleTerminator && p.Marked != "" {
		return p.Marked
	}
	return types.RoleStep(p.Role)
}

// command makes the node a command step (readme/context.md#command-steps):
// /bin/sh runs it, not an agent, so it has no CLI, no validation and, unless
// its metadata says otherwise, no retries.
func command(p *types.ProcessedNode, v string, meta, keys map[string]string, bad func(class, hint, format string, args ...any)) {
	v = strings.TrimSpace(v)
	if v == "" {
		bad("bad_metadata", "give the command to run, or remove the command key to have an agent do the step",
			"%s is empty", keys[keyCommand])
		return
	}
	p.Command, p.Marked = v, types.StepCommand
	p.CLI, p.ValidateCLI, p.RetryCLI = types.CommandCLI, types.CommandCLI, types.CommandCLI
	p.Fallback = nil
	p.Validate = false
	if _, set := meta[keyRetries]; !set {
		p.Retries = 0
	}
}

// approval makes the node an approval gate (readme/charts.md#approval-gates)
// when its approval key is true, or it has none and is drawn as a Manual
// operation: a person answers it, so it has no CLI, no validation and no
// retries. approval: false keeps a Manual operation an agent's step.
func approval(p *types.ProcessedNode, v string, set bool, keys map[string]string, bad func(class, hint, format string, args ...any)) {
	if set {
		b, ok := types.ParseBool(v)
		if !ok {
			bad("bad_metadata", "set approval to true (a person approves or rejects the step) or false",
				"%s is %q, not true or false", keys[keyApproval], v)
			return
		}
		if !b {
			return
		}
	}
	p.Marked = types.StepApproval
	p.CLI, p.ValidateCLI, p.RetryCLI, p.Fallback = "", "", "", nil
	p.Validate, p.Retries = false, 0
}

// cutCLITag splits a "cli:NAME" or "cli=NAME" tag (spaces allowed around
// the separator).
// tagMeaning is what one tag says: nothing, no validation, or a CLI.
type tagMeaning struct {
	noValidation bool
	cli          string // the CLI it names, canonical, when known
	cliTag       bool   // written cli:NAME or cli=NAME
	named        string // the NAME of cli:NAME, known or not
}

// readTag reads a tag: NoValidation; "cli:NAME" or "cli=NAME", which
// names a CLI outright; a bare tag that is a CLI's name.
func readTag(t string, names CLINames) tagMeaning {
	if Normalize(t) == "novalidation" {
		return tagMeaning{noValidation: true}
	}
	if name, ok := cutCLITag(t); ok {
		m := tagMeaning{cliTag: true, named: name}
		if c, known := names.Canonical(name); known && name != "" {
			m.cli = c
		}
		return m
	}
	if c, ok := names.Canonical(t); ok {
		return tagMeaning{cli: c}
	}
	return tagMeaning{}
}

// TagsAsMetadata says in custom data what a node's tags say, for a
// format that has no tags (Lucid's API JSON): cli for a CLI tag,
// validate false for NoValidation, unless the node's metadata sets that
// key itself (metadata wins over tags, as in Resolve). rest are the tags
// that say nothing dtree reads.
func TagsAsMetadata(n *types.Node, names CLINames) (meta map[string]string, rest []string) {
	var clis []string
	noValidation := false
	for _, t := range n.Tags {
		switch m := readTag(t, names); {
		case m.noValidation:
			noValidation = true
		case m.cli != "":
			clis = appendNew(clis, m.cli)
		default:
			rest = append(rest, t)
		}
	}
	has := func(key string) bool {
		for k := range n.Metadata {
			if Normalize(k) == key {
				return true
			}
		}
		return false
	}
	meta = map[string]string{}
	if len(clis) > 0 && !has(keyCLI) {
		meta["cli"] = strings.Join(clis, ",")
	}
	if noValidation && !has(keyValidate) {
		meta["validate"] = "false"
	}
	return meta, rest
}

func cutCLITag(tag string) (string, bool) {
	t := strings.TrimSpace(tag)
	if len(t) < 3 || !strings.EqualFold(t[:3], "cli") {
		return "", false
	}
	rest := strings.TrimLeft(t[3:], " ")
	if rest == "" || (rest[0] != ':' && rest[0] != '=') {
		return "", false
	}
	return strings.TrimSpace(rest[1:]), true
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// nearCLI returns the known CLI a tag is one typo away from (an edit
// distance of 1, or 2 for names of six letters or more, with the same first
// letter), or "". Short tags are left alone: "code" and "todo" are words
// people tag with, not misspelt codex and qodo.
func nearCLI(tag string, names CLINames) string {
	if len(tag) < 5 {
		return ""
	}
	for _, name := range names.List() {
		if name == "" || tag[0] != name[0] {
			continue
		}
		limit := 1
		if len(name) >= 6 {
			limit = 2
		}
		if d := types.EditDistance(tag, name); d > 0 && d <= limit {
			return name
		}
	}
	return ""
}

// ParseDuration reads a duration as dtree takes it everywhere: a Go duration
// (90s, 15m, 1h30m) or plain seconds (600, 1.5). It must be positive.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f > 0 && f < 1e9 {
			d = time.Duration(f * float64(time.Second))
		}
	} else if g, err := time.ParseDuration(s); err == nil {
		d = g
	} else {
		return 0, fmt.Errorf("%q is not a duration: give seconds (600) or a Go duration (90s, 15m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", s)
	}
	return d, nil
}
