package agent

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dtree-dev/dtree/types"
)

// builtinNames are the built-in CLIs' codenames (readme/clis.md#names) and
// their aliases, keyed by their folded form (types.FoldName).
var builtinNames = foldNames(builtins, builtinAliases)

func foldNames(defs map[string]Definition, aliases map[string][]string) map[string]string {
	m := map[string]string{}
	for name := range defs {
		m[types.FoldName(name)] = name
		for _, a := range aliases[name] {
			m[types.FoldName(a)] = name
		}
	}
	return m
}

// Names resolves CLI names, matched case-insensitively, to their codename.
// Custom names (from settings) are added with With.
type Names struct {
	custom []string
}

// With returns Names that also know the given custom CLI names.
func (n Names) With(custom ...string) Names {
	return Names{custom: append(slices.Clone(n.custom), custom...)}
}

// Canonical returns the codename for name, and whether it is known. A
// custom name is its own codename, in lower case.
func (n Names) Canonical(name string) (string, bool) {
	f := types.FoldName(name)
	for _, c := range n.custom {
		if types.FoldName(c) == f {
			return strings.ToLower(strings.TrimSpace(c)), true
		}
	}
	c, ok := builtinNames[f]
	return c, ok
}

// List returns every known codename, sorted.
func (n Names) List() []string {
	var out []string
	for _, c := range builtinNames {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	for _, c := range n.custom {
		if l := strings.ToLower(c); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// lazyRegexp compiles expr the first time it is used: compiled when the
// package starts, its patterns took 0.5 ms of every dtree command's start
// (readme/performance.md), most of them for failures a run seldom meets.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
