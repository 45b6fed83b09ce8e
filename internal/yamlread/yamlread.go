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
