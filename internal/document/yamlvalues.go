package document

import (
	"github.com/dtree-dev/dtree/internal/vars"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/yamlread"
	"github.com/dtree-dev/dtree/types"
)

// The value readers of the YAML importer: each checks that a YAML node is
// what its key takes, and reports malformed_yaml with the line when not.

// fields calls f for each key of mapping m, reporting keys that are not
// text, repeated or not among allowed.
func (y *yamlReader) fields(m *yaml.Node, allowed []string, what string, f func(key string, k, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], yamlread.Resolve(m.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			y.malformed(k.Line, "a key of %s is %s, not text", what, yamlread.Describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			y.malformed(k.Line, "%s has %s twice (first on line %d)", what, types.Quote(types.Clip(k.Value, 100)), first)
			continue
		}
		seen[k.Value] = k.Line
		if !slices.Contains(allowed, k.Value) {
			y.unknownKey(k, allowed, what)
			continue
		}
		f(k.Value, k, v)
	}
}

// unknownKey reports a key a mapping does not take, with the key meant
// when it is a typo or a case away from one.
func (y *yamlReader) unknownKey(k *yaml.Node, allowed []string, what string) {
	if k.Tag == "!!merge" {
		y.malformed(k.Line, "merge keys (<<) are not read; put what nodes share under defaults:")
		return
	}
	for _, a := range allowed {
		if strings.EqualFold(a, strings.TrimSpace(k.Value)) || typo(strings.ToLower(k.Value), a) {
			y.malformed(k.Line, "unknown key %s in %s; did you mean %s?", types.Quote(types.Clip(k.Value, 100)), what, a)
			return
		}
	}
	y.malformed(k.Line, "unknown key %s in %s, which takes %s", types.Quote(types.Clip(k.Value, 100)), what, strings.Join(allowed, ", "))
}

// scalar returns v's text; null is "". A list or mapping is reported.
func (y *yamlReader) scalar(v *yaml.Node, what string) (string, bool) {
	return y.text(v, what, "it takes text")
}

// text returns a scalar's text, null as ""; a list or mapping is
// reported as what it is and what the key takes.
func (y *yamlReader) text(v *yaml.Node, what, takes string) (string, bool) {
	if v.Kind != yaml.ScalarNode {
		y.malformed(v.Line, "%s is %s; %s", what, yamlread.Describe(v), takes)
		return "", false
	}
	if v.Tag == "!!null" {
		return "", true
	}
	return v.Value, true
}

// pairs calls f for each key of a free-form mapping (metadata, defaults,
// branches), reporting keys that are not text or are repeated.
func (y *yamlReader) pairs(m *yaml.Node, what string, f func(key string, k, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], yamlread.Resolve(m.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			y.malformed(k.Line, "a key of %s is %s, not text", what, yamlread.Describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			y.unknownKey(k, nil, what)
			continue
		}
		key := strings.TrimSpace(k.Value)
		if first, dup := seen[key]; dup {
			y.malformed(k.Line, "%s has %q twice (first on line %d)", what, key, first)
			continue
		}
		seen[key] = k.Line
		f(key, k, v)
	}
}

// metaValue reads a metadata value: text, a number or a boolean, as written.
func (y *yamlReader) metaValue(v *yaml.Node, what string) (string, bool) {
	t, ok := y.text(v, what, "a metadata value is text, a number or true/false")
	return strings.TrimSpace(t), ok
}

// tags reads a list of tags, or one string of tags; like a CSV Tags cell,
// each is split on commas and semicolons.
func (y *yamlReader) tags(v *yaml.Node) []string {
	out := []string{}
	for _, n := range yamlread.Items(v) {
		if s, ok := y.scalar(n, "a tag"); ok {
			out = append(out, splitTags(s)...)
		}
	}
	return out
}

// typo reports whether s is a key one or two edits (two for keys of five
// letters or more) away from key.
func typo(s, key string) bool {
	limit := 1
	if len(key) >= 5 {
		limit = 2
	}
	return types.EditDistance(s, key) <= limit
}

// readDefaults reads defaults:, metadata every node that runs gets unless
// it sets the key itself, and tags it gets besides its own.
func (y *yamlReader) readDefaults(v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		if v.Tag != "!!null" {
			y.malformed(v.Line, "defaults: is a mapping of metadata keys to values, not %s", yamlread.Describe(v))
		}
		return
	}
	y.pairs(v, "defaults:", func(key string, k, val *yaml.Node) {
		if key == "tags" {
			y.defTags = y.tags(val)
			return
		}
		if s, ok := y.metaValue(val, "defaults: "+key); ok && s != "" {
			y.defaults = append(y.defaults, yamlPair{key, s})
		}
	})
}

// metadata reads a node's metadata: mapping; empty values are dropped, as
// Lucid's importers drop empty custom data.
func (y *yamlReader) metadata(v *yaml.Node) types.Metadata {
	if v.Kind != yaml.MappingNode {
		if v.Tag != "!!null" {
			y.malformed(v.Line, "metadata: is a mapping of keys to values, not %s", yamlread.Describe(v))
		}
		return nil
	}
	var meta types.Metadata
	y.pairs(v, "metadata:", func(key string, k, val *yaml.Node) {
		if key == "" {
			y.malformed(k.Line, "a metadata key is empty")
			return
		}
		if val.Kind == yaml.SequenceNode && types.FoldName(key) == "paths" {
			val = y.pathList(val, key)
		}
		if s, ok := y.metaValue(val, "metadata "+key); ok && s != "" {
			if meta == nil {
				meta = types.Metadata{}
			}
			meta[key] = s
		}
	})
	return meta
}

