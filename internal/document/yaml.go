package document

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/yamlread"
	"github.com/dtree-dev/dtree/types"
)

// The keys a YAML chart may use, per mapping (readme/yaml-charts.md and
// schema/chart.schema.json, which a test holds to these lists).
var (
	YAMLChartKeys = []string{"title", "context", "vars", "defaults", "nodes", "pages"}
	YAMLPageKeys  = []string{"id", "title", "nodes"}
	YAMLNodeKeys  = []string{"id", "kind", "shape", "text", "command", "tags", "metadata", "next", "branches", "parallel", "join"}
	// YAMLKinds are the values of a node's kind:, in the order the manual
	// lists them.
	YAMLKinds = []string{"start", "end", "process", "decision", "subprocess", "approval", "other"}
)

// yamlShapes are the shape names a kind stands for when a node names none:
// the Lucid names, so that a converted chart reads like an exported one.
var yamlShapes = map[string]string{
	"start": "Terminator", "end": "Terminator", "process": "Process",
	"decision": "Decision", "subprocess": "Predefined process", "approval": "Manual operation", "other": "",
}

// yamlHints replace the Lucid hints of the import rules ("double-click the
// line …") and of lint ("change the shape to a Process") with what to
// change in a YAML file. Every class whose hint speaks of shapes, lines or
// drawing has an entry; Localize applies them.
var yamlHints = map[string]string{
	// import rules
	"dangling_line":          "point next: or branches: at the id of a node on the same page",
	"unlabeled_branch":       "a node with two or more ways out is a decision: list them under branches: with one label each (branches: {\"Yes\": a, \"No\": b}); or, if they should all run at once, write parallel: [a, b] in place of next:",
	"duplicate_branch_label": "give each of the node's branches a different label",
	"duplicate_line":         "delete one of the two",
	"ambiguous_root":         "mark exactly one node of the page kind: start, or connect or delete the other nodes that no next: or branches: leads to",
	"no_root":                "add a node with kind: start and next: the first step",
	"empty_chart":            "list the steps under nodes: ('dtree docs yaml-charts')",
	// lint
	"branching_terminator":   "give the start one next: to a node with kind: decision, and list the branches there",
	"end_with_outgoing_line": "remove next: (or branches:) from the end, or set kind: process if the run should go on",
	"decision_one_branch":    "add a branch under branches: for each other answer, or set kind: process",
	"unreachable_node":       "lead to them with next: or branches: from a node the run reaches, or delete them",
	"loop_without_exit":      "make a node in the loop a decision, with a branch under branches: that leaves the loop",
	// forks (readme/parallel.md)
	"fork_without_join": "make every branch's last next: lead to one node (the join), and go on from there to the end",
	"fork_shared_step":  "each node belongs to one branch: put the shared node after the join (in the join's next:), or give each branch a node of its own; or move join: to the node where the branches meet",
	"fork_loop":         "keep a loop inside one branch, or loop back from a node after the join",
	"parallel_decision": "remove parallel (a decision picks one way, under branches:), or list the ways out under parallel: and drop kind: decision",
	"fork_one_line":     "list two or more ids under parallel:, or write next: instead",
	"fork_branch_name":  "give each way out under parallel: its own name ({unit: tests, docs: docs})",
	"join_without_fork": "remove join: from the node, or make it the node that every branch of a fork leads to",
	"fork_branch_id":    "give ids and names under parallel: without '/': rename one of the forks, or one of the two names",
}

// Localize gives findings about a chart of the given format the hints of
// that format: a YAML chart's say which key to change. {id} in a hint is
// the node the finding is about (C when it names none). It is applied once,
// to everything a chart is checked for (import, node settings and lint),
// when the chart is checked (chart.Check).
func Localize(format string, diags []types.Diagnostic) {
	f, ok := ByName(format)
	if !ok || f.Hints == nil {
		return
	}
	for i := range diags {
		if h, ok := f.Hints[diags[i].Class]; ok {
			id := diags[i].ID
			if id == "" {
				id = "C"
			}
			diags[i].Hint = strings.ReplaceAll(h, "{id}", id)
		}
	}
}

