// Package replay is dtree's offline agent: it answers each node from an
// answers file instead of a model, so a chart's routing can be tried and
// tested without spending tokens (readme/replay.md).
//
// An answers file maps nodes, by id or text, to the replies their agent
// calls get, in call order, or per visit:
//
//	"Run the tests": [ok]                 # a process node: {"completed": true}
//	Did they pass?: [No, "Yes"]           # a decision: the label, per visit
//	"5": [ok, "fail: no test for it", ok, ok] # process, validation, retry, validation
//	"7": {visit 1: [No], visit 2: [Yes]}  # each visit's replies, in its call order
//
// dtree reads and checks the file against the chart (Load, Resolve) into a
// Plan; a Runner answers each agent call of the run from it, in process:
// no child is started, and nothing is written but the run's own logs.
package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/yamlread"
	"github.com/dtree-dev/dtree/types"
)

// Entry is one node's replies as the answers file gives them: a list
// in call order (Replies), or each visit's (Visits, nil for a list).
type Entry struct {
	Key     string // the node's id or text, as written
	Line    int
	Replies []Reply
	Visits  map[int]Visit
}

// Visit is the replies of one visit of a node, in its call order.
type Visit struct {
	Line    int // its key's line
	Replies []Reply
}

// Reply is one reply: the text of a scalar, or a mapping written as JSON.
type Reply struct {
	Text string
	Line int
}

// Answers is a parsed answers file.
type Answers struct {
	Path    string
	Entries []Entry
	// Recorded is the run the file was recorded from, when dtree wrote
	// it (its header says so); nil for a file written by hand.
	Recorded *Recording
}

// Recording is the run an answers.yaml was recorded from: its id and how
// it ended (a run.Status: succeeded, interrupted, failed, …).
type Recording struct {
	RunID, Status string
}

// recordedHeader is the first line of the header Recorder's callers
// write (internal/run, saveAnswers).
var recordedHeader = regexp.MustCompile(`\A# Answers recorded by dtree run (\S+) \(([a-z_]+)\) of `)

// FileError is a problem in an answers file, at a line when known.
type FileError struct {
	Path string
	Line int
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return e.Path + ": " + e.Msg
}

// Load reads an answers file.
func Load(path string) (*Answers, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read answers: %w", err)
	}
	return Parse(path, b)
}

// Parse reads an answers file's content: a mapping from node (id or text)
// to one reply or a list of them.
func Parse(path string, b []byte) (*Answers, error) {
	a := &Answers{Path: path}
	if m := recordedHeader.FindSubmatch(b); m != nil {
		a.Recorded = &Recording{RunID: string(m[1]), Status: string(m[2])}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		line, msg := yamlread.Syntax(err)
		return nil, &FileError{Path: path, Line: line, Msg: "not YAML: " + msg}
	}
	if len(doc.Content) == 0 {
		return a, nil // empty file: no replies
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &FileError{Path: path, Line: root.Line,
			Msg: "an answers file is a mapping from node (its id or text) to a list of replies"}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" {
			return nil, &FileError{Path: path, Line: k.Line, Msg: "a key must be a node's id or text"}
		}
		if at, dup := seen[k.Value]; dup {
			return nil, &FileError{Path: path, Line: k.Line, Msg: fmt.Sprintf("node %q is listed twice (also line %d); put all its replies in one list", k.Value, at)}
		}
		seen[k.Value] = k.Line
		e := Entry{Key: k.Value, Line: k.Line}
		visits, err := visitsOf(path, k.Value, v)
		if err != nil {
			return nil, err
		}
		e.Visits = visits
		if visits == nil {
			if e.Replies, err = replies(path, v); err != nil {
				return nil, err
			}
		}
		a.Entries = append(a.Entries, e)
	}
	return a, nil
}

