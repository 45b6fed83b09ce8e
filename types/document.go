package types

import (
	"encoding/json"
	"strings"
)

// FormatVersion is the version of the normalized JSON that `dtree inspect
// --json` prints. It changes only when a field changes meaning or goes away.
const FormatVersion = 1

// Node kinds, from the shape (readme/charts.md#shapes-and-what-they-become).
const (
	KindTerminator = "terminator"
	KindProcess    = "process"
	KindDecision   = "decision"
	KindSubprocess = "subprocess"
	KindOther      = "other"
)

// Roles say how the runner treats a node. A node's role follows from its kind
// and its outgoing edges, not from its shape: any node with two or more
// outgoing edges is run as a decision (readme/charts.md#roles-how-a-node-runs).
const (
	RoleTerminator = "terminator"
	RoleDecision   = "decision"
	RoleProcess    = "process"
)

// Document is an imported chart: every page's nodes and edges, in source
// order. Nodes and edges are flat lists; Page fields tie them to a page.
type Document struct {
	FormatVersion int    `json:"format_version"`
	Title         string `json:"title"`
	Status        string `json:"status"`
	Source        string `json:"source"`
	Format        string `json:"format"`
	Pages         []Page `json:"pages"`
	Nodes         []Node `json:"nodes"`
	Edges         []Edge `json:"edges"`
	// Metadata is the document's custom data: the Document row's custom
	// columns in a CSV export, the pages' customData in the API JSON (the
	// first page's value of a key wins), the chart-level keys of a YAML
	// chart (context:). Chart-wide settings and variables read it
	// (readme/context.md).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Vars are the chart's variables with their defaults: YAML vars:, or
	// the document's custom data in a Lucid chart
	// (readme/context.md#variables).
	Vars     []Var        `json:"vars,omitempty"`
	Errors   []Diagnostic `json:"-"`
	Warnings []Diagnostic `json:"warnings"`
}

// Var is one variable of a chart. A variable with no default must be
// given a value when the chart runs (--var, --vars).
type Var struct {
	Name       string `json:"name"`
	Default    string `json:"default"`
	HasDefault bool   `json:"has_default"`
}

// Page is one chart in a document. Lines never cross pages. Root is the id
// of the page's start node, empty when it has none or several.
type Page struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Root  string `json:"root"`
}

// Node is one step of a chart as the source describes it, plus the settings
// resolved for it (see ProcessedNode for the full resolution).
type Node struct {
	ID        string   `json:"id"`
	Page      string   `json:"page"`
	Kind      string   `json:"kind"`
	Shape     string   `json:"shape"`
	Text      string   `json:"text"`
	TextAreas []string `json:"text_areas"`
	Tags      []string `json:"tags"`
	Metadata  Metadata `json:"metadata"`
	Lane      string   `json:"lane"`
	Container string   `json:"container"`
	Group     string   `json:"group"`
	Comments  []string `json:"comments"`
	// Line is the source line of the node's row (CSV) or entry (YAML); 0
	// when the source has no lines to speak of (Lucid API JSON).
	Line int `json:"line"`
	// KeyLines are the source lines of the custom data keys (as written)
	// that have a line of their own, apart from the node's: a Mermaid
	// chart's %% dtree: lines. A finding about such a key's value names
	// its line. Nil for the other formats.
	KeyLines map[string]int `json:"-"`
	// Step is the node's step kind, resolved when the chart is loaded
	// (nodeconf.Resolve, in chart.Check); "" in a document that was only
	// imported. The pictures and the run read it, never the metadata that
	// marks it. Not in JSON: inspect shows the role and the command.
	Step Step `json:"-"`
	// Fork is set on a fork (custom data parallel: true) when the chart is
	// loaded (chart.Check): where its branches meet and what they are
	// (readme/parallel.md); nil on any other node, and then not in JSON.
	Fork *Fork `json:"fork,omitempty"`
	// Join is set on the node where a fork's branches meet, when the chart
	// is loaded: JoinAll or JoinAny (custom data join:); "" on any other
	// node.
	Join string `json:"join,omitempty"`
}

// Edge is one labelled arrow. ID is the source line's id.
type Edge struct {
	ID          string   `json:"id"`
	Page        string   `json:"page"`
	From        string   `json:"from"`
	To          string   `json:"to"`
	Label       string   `json:"label"`
	ExtraLabels []string `json:"extra_labels"`
	Line        int      `json:"line"`
}

// Diagnostic is one import or lint finding. Class is a stable name from
// readme/lint.md#classes; scripts match on it.
type Diagnostic struct {
	Class string `json:"class"`
	// ID is the first of IDs, kept for readers that want one id.
	ID  string   `json:"id"`
	IDs []string `json:"ids"`
	// Page is the page the finding is on; empty for the whole document.
	Page    string `json:"page"`
	Line    int    `json:"line"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// Describe names a node for messages: its id and the first line of its text,
// cut at 40 characters.
func (n Node) Describe() string {
	t := Excerpt(n.Text, 40)
	if t == "" {
		return n.ID
	}
	return n.ID + " " + Quote(t)
}

// ClassesByID maps each node or line id the diagnostics name to their
// classes, "dangling_line, unlabeled_branch", each once, in order: how a
// drawing of a chart with errors marks them.
func ClassesByID(diags []Diagnostic) map[string]string {
	out := map[string]string{}
	for _, d := range diags {
		for _, id := range d.IDs {
			switch list := out[id]; {
			case list == "":
				out[id] = d.Class
			case !strings.Contains(", "+list+", ", ", "+d.Class+", "):
				out[id] = list + ", " + d.Class
			}
		}
	}
	return out
}

// Metadata is a node's custom data. A node without any has a nil map, which
// JSON shows as {} like any other empty object.
type Metadata map[string]string

// MarshalJSON writes nil as {}.
func (m Metadata) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]string(m))
}

// FoldName makes the spellings of a tag, metadata key or CLI name alike:
// case, '_', '-' and spaces do not count, so "NoValidation", "no_validation"
// and "No Validation" are one name, as are "Claude Code" and "claude-code"
// (readme/charts.md#tags).
func FoldName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r != '_' && r != '-' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// NodeCommand is the node's command (custom data command, any spelling
// of the key that folds to it): the node is a command step when it is not
// blank (readme/context.md#command-steps).
func NodeCommand(n *Node) string {
	key := "" // the first in sorted order, as settings take it
	for k := range n.Metadata {
		if FoldName(k) == "command" && (key == "" || k < key) {
			key = k
		}
	}
	return n.Metadata[key]
}