// pathList reads paths given as a list of globs (paths: [src/, docs/])
// as the one value, a glob a line, that a CSV cell would hold
// (readme/workspace.md#scope).
func (y *yamlReader) pathList(v *yaml.Node, key string) *yaml.Node {
	var globs []string
	bad := false
	for _, item := range v.Content {
		s, ok := y.metaValue(item, "metadata "+key)
		bad = bad || !ok
		if ok && s != "" {
			globs = append(globs, s)
		}
	}
	if len(globs) == 0 && !bad {
		y.malformed(v.Line, "metadata %s: the list has no glob; list the files the step may change, or remove the key", key)
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.Join(globs, "\n"), Line: v.Line, Column: v.Column}
}

// applyDefaults gives a node the defaults it does not set itself: a key
// its metadata lacks (compared as nodeconf compares keys), a tag it lacks.
func (y *yamlReader) applyDefaults(n *types.Node) {
	for _, d := range y.defaults {
		set := false
		for k := range n.Metadata {
			if types.FoldName(k) == types.FoldName(d.key) {
				set = true
				break
			}
		}
		if !set {
			if n.Metadata == nil {
				n.Metadata = types.Metadata{}
			}
			n.Metadata[d.key] = d.value
		}
	}
	for _, t := range y.defTags {
		if !slices.ContainsFunc(n.Tags, func(s string) bool { return types.FoldName(s) == types.FoldName(t) }) {
			n.Tags = append(n.Tags, t)
		}
	}
}

// nexts reads next:, one id or a list of ids: ways out without a label.
func (y *yamlReader) nexts(v *yaml.Node) []yamlEdge {
	return y.ids(yamlread.Items(v), "next", "next: is empty; name the id of the node that follows, or leave next: out")
}

// ids reads the node ids items give under key, each a way out with no
// label; an empty one is malformed, with the message empty.
func (y *yamlReader) ids(items []*yaml.Node, key, empty string) []yamlEdge {
	var out []yamlEdge
	for _, n := range items {
		s, ok := y.scalar(n, key)
		if !ok {
			continue
		}
		if s = strings.TrimSpace(s); s == "" {
			y.malformed(n.Line, "%s", empty)
			continue
		}
		out = append(out, yamlEdge{to: s, line: n.Line})
	}
	return out
}

// parallel reads parallel:, the ids a fork's ways out lead to, run at
// once: a list ([tests, docs]), or a mapping that names each branch
// ({unit: tests, manual: docs}), as branches: does. A branch a mapping
// names by its first node's id ({docs: docs}) is an unlabelled line, the
// name an unlabelled branch has anyway: so a fork with some lines
// labelled is written and read back as it was.
func (y *yamlReader) parallel(v *yaml.Node) []yamlEdge {
	v = yamlread.Resolve(v)
	if v.Kind == yaml.MappingNode {
		out := y.branches(v)
		for i := range out {
			if out[i].label == out[i].to {
				out[i].label, out[i].labelled = "", false
			}
		}
		return out
	}
	if v.Kind != yaml.SequenceNode {
		y.malformed(v.Line, "parallel: is a list of the ids of the nodes that run at once ([tests, docs]), not %s", yamlread.Describe(v))
		return nil
	}
	return y.ids(yamlread.Items(v), "parallel", "parallel: names an empty id; name the id of each node that runs at once")
}

// branches reads branches:, a mapping of labels to ids, in file order.
func (y *yamlReader) branches(v *yaml.Node) []yamlEdge {
	if v.Kind != yaml.MappingNode {
		y.malformed(v.Line, "branches: is a mapping of labels to node ids (\"Yes\": build), not %s", yamlread.Describe(v))
		return nil
	}
	var out []yamlEdge
	y.pairs(v, "branches:", func(label string, k, val *yaml.Node) {
		to, ok := y.scalar(val, "branch "+strconv.Quote(label))
		if !ok {
			return
		}
		if to = strings.TrimSpace(to); to == "" {
			y.malformed(val.Line, "branch %q leads nowhere; name the id of the node it leads to", label)
			return
		}
		out = append(out, yamlEdge{to: to, label: label, labelled: true, line: k.Line})
	})
	return out
}

// readVars reads vars:, the chart's variables and their defaults
// (readme/context.md#variables): a mapping of names to text, numbers or
// true/false; an empty or null value is a variable with no default, which
// a run must be given.
func (y *yamlReader) readVars(v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		if v.Tag != "!!null" {
			y.malformed(v.Line, "vars: is a mapping of variable names to their defaults, not %s", yamlread.Describe(v))
		}
		return
	}
	y.pairs(v, "vars:", func(key string, k, val *yaml.Node) {
		if !vars.ValidName(key) {
			y.malformed(k.Line, "variable name %q is not a letter or _ followed by letters, digits and _", types.Excerpt(key, 60))
			return
		}
		s, ok := y.metaValue(val, "vars: "+key)
		if !ok {
			return
		}
		y.b.doc.Vars = append(y.b.doc.Vars, types.Var{Name: key, Default: s, HasDefault: s != ""})
	})
}