const yamlHint = "see 'dtree docs yaml-charts' for the keys a chart takes"

// FromYAML reads a chart in dtree's YAML format (readme/yaml-charts.md).
// The nodes and their next: and branches: go through the same graph rules
// as a Lucid chart, so the same error and warning classes apply; what is
// wrong with the YAML itself is malformed_yaml, naming the line. The error
// is only for a failure to read r.
func FromYAML(r io.Reader) (*types.Document, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	y := &yamlReader{b: newBuilder(FormatYAML), nodeLines: map[string]int{}}
	y.b.starts = map[string][]string{}
	y.read(bytes.TrimPrefix(data, []byte("\ufeff")))
	return y.b.doc, nil
}

// yamlReader walks the YAML node tree into the builder.
type yamlReader struct {
	b         *builder
	bad       int             // malformed_yaml errors so far
	reported  map[string]bool // malformed_yaml messages, with their lines
	defaults  []yamlPair      // defaults: other than tags, in file order
	defTags   []string        // defaults: tags
	nodeLines map[string]int  // node id -> its line, for duplicates
	edges     []yamlEdge
	pages     int
}

type yamlPair struct {
	key, value string
}

// yamlEdge is one way out of a node, kept until every node is known.
type yamlEdge struct {
	from, to, label, page string
	labelled              bool
	line                  int
}

// maxYAMLErrors bounds the malformed_yaml errors reported for one file.
const maxYAMLErrors = 50

// malformed reports what is wrong with the YAML itself, each (line,
// message) once: an alias reads the node it names again, so a mistake in
// an anchored node would otherwise be reported once per alias (up to the
// limit, for a file of aliases of aliases).
func (y *yamlReader) malformed(line int, format string, args ...any) {
	y.malformedHint(line, yamlHint, format, args...)
}

// malformedHint is malformed with a hint of its own.
func (y *yamlReader) malformedHint(line int, hint, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	if y.reported[msg] {
		return
	}
	if y.reported == nil {
		y.reported = map[string]bool{}
	}
	y.reported[msg] = true
	y.bad++
	if y.bad > maxYAMLErrors {
		return
	}
	y.b.errorf("malformed_yaml", nil, line, hint, "%s", msg)
}

func (y *yamlReader) read(data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		y.b.errorf("empty_chart", nil, 0, yamlHints["empty_chart"], "the file is empty")
		return
	}
	if err != nil {
		y.syntaxError(err)
		return
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		y.malformed(next.Line, "a second YAML document (after ---); a chart file holds one")
		return
	} else if !errors.Is(err, io.EOF) {
		y.syntaxError(err)
		return
	}
	// Before anything is read through them: an alias is free in the
	// file and costs its anchor's whole value each time it is followed.
	if err := yamlread.CheckAliases(&doc, yamlread.MaxAliasBytes); err != nil {
		var ae *yamlread.AliasError
		errors.As(err, &ae)
		y.malformed(ae.Line, "%v", err)
		return
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		y.b.errorf("empty_chart", nil, 0, yamlHints["empty_chart"], "the file is empty")
		return
	}
	if top.Kind != yaml.MappingNode {
		y.malformed(top.Line, "a chart is a mapping with title: and nodes: (or pages:), not %s", yamlread.Describe(top))
		return
	}
	var nodes, pages *yaml.Node
	y.fields(top, YAMLChartKeys, "the chart", func(key string, k, v *yaml.Node) {
		switch key {
		case "title":
			if s, ok := y.scalar(v, "title"); ok {
				y.b.doc.Title = cleanText(s)
			}
		case "context":
			if c, ok := y.scalar(v, "context"); ok {
				if y.b.doc.Metadata == nil {
					y.b.doc.Metadata = map[string]string{}
				}
				y.b.doc.Metadata["context"] = strings.TrimSpace(c)
			}
		case "vars":
			y.readVars(v)
		case "defaults":
			y.readDefaults(v)
		case "nodes":
			nodes = v
		case "pages":
			pages = v
		}
	})
	switch {
	case nodes != nil && pages != nil:
		y.malformed(pages.Line, "the chart has both nodes: and pages:; put the nodes under one page each, or drop pages:")
	case nodes == nil && pages == nil && y.bad == 0:
		y.malformed(top.Line, "the chart has no nodes: list")
	case nodes != nil:
		y.readPage(nil, nodes, top.Line)
	case pages != nil:
		if pages.Kind != yaml.SequenceNode {
			y.malformed(pages.Line, "pages: is a list of pages, not %s", yamlread.Describe(pages))
			break
		}
		for _, p := range pages.Content {
			y.readPageEntry(yamlread.Resolve(p))
		}
	}
	if y.bad > 0 {
		// Keys are checked as they come, nodes after the chart's keys:
		// report in file order.
		slices.SortStableFunc(y.b.doc.Errors, func(a, b types.Diagnostic) int { return a.Line - b.Line })
		return
	}
	y.addEdges()
	y.b.build()
	y.place()
}

