// Package chart loads a chart for a command: it imports the file, resolves
// every node's settings, and gathers the import and lint findings, so that
// inspect, lint and run see the same chart and the same errors.
package chart

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/internal/lint"
	"github.com/dtree-dev/dtree/internal/nodeconf"
	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/types"
)

// Options say how to read and resolve a chart.
type Options struct {
	Format   string // "" to detect
	Defaults types.Defaults
	// Names are the CLIs a node may name; nil is the built-ins alone.
	Names nodeconf.CLINames
	// Vars are the variables a run or lint is given (--var, --vars), which
	// {{var.NAME}} may name besides the chart's own.
	Vars []string
}

// Chart is a loaded, checked chart.
type Chart struct {
	Doc      *types.Document
	Graph    *graph.Graph
	Nodes    []types.ProcessedNode // parallel to Doc.Nodes
	Errors   []types.Diagnostic
	Warnings []types.Diagnostic
	// Names are the CLI names the chart was read with (Options.Names).
	Names nodeconf.CLINames
}

// Load reads the chart at path ("-" for stdin) and checks it. The error is
// a *document.UnreadableError when the chart cannot be read at all; problems
// in a chart that was read are in Errors and Warnings.
func Load(path string, stdin io.Reader, opts Options) (*Chart, error) {
	doc, err := document.Read(path, opts.Format, stdin)
	if err != nil {
		return nil, err
	}
	return Check(doc, opts), nil
}

// Check resolves and lints an imported document.
func Check(doc *types.Document, opts Options) *Chart {
	if opts.Names == nil {
		opts.Names = agent.Names{}
	}
	g := graph.New(doc)
	c := &Chart{
		Doc: doc, Graph: g,
		Nodes:    make([]types.ProcessedNode, len(doc.Nodes)),
		Errors:   slices.Clone(doc.Errors),
		Warnings: slices.Clone(doc.Warnings),
		Names:    opts.Names,
	}
	// The graph checks need no resolved settings: they run alongside.
	var lintErrs, lintWarns []types.Diagnostic
	var forks lint.ForkResult
	linted := make(chan struct{})
	go func() {
		defer close(linted)
		lintErrs, lintWarns = lint.Check(g)
		forks = lint.Forks(g)
	}()
	// A node with no tags and no metadata has the defaults for its role
	// and the step its shape draws (a Manual operation is a gate); such
	// nodes, most of a large chart, share one Settings. Each still gets
	// its kind's checks: they read its lines.
	type plainKey struct {
		role  string
		drawn types.Step
	}
	shared := map[plainKey]*types.Settings{}
	for i := range doc.Nodes {
		n, role := &doc.Nodes[i], g.Role(i)
		plain := len(n.Tags) == 0 && len(n.Metadata) == 0
		key := plainKey{role, types.DrawnStep(n.Shape)}
		var p types.ProcessedNode
		if s, ok := shared[key]; ok && plain {
			p = types.ProcessedNode{Node: n, Settings: s}
		} else {
			var f nodeconf.Findings
			p, f = nodeconf.Resolve(n, role, opts.Defaults, opts.Names)
			if plain {
				shared[key] = p.Settings
			}
			c.Errors = append(c.Errors, f.Errors...)
			c.Warnings = append(c.Warnings, f.Warnings...)
		}
		c.Nodes[i] = p
		if check := kindChecks[nodeconf.Step(p)]; check != nil {
			c.Errors = append(c.Errors, check(g, i, n)...)
		}
		if warn := kindWarnings[nodeconf.Step(p)]; warn != nil {
			c.Warnings = append(c.Warnings, warn(n)...)
		}
	}
	<-linted
	// Each node's step kind, once lint, which reads the nodes, is done.
	// So are its forks and joins (readme/parallel.md).
	for i := range c.Nodes {
		doc.Nodes[i].Step = nodeconf.Step(c.Nodes[i])
	}
	for i, f := range forks.Forks {
		doc.Nodes[i].Fork = f
	}
	for i, mode := range forks.Joins {
		doc.Nodes[i].Join = mode
	}
	lintErrs = append(lintErrs, forks.Errors...)
	lintWarns = append(lintWarns, forks.Warnings...)
	if v, ok := doc.Metadata["context"]; ok {
		if _, ok := types.ContextMode(v); !ok {
			c.Errors = append(c.Errors, types.Diagnostic{Class: "bad_metadata", Line: 1,
				Message: fmt.Sprintf("the chart's context is %q, not none, previous or path", types.Excerpt(v, 60)),
				Hint:    "set the document's custom data context (YAML: context:) to none, previous or path"})
		}
	}
	c.Errors = append(c.Errors, lintErrs...)
	c.Errors = append(c.Errors, checkRefs(doc, g, opts.Vars)...)
	c.Warnings = append(c.Warnings, lintWarns...)
	document.Localize(doc.Format, c.Errors)
	document.Localize(doc.Format, c.Warnings)
	document.NamePages(doc, c.Errors)
	document.NamePages(doc, c.Warnings)
	if c.Errors == nil {
		c.Errors = []types.Diagnostic{}
	}
	if c.Warnings == nil {
		c.Warnings = []types.Diagnostic{}
	}
	return c
}

