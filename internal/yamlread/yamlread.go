// Package yamlread holds what dtree's readers of YAML files (settings,
// charts, answers files) share for their messages: the line of yaml.v3's
// syntax errors, aliases followed, and nodes described.
package yamlread

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/types"
)

// lineRE finds the line yaml.v3 puts in its syntax errors
// ("yaml: line 3: …").
var lineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): ((?s).*)$`)

// parserErrors start the messages of yaml.v3's parser, as opposed to its
// scanner.
var parserErrors = []string{
	"did not find expected ',' or",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected node content",
	"did not find expected <document start>",
}

// Syntax returns the line (from 1) and the message of a yaml.v3 syntax
// error; line is 0 when the error names none. yaml.v3 counts lines from 0
// in its parser's errors and from 1 in its scanner's, and leaves line 0
// out: a parser error is moved to the line where the unfinished list or
// mapping starts, as its scanner's are.
func Syntax(err error) (line int, msg string) {
	msg = strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	for _, p := range parserErrors {
		if strings.HasPrefix(msg, p) {
			line++
			break
		}
	}
	return line, msg
}

// Resolve follows an alias (*name) to the node it names.
func Resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Items are the entries of a list, aliases followed, or else n itself:
// for keys that take one value or a list of them.
func Items(n *yaml.Node) []*yaml.Node {
	n = Resolve(n)
	if n.Kind != yaml.SequenceNode {
		return []*yaml.Node{n}
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, it := range n.Content {
		out[i] = Resolve(it)
	}
	return out
}

// Describe names a node's kind, or its value, for a message: "a list",
// "a mapping", "empty", or the value quoted.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.Tag == "!!null" {
		return "empty"
	}
	return fmt.Sprintf("%q", types.Excerpt(n.Value, 40))
}

// MaxAliasBytes bounds what aliases may add to a file once followed. An
// alias costs nothing in the file and the whole of its anchor's value in
// what is read from it: a 1 MB chart whose one 1 MB text 300 nodes reuse
// made inspect --json peak at 5 GB. 16 MiB lets a file reuse blocks of
// settings or text freely.
const MaxAliasBytes = 16 << 20

// nodeBytes is what a node counts for besides its value: a list of
// empty strings repeated through aliases costs too.
const nodeBytes = 16

// AliasError is a file whose aliases, followed, would add more than
// MaxAliasBytes: Line and Name are those of the alias that passed the
// bound.
type AliasError struct {
	Line  int
	Name  string
	Bytes int64 // what that alias adds
}

func (e *AliasError) Error() string {
	return fmt.Sprintf("aliases would add more than %d MiB to the file once followed; *%s here adds %s (aliases are counted for their anchor's whole value, each time they are used)",
		MaxAliasBytes>>20, e.Name, size(e.Bytes))
}

func size(b int64) string {
	if b >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", b)
}

// CheckAliases returns an *AliasError when following the aliases under
// root would add more than max bytes: each alias counts for its anchor's
// value, nested aliases followed. It takes time linear in the parsed tree
// and follows no alias twice, so a "billion laughs" file is refused in
// microseconds, before anything is copied.
func CheckAliases(root *yaml.Node, max int64) error {
	memo := map[*yaml.Node]int64{}
	var added int64
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return nil
			}
			b := expanded(n.Alias, memo, max)
			added = min(added+b, max+1)
			if added > max {
				return &AliasError{Line: n.Line, Name: n.Value, Bytes: b}
			}
			return nil
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}

// expanded is n's size with its aliases followed, saturated past max so
// that no sum overflows.
func expanded(n *yaml.Node, memo map[*yaml.Node]int64, max int64) int64 {
	if b, ok := memo[n]; ok {
		return b
	}
	memo[n] = max + 1 // a node that contains itself (yaml.v3 refuses those) is too big
	b := int64(len(n.Value) + nodeBytes)
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		b = expanded(n.Alias, memo, max)
	}
	for _, c := range n.Content {
		b = min(b+expanded(c, memo, max), max+1)
	}
	memo[n] = b
	return b
}
