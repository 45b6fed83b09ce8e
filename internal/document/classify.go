package document

import (
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// isArrowhead reports whether a Lucid end style draws an arrowhead (rule 10):
// not None and containing "Arrow", but not an ERD crow's foot.
func isArrowhead(style string) bool {
	switch style { // the styles nearly every line has
	case "None", "":
		return false
	case "Arrow":
		return true
	}
	s := strings.TrimSpace(style)
	if s == "" || strings.EqualFold(s, "none") {
		return false
	}
	l := strings.ToLower(s)
	return strings.Contains(l, "arrow") && !strings.HasPrefix(l, "cfn erd")
}

// kindOf maps a CSV shape name or a JSON class to a node kind (rule 8).
func kindOf(shape string) string {
	switch strings.ToLower(strings.TrimSpace(shape)) {
	case "terminator", "terminatorblock", "terminatorblockv2":
		return types.KindTerminator
	case "process", "processblock":
		return types.KindProcess
	case "decision", "decisionblock":
		return types.KindDecision
	case "predefined process", "predefinedprocessblock":
		return types.KindSubprocess
	}
	return types.KindOther
}

// containerWords are parts of shape names and classes that hold other shapes
// (swim lanes, pools, frames, containers), which are never steps (rules 4, 7).
var containerWords = []string{"swim lane", "swimlane", "pool", "container", "frame"}

// isContainerShape reports whether a CSV shape name or a JSON class names a
// container or a group. It takes no shape library on purpose: Lucid's 2026
// export puts every flowchart shape, Process and Decision included, in the
// library "Flowchart Shapes/Containers", so a library says nothing about
// whether a shape holds others (rule 4).
func isContainerShape(name string) bool {
	n := strings.ToLower(name)
	for _, w := range containerWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return isGroupName(n)
}

// isGroupName matches the CSV's "Group N" rows.
func isGroupName(lower string) bool {
	rest, ok := strings.CutPrefix(lower, "group")
	if !ok {
		return false
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return true
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// isTextOnly reports whether a shape is text with no box: CSV Text or
// MinimalTextBlock, a JSON class containing TextBlock (rule 9).
func isTextOnly(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	return n == "text" || strings.Contains(n, "textblock")
}