// syntaxError reports what the YAML parser rejected.
func (y *yamlReader) syntaxError(err error) {
	line, msg := yamlread.Syntax(err)
	if strings.HasPrefix(msg, "mapping values are not allowed") {
		// Most often a text with ": " in it, which plain YAML reads as a
		// key: the text must be quoted.
		y.malformedHint(line, quoteHint, "not YAML: %s (a text holding \": \" must be quoted)", msg)
		return
	}
	y.malformed(line, "not YAML: %s", msg)
}

// quoteHint says how to write a text YAML would read otherwise.
const quoteHint = `quote the text (text: "Deploy: then check #ci-health") or write it as a block: text: | and the text on the lines below, indented`

// textComment warns when a node's text is plain YAML followed by a
// comment on the same line: "Post a summary in #ci-health" is the text
// "Post a summary in" and the comment "#ci-health", and the prompt loses
// its end without a word.
//
// A command is not checked: a # after a space starts a comment in the
// shell too, so the command runs the same either way.
func (y *yamlReader) textComment(id, key string, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || v.Style != 0 || v.LineComment == "" {
		return
	}
	var ids []string
	if id != "" {
		ids = []string{id}
	}
	whole := strings.TrimSpace(v.Value + " " + v.LineComment)
	hint := fmt.Sprintf(`quote the %s: %s: %s, or write it as a block: %s: | and the text on the lines below, indented`,
		key, key, strconv.Quote(types.Excerpt(whole, 80)), key)
	y.b.warnf("yaml_comment_in_text", ids, v.Line, hint,
		"node %s: its %s ends where a YAML comment starts: it is %s, and %s is a comment; if the # belongs to the %s, quote it",
		id, key, types.Quote(types.Excerpt(v.Value, 60)), types.Quote(types.Excerpt(v.LineComment, 40)), key)
}

// readPageEntry reads one item of pages:.
func (y *yamlReader) readPageEntry(p *yaml.Node) {
	if p.Kind != yaml.MappingNode {
		y.malformed(p.Line, "a page is a mapping with id:, title: and nodes:, not %s", yamlread.Describe(p))
		return
	}
	id, title := "", ""
	var nodes *yaml.Node
	y.fields(p, YAMLPageKeys, "a page", func(key string, k, v *yaml.Node) {
		switch key {
		case "id":
			id, _ = y.scalar(v, "id")
		case "title":
			title, _ = y.scalar(v, "title")
		case "nodes":
			nodes = v
		}
	})
	if nodes == nil {
		y.malformed(p.Line, "the page has no nodes: list")
		return
	}
	y.readPage(&yamlPage{id: strings.TrimSpace(id), title: cleanText(title)}, nodes, p.Line)
}

type yamlPage struct{ id, title string }

// readPage reads a page's nodes; p is nil for a chart's top-level nodes:.
func (y *yamlReader) readPage(p *yamlPage, nodes *yaml.Node, line int) {
	y.pages++
	if p == nil {
		p = &yamlPage{}
	}
	if p.id == "" {
		p.id = strconv.Itoa(y.pages)
	}
	if _, dup := y.b.pages[p.id]; dup {
		y.malformed(line, "page id %q is used twice", p.id)
		return
	}
	y.b.addPage(p.id, p.title)
	if nodes.Kind != yaml.SequenceNode {
		if nodes.Tag != "!!null" {
			y.malformed(nodes.Line, "nodes: is a list of nodes, not %s", yamlread.Describe(nodes))
		}
		return
	}
	for _, n := range nodes.Content {
		y.readNode(yamlread.Resolve(n), p.id)
	}
}