// Page finds a page by id, by title (case-insensitive), or by its 1-based
// number. An empty selector is the first page.
func (c *Chart) Page(sel string) (types.Page, error) {
	pages := c.Doc.Pages
	if len(pages) == 0 {
		return types.Page{}, fmt.Errorf("the chart has no pages")
	}
	if sel == "" {
		return pages[0], nil
	}
	for _, p := range pages {
		if p.ID == sel {
			return p, nil
		}
	}
	for _, p := range pages {
		if strings.EqualFold(p.Title, sel) {
			return p, nil
		}
	}
	if n, err := strconv.Atoi(sel); err == nil && n >= 1 && n <= len(pages) {
		return pages[n-1], nil
	}
	var names []string
	for i, p := range pages {
		names = append(names, fmt.Sprintf("number %d, id %s, title %q", i+1, p.ID, p.Title))
	}
	return types.Page{}, fmt.Errorf("no page %q in the chart; its pages are: %s", sel, strings.Join(names, "; "))
}

// Normalized returns the document as `inspect --json` prints it; with a
// page, only that page's nodes, edges and warnings.
func (c *Chart) Normalized(page *types.Page) types.NormalizedDocument {
	d := c.Doc
	out := types.NormalizedDocument{
		FormatVersion: d.FormatVersion, Title: d.Title, Status: d.Status, Source: d.Source, Format: d.Format,
		Pages: d.Pages, Nodes: c.Nodes, Edges: d.Edges, Warnings: c.Warnings, Vars: d.Vars,
	}
	if page == nil {
		return out
	}
	out.Pages = []types.Page{*page}
	out.Nodes = []types.ProcessedNode{}
	for _, n := range c.Nodes {
		if n.Page == page.ID {
			out.Nodes = append(out.Nodes, n)
		}
	}
	out.Edges = []types.Edge{}
	for _, e := range d.Edges {
		if e.Page == page.ID {
			out.Edges = append(out.Edges, e)
		}
	}
	out.Warnings = OnPage(c.Warnings, page)
	return out
}

// OnPage returns the findings about the given page and about the whole
// document; with no page, all of them.
func OnPage(diags []types.Diagnostic, page *types.Page) []types.Diagnostic {
	if page == nil {
		return diags
	}
	out := []types.Diagnostic{}
	for _, d := range diags {
		if d.Page == "" || d.Page == page.ID {
			out = append(out, d)
		}
	}
	return out
}

// FindNode returns the ids of the nodes on the page that key names: the
// node with that id, else every node whose text is key (case and outer
// space aside). One id is a match; none or several are for the caller to
// explain.
func (c *Chart) FindNode(page, key string) []string {
	for i := range c.Doc.Nodes {
		n := &c.Doc.Nodes[i]
		if n.Page == page && n.ID == key {
			return []string{n.ID}
		}
	}
	var matches []string
	key = strings.TrimSpace(key)
	for i := range c.Doc.Nodes {
		n := &c.Doc.Nodes[i]
		if n.Page == page && strings.EqualFold(strings.TrimSpace(n.Text), key) {
			matches = append(matches, n.ID)
		}
	}
	return matches
}

