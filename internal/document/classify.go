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
	if types.DrawnStep(shape) != "" {
		// A shape a step kind is drawn with (types.StepInfo.Drawn):
		// Manual operation, a person's step, an approval gate.
		return types.KindProcess
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

// diagramKinds are the kinds of Lucid diagram that are not flowcharts, by
// what their shapes are called once lowercased with spaces and
// underscores taken out: the JSON classes (IntelligentMindMapNodeBlock,
// IntelligentMindMapRootNodeBlock, TreeNodeBlock for org charts,
// UMLClassBlock, ERDEntityBlock4, BPMNActivity, NET_Router, icons like
// EC2InstanceAWS2024) and the CSV's library and name ("UML Class",
// "Entity Relationship Entity"). A chart that is not a flowchart is named
// by its kind, the way a user calls it, not by Lucid's class names (rule 8).
var diagramKinds = []struct {
	prefix, contains string
	name             string
}{
	{contains: "mindmap", name: "a mind map"},
	{contains: "orgchart", name: "an org chart"},
	{prefix: "treenode", name: "an org chart"},
	{prefix: "uml", name: "a UML diagram"},
	{prefix: "erd", name: "an entity-relationship diagram"},
	{prefix: "entityrelationship", name: "an entity-relationship diagram"},
	{prefix: "bpmn", name: "a BPMN diagram"},
	{prefix: "net", name: "a network diagram"},
	{contains: "aws", name: "a cloud architecture diagram"},
	{contains: "azure", name: "a cloud architecture diagram"},
	{contains: "gcp", name: "a cloud architecture diagram"},
}

// diagramKind names the kind of diagram a shape belongs to ("a mind
// map"), "" when the shape says nothing of it (a Text, a Note).
func diagramKind(shape string) string {
	s := strings.NewReplacer(" ", "", "_", "", "-", "").Replace(strings.ToLower(shape))
	for _, k := range diagramKinds {
		if k.prefix != "" && strings.HasPrefix(s, k.prefix) || k.contains != "" && strings.Contains(s, k.contains) {
			return k.name
		}
	}
	return ""
}

// readableShape turns a JSON class into words: IntelligentMindMapNodeBlock
// is "Mind Map Node", UMLClassBlock "UML Class", ERDEntityBlock4 "ERD
// Entity", NET_Router "NET Router". A CSV shape name, already words, stays
// as it is.
func readableShape(class string) string {
	if strings.ContainsRune(class, ' ') {
		return class
	}
	rs := []rune(strings.ReplaceAll(class, "_", " "))
	var b strings.Builder
	for i, r := range rs {
		if i > 0 && isUpper(r) && rs[i-1] != ' ' &&
			(isLower(rs[i-1]) || isDigit(rs[i-1]) || i+1 < len(rs) && isLower(rs[i+1])) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	words := strings.Fields(b.String())
	if len(words) == 0 {
		return class
	}
	if len(words) > 1 && words[0] == "Intelligent" { // Lucid's name for its mind map shapes
		words = words[1:]
	}
	last := strings.TrimRight(words[len(words)-1], "0123456789")
	switch {
	case len(words) > 1 && (last == "Block" || last == ""):
		words = words[:len(words)-1]
	case last != "":
		words[len(words)-1] = last
	}
	return strings.Join(words, " ")
}

func isUpper(r rune) bool { return r >= 'A' && r <= 'Z' }
func isLower(r rune) bool { return r >= 'a' && r <= 'z' }
func isDigit(r rune) bool { return r >= '0' && r <= '9' }