// readNode reads one node and keeps its ways out for addEdges.
func (y *yamlReader) readNode(m *yaml.Node, page string) {
	if m.Kind != yaml.MappingNode {
		y.malformed(m.Line, "a node is a mapping with id:, text: and next: or branches:, not %s", yamlread.Describe(m))
		return
	}
	n := types.Node{Page: page, Tags: []string{}, TextAreas: []string{}, Comments: []string{}, Line: m.Line}
	kind, hasID := "", false
	var edges []yamlEdge
	var nextKey, branchesKey, commandKey, textValue, parallelKey, joinKey *yaml.Node
	command, join := "", ""
	y.fields(m, YAMLNodeKeys, "a node", func(key string, k, v *yaml.Node) {
		switch key {
		case "id":
			n.ID, hasID = y.scalar(v, "id")
			n.ID = strings.TrimSpace(n.ID)
		case "kind":
			if s, ok := y.scalar(v, "kind"); ok {
				kind = strings.ToLower(strings.TrimSpace(s))
				if !slices.Contains(YAMLKinds, kind) {
					y.malformed(v.Line, "kind %q is not one of %s", s, strings.Join(YAMLKinds, ", "))
				}
			}
		case "shape":
			n.Shape, _ = y.scalar(v, "shape")
			n.Shape = strings.TrimSpace(n.Shape)
		case "text":
			if s, ok := y.scalar(v, "text"); ok {
				n.Text, textValue = cleanText(s), v
			}
		case "command":
			commandKey = k
			command, _ = y.scalar(v, "command")
		case "tags":
			n.Tags = y.tags(v)
		case "metadata":
			n.Metadata = y.metadata(v)
		case "next":
			nextKey = k
			edges = append(edges, y.nexts(v)...)
		case "branches":
			branchesKey = k
			edges = append(edges, y.branches(v)...)
		case "parallel":
			// A fork (readme/parallel.md): its ways out all run at once.
			parallelKey = k
			edges = append(edges, y.parallel(v)...)
		case "join":
			joinKey = k
			join, _ = y.scalar(v, "join")
		}
	})
	if parallelKey != nil && (nextKey != nil || branchesKey != nil) {
		other := nextKey
		if other == nil {
			other = branchesKey
		}
		y.malformed(max(parallelKey.Line, other.Line), "the node has parallel: (line %d) and %s: (line %d); a fork lists every way out under parallel:, a decision under branches:",
			parallelKey.Line, other.Value, other.Line)
	}
	for _, kv := range []struct {
		key   *yaml.Node
		name  string
		value string
	}{{parallelKey, types.KeyParallel, "true"}, {joinKey, types.KeyJoin, strings.TrimSpace(join)}} {
		if kv.key == nil {
			continue
		}
		// parallel: and join: are the custom data keys of a fork and its
		// join, written where they read best, as command: is.
		if _, both := types.MetadataValue(&n, kv.name); both {
			y.malformed(kv.key.Line, "the node has %s: and a %s key under metadata:; keep one", kv.name, kv.name)
		}
		if n.Metadata == nil {
			n.Metadata = map[string]string{}
		}
		n.Metadata[kv.name] = kv.value
	}
	if nextKey != nil && branchesKey != nil {
		// Every way out of a node with branches: needs a label; next:
		// beside it would be an unlabeled one.
		y.malformed(max(nextKey.Line, branchesKey.Line), "the node has next: (line %d) and branches: (line %d); list every way out under branches:, each with its label",
			nextKey.Line, branchesKey.Line)
	}
	if commandKey != nil {
		// command: is the command metadata key, written where it reads
		// best (readme/yaml-charts.md#nodes).
		if _, both := n.Metadata["command"]; both {
			y.malformed(commandKey.Line, "the node has command: and a command key under metadata:; keep one")
		}
		if n.Metadata == nil {
			n.Metadata = map[string]string{}
		}
		n.Metadata["command"] = command
	}
	if textValue != nil {
		y.textComment(n.ID, "text", textValue)
	}
	if !hasID || n.ID == "" {
		y.malformed(m.Line, "the node has no id:; give every node an id that next: and branches: can name")
		return
	}
	if first, dup := y.nodeLines[n.ID]; dup {
		y.malformed(m.Line, "id %q is used again (first on line %d); every node needs its own id", n.ID, first)
		return
	}
	y.nodeLines[n.ID] = m.Line
	ways := len(edges)
	if parallelKey != nil {
		ways = 0 // a fork is a step, not a decision
	}
	y.setKind(&n, kind, ways)
	if n.Text != "" {
		n.TextAreas = []string{n.Text}
	}
	if n.Kind != types.KindTerminator {
		y.applyDefaults(&n)
	}
	if kind == "start" {
		y.b.starts[page] = append(y.b.starts[page], n.ID)
	}
	for i := range edges {
		edges[i].from, edges[i].page = n.ID, page
	}
	y.edges = append(y.edges, edges...)
	y.b.addShape(shape{node: n})
}

