// Package yamlerr reads the line out of yaml.v3's syntax errors, for the
// messages about every YAML file dtree reads: settings, charts and
// answers files.
package yamlerr

import (
	"regexp"
	"strconv"
	"strings"
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
