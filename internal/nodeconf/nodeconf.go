// Package nodeconf resolves a node's run settings — CLI, validation and
// retry CLIs, retries, timeout, validation, visit limit — from its tags, its
// metadata and the defaults (the seed's NodeToProcessedNodeWithDefaults).
package nodeconf

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

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
)

// Normalize folds a tag or metadata key for matching.
func Normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r != '_' && r != '-' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Resolve returns the node with its settings resolved, and the lint errors
// its tags and metadata hold (unknown_cli, bad_metadata,
// conflicting_cli_tags). Precedence: metadata, then tags, then defaults.
func Resolve(n *types.Node, role string, d types.Defaults, names CLINames) (types.ProcessedNode, []types.Diagnostic) {
	p := types.ProcessedNode{Node: n, Settings: types.Settings{Role: role, Retries: d.Retries, Timeout: d.Timeout, MaxVisits: d.MaxVisits}}
	var diags []types.Diagnostic
	bad := func(class, hint, format string, args ...any) {
		diags = append(diags, types.Diagnostic{Class: class, ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
			Message: fmt.Sprintf("node %s: ", n.ID) + fmt.Sprintf(format, args...), Hint: hint})
	}

	noValidation := false
	tagCLI := ""
	for _, t := range n.Tags {
		if Normalize(t) == "novalidation" {
			noValidation = true
			continue
		}
		if c, ok := names.Canonical(t); ok {
			if tagCLI != "" && tagCLI != c {
				bad("conflicting_cli_tags", "keep one CLI tag on the node",
					"tags name two CLIs, %s and %s", tagCLI, c)
				continue
			}
			tagCLI = c
		}
	}
	p.CLI = d.CLI
	if tagCLI != "" {
		p.CLI = tagCLI
	}

	var meta, keys map[string]string // normalized key -> value, and as written
	if len(n.Metadata) > 0 {
		meta, keys = map[string]string{}, map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(n.Metadata)) {
			if _, dup := meta[Normalize(k)]; !dup {
				meta[Normalize(k)], keys[Normalize(k)] = n.Metadata[k], k
			}
		}
	}
	cli := func(key string, dst *string) {
		v, ok := meta[key]
		if !ok {
			return
		}
		c, known := names.Canonical(v)
		if !known {
			bad("unknown_cli", "use one of: "+strings.Join(names.List(), ", ")+", or define it under clis: in the settings",
				"%s names CLI %q, which dtree does not know", keys[key], v)
			return
		}
		*dst = c
	}
	cli(keyCLI, &p.CLI)
	p.ValidateCLI, p.RetryCLI = d.ValidateCLI, d.RetryCLI
	cli(keyValidateCLI, &p.ValidateCLI)
	cli(keyRetryCLI, &p.RetryCLI)
	if p.ValidateCLI == "" {
		p.ValidateCLI = p.CLI
	}
	if p.RetryCLI == "" {
		p.RetryCLI = p.CLI
	}

	if v, ok := meta[keyRetries]; ok {
		if r, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && r >= 0 {
			p.Retries = r
		} else {
			bad("bad_metadata", "set retries to a whole number, 0 or more (0 means one attempt and no retry)",
				"%s is %q, not a whole number of 0 or more", keys[keyRetries], v)
		}
	}
	if v, ok := meta[keyTimeout]; ok {
		if t, err := ParseDuration(v); err == nil {
			p.Timeout = t
		} else {
			bad("bad_metadata", "set timeout to seconds (600) or a Go duration (90s, 15m)",
				"%s: %v", keys[keyTimeout], err)
		}
	}
	if v, ok := meta[keyMaxVisits]; ok {
		if m, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && m >= 1 {
			p.MaxVisits = m
		} else {
			bad("bad_metadata", "set max_visits to a whole number, 1 or more",
				"%s is %q, not a whole number of 1 or more", keys[keyMaxVisits], v)
		}
	}
	p.ValidatePrompt = meta[keyValidatePrompt]
	p.TimeoutS = p.Timeout.Seconds()
	p.Validate = role == types.RoleProcess && !noValidation
	if role == types.RoleTerminator {
		p.CLI, p.ValidateCLI, p.RetryCLI = "", "", ""
	}
	return p, diags
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