// setKind sets a node's kind and shape: kind: when given, else the kind
// its shape: names (Lucid rule 8), else decision for a node with two or
// more ways out and process for any other.
func (y *yamlReader) setKind(n *types.Node, kind string, ways int) {
	switch {
	case kind == "approval":
		// A gate (readme/charts.md#approval-gates): Lucid's Manual
		// operation, marked as custom data marks one, whatever its shape.
		n.Kind = types.KindProcess
		if n.Shape == "" {
			n.Shape = yamlShapes[kind]
		}
		if n.Metadata == nil {
			n.Metadata = types.Metadata{}
		}
		if _, set := n.Metadata["approval"]; !set {
			n.Metadata["approval"] = "true"
		}
	case kind != "" && slices.Contains(YAMLKinds, kind):
		n.Kind = map[string]string{"start": types.KindTerminator, "end": types.KindTerminator}[kind]
		if n.Kind == "" {
			n.Kind = kind
		}
		if n.Shape == "" {
			n.Shape = yamlShapes[kind]
		}
	case n.Shape != "":
		n.Kind = kindOf(n.Shape)
	case ways >= 2:
		n.Kind, n.Shape = types.KindDecision, yamlShapes["decision"]
	default:
		n.Kind, n.Shape = types.KindProcess, yamlShapes["process"]
	}
}

// addEdges gives each way out an id, "L" and its line ("L14"; "L14.2" for
// a second one on that line), that no node has, and adds it. The next
// number to try is kept per line, so that a line of many ways out (a
// fork's parallel: [a, b, …] of thousands) is not searched again from 2.
func (y *yamlReader) addEdges() {
	used := map[string]bool{}
	next := map[int]int{}
	for _, e := range y.edges {
		id := fmt.Sprintf("L%d", e.line)
		k := max(next[e.line], 2)
		for ; used[id] || y.b.has(id); k++ {
			id = fmt.Sprintf("L%d.%d", e.line, k)
		}
		next[e.line] = k
		used[id] = true
		var labels []string
		if e.labelled {
			labels = []string{e.label}
		}
		y.b.addEdge(line{id: id, page: e.page, ends: [2]string{e.from, e.to}, labels: labels, srcLn: e.line})
	}
}

// place gives the builder's findings the page of the edge they are about
// (edges are not items the builder can look up). Their hints are made
// YAML's by Localize, with those of lint.
func (y *yamlReader) place() {
	pages := make(map[string]string, len(y.b.lines))
	for _, l := range y.b.lines {
		pages[l.id] = l.page
	}
	for _, list := range [][]types.Diagnostic{y.b.doc.Errors, y.b.doc.Warnings} {
		for i := range list {
			d := &list[i]
			if d.Page == "" {
				d.Page = pages[d.ID]
			}
		}
	}
}