func replies(path string, n *yaml.Node) ([]Reply, error) {
	var out []Reply
	for _, it := range yamlread.Items(n) {
		r, err := reply(path, it)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// visitKey is a key of a node's replies per visit: "visit 2".
var visitKey = regexp.MustCompile(`(?i)\Avisit +([0-9]{1,9})\z`)

// visitsOf reads a node's replies given per visit, a mapping whose every
// key is "visit N"; nil when n is no such mapping: a list, a reply, or a
// mapping with no such key, which is one reply written as YAML.
func visitsOf(path, node string, n *yaml.Node) (map[int]Visit, error) {
	n = yamlread.Resolve(n)
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	var visits map[int]Visit
	other := 0 // the line of a key that is no visit's
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		m := visitKey.FindStringSubmatch(strings.TrimSpace(k.Value))
		if k.Kind != yaml.ScalarNode || m == nil {
			if other == 0 {
				other = k.Line
			}
			continue
		}
		if visits == nil {
			visits = map[int]Visit{}
		}
		nv, _ := strconv.Atoi(m[1])
		if nv == 0 {
			return nil, &FileError{Path: path, Line: k.Line, Msg: "visits count from 1: the first is \"visit 1\""}
		}
		if at, dup := visits[nv]; dup {
			return nil, &FileError{Path: path, Line: k.Line, Msg: fmt.Sprintf("visit %d of node %q is listed twice (also line %d); put its replies in one list", nv, node, at.Line)}
		}
		rs, err := replies(path, n.Content[i+1])
		if err != nil {
			return nil, err
		}
		visits[nv] = Visit{Line: k.Line, Replies: rs}
	}
	if visits != nil && other != 0 {
		return nil, &FileError{Path: path, Line: other, Msg: fmt.Sprintf("node %q gives its replies per visit (\"visit 1\": …), and this key is no visit; write it \"visit N\"", node)}
	}
	return visits, nil
}

// shorthands are the replies written "word: text". Unquoted in a list,
// YAML reads `- fail: no tests` as a mapping of one key; it means the
// shorthand all the same.
var shorthands = []string{"ok", "fail", "error", "raw"}

func reply(path string, n *yaml.Node) (Reply, error) {
	n = yamlread.Resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return Reply{}, &FileError{Path: path, Line: n.Line, Msg: "an empty reply; write ok, \"fail: why\", a label or a JSON object"}
		}
		return Reply{Text: n.Value, Line: n.Line}, nil
	case yaml.MappingNode:
		if len(n.Content) == 2 {
			k, v := n.Content[0], yamlread.Resolve(n.Content[1])
			if word := strings.ToLower(k.Value); k.Kind == yaml.ScalarNode && slices.Contains(shorthands, word) {
				if v.Kind != yaml.ScalarNode {
					return Reply{}, &FileError{Path: path, Line: n.Line,
						Msg: fmt.Sprintf("%s: takes a text, not %s; quote the whole reply: \"%s: …\"", word, yamlread.Describe(v), word)}
				}
				text := word + ": " + v.Value
				switch {
				case word == "ok":
					text = "ok"
				case v.Tag == "!!null":
					text = word + ":"
				}
				return Reply{Text: text, Line: n.Line}, nil
			}
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return Reply{}, &FileError{Path: path, Line: n.Line, Msg: err.Error()}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return Reply{}, &FileError{Path: path, Line: n.Line, Msg: "this reply cannot be written as JSON: " + err.Error()}
		}
		return Reply{Text: string(b), Line: n.Line}, nil
	}
	return Reply{}, &FileError{Path: path, Line: n.Line, Msg: "a reply is a text or a mapping, not " + yamlread.Describe(n)}
}

// Finder names the nodes a key matches: one id, or none, or several.
type Finder func(key string) []string

// Node is what the replay agent needs to know of a node: its replies in
// call order, or, when Visits is not nil, per visit.
type Node struct {
	Text     string
	Decision bool
	Replies  []Reply
	Visits   map[int]Visit
	Line     int // the entry's line in the answers file; 0 for none
}

// Resolve matches every entry to a node of the chart; info gives a
// node's text and role (types.Role*). All unmatched or ambiguous keys, and
// keys of terminators, which never reach an agent, are reported together.
//
// near says which node a key that matches none may be a typo of:
// "; did you mean …?", or "".
func (a *Answers) Resolve(find Finder, info func(id string) (text, role string), near func(key string) string) (map[string]*Node, error) {
	nodes := map[string]*Node{}
	var errs []error
	by := map[string]int{} // node id → the line that claimed it
	for _, e := range a.Entries {
		ids := find(e.Key)
		switch {
		case len(ids) == 0:
			errs = append(errs, &FileError{Path: a.Path, Line: e.Line, Msg: fmt.Sprintf("no node has the id or text %q%s ('dtree inspect CHART' lists them)", e.Key, near(e.Key))})
			continue
		case len(ids) > 1:
			errs = append(errs, &FileError{Path: a.Path, Line: e.Line, Msg: fmt.Sprintf("nodes %s all have the text %q; key them by id", strings.Join(ids, ", "), e.Key)})
			continue
		}
		id := ids[0]
		if at, dup := by[id]; dup {
			errs = append(errs, &FileError{Path: a.Path, Line: e.Line, Msg: fmt.Sprintf("node %s already has replies at line %d; put them in one list", id, at)})
			continue
		}
		by[id] = e.Line
		text, role := info(id)
		if role == types.RoleTerminator {
			errs = append(errs, &FileError{Path: a.Path, Line: e.Line, Msg: fmt.Sprintf("node %s %s is a terminator: it never reaches an agent, so it takes no replies", id, types.Quote(types.Excerpt(text, 60)))})
			continue
		}
		nodes[id] = &Node{Text: text, Decision: role == types.RoleDecision, Replies: e.Replies, Visits: e.Visits, Line: e.Line}
	}
	return nodes, errors.Join(errs...)
}

// Plan is what the replay agent answers from: every node's replies, by
// id, and where the answers came from.
type Plan struct {
	Answers  string // the answers file, for messages
	Nodes    map[string]*Node
	Recorded *Recording // the run it was recorded from, if any
}

// Leftover is a node whose replies a replay did not all use.
type Leftover struct {
	ID, Text string
	Line     int // its entry in the answers file
	Left     int // replies not used
}