// NearNode is "; did you mean …?" for the node of page whose id or text
// key is a typo of (a text quoted), else "".
func (c *Chart) NearNode(page, key string) string {
	var ids, texts []string
	for i := range c.Doc.Nodes {
		if n := &c.Doc.Nodes[i]; n.Page == page {
			ids = append(ids, n.ID)
			texts = append(texts, strings.TrimSpace(n.Text))
		}
	}
	if near, ok := types.Nearest(key, ids); ok {
		return "; did you mean " + near + "?"
	}
	if near, ok := types.Nearest(key, texts); ok {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}

// kindChecks are the step kinds' own lint checks (types.Step): the
// errors of node i, a node of that kind; one entry a kind that has one.
var kindChecks = map[types.Step]func(g *graph.Graph, i int, n *types.Node) []types.Diagnostic{
	types.StepCommand:  commandLabels,
	types.StepApproval: gateLabels,
}

// kindWarnings are the step kinds' own lint warnings: what a node of
// that kind has that does nothing.
var kindWarnings = map[types.Step]func(n *types.Node) []types.Diagnostic{
	types.StepApproval: gateAgentKeys,
}

// agentOnlyKeys are the custom data keys (normalized) that only an
// agent's step reads: a gate, which asks a person, ignores them.
// timeout is not one: on a terminal it is the gate's own.
var agentOnlyKeys = []string{"cli", "validatecli", "retrycli", "retries", "validate", "validateprompt",
	"model", "maxturns", "context", "paths", "rollback", "keeprunning"}

// gateAgentKeys warns of an approval gate's custom data that only an
// agent's step reads, which lints clean but does nothing: a key a node.
func gateAgentKeys(n *types.Node) []types.Diagnostic {
	var out []types.Diagnostic
	for _, k := range slices.Sorted(maps.Keys(n.Metadata)) {
		if !slices.Contains(agentOnlyKeys, nodeconf.Normalize(k)) {
			continue
		}
		out = append(out, types.Diagnostic{Class: "gate_agent_key", ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
			Message: fmt.Sprintf("node %s: approval gate: custom data %s is ignored: a gate asks a person, and runs no agent", n.ID, types.Quote(k)),
			Hint:    "remove it (timeout is a gate's own: how long the terminal waits for an answer)"})
	}
	return out
}

// gateLabels checks that an approval gate routes a person's answer: one
// branch approved, one rejected, and no command
// (readme/charts.md#approval-gates).
func gateLabels(g *graph.Graph, i int, n *types.Node) []types.Diagnostic {
	var out []types.Diagnostic
	bad := func(msg, hint string) {
		out = append(out, types.Diagnostic{Class: "approval_gate", ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
			Message: fmt.Sprintf("node %s: approval gate: %s", n.ID, msg), Hint: hint})
	}
	if types.IsFork(n) {
		bad("it is marked parallel: a gate takes one way, approved or rejected, and a fork takes every way at once",
			"remove parallel from the gate, and draw the fork as a step of its own after the gate's approved line")
		return out
	}
	for k := range n.Metadata {
		if nodeconf.Normalize(k) == "command" {
			bad("it has a command, and a person, not a command, answers a gate",
				"remove the command; or, to make it a command step, what marks it a gate (YAML kind: approval, custom data approval: true, a Manual operation shape)")
			break
		}
	}
	var labels []string
	for _, e := range g.Out(i) {
		labels = append(labels, e.Label)
	}
	if msg := response.CheckGateLabels(labels); msg != "" {
		bad(msg, "give the gate two branches, labelled approved (or yes) and rejected (or no); or, if it is no gate, set its custom data approval: false")
	}
	return out
}

// commandLabels checks that a command decision's branches route its exit
// statuses (readme/context.md#command-steps).
func commandLabels(g *graph.Graph, i int, n *types.Node) []types.Diagnostic {
	if g.Role(i) != types.RoleDecision {
		return nil
	}
	var labels []string
	for _, e := range g.Out(i) {
		labels = append(labels, e.Label)
	}
	msg := response.CheckExitLabels(labels)
	if msg == "" {
		return nil
	}
	return []types.Diagnostic{{Class: "command_labels", ID: n.ID, IDs: []string{n.ID}, Page: n.Page, Line: n.Line,
		Message: fmt.Sprintf("node %s: command decision: %s", n.ID, msg),
		Hint:    "label its branches with exit statuses (0, 2) or yes/no words: yes, pass, ok take exit 0; no, fail, else any other"}}
}
