package types

import "strings"

// Fork keys: custom data parallel: true makes a node a fork, and join:
// all|any says how the node where a fork's branches meet waits for them
// (readme/parallel.md). Any spelling that folds to them (FoldName) counts.
const (
	KeyParallel = "parallel"
	KeyJoin     = "join"
)

// Join modes (custom data join:).
const (
	JoinAll = "all" // the join waits for every branch (the default)
	JoinAny = "any" // the join goes on when one branch reaches it
)

// Fork is what a chart's check found out about a fork: the node where its
// branches meet and the branches themselves. It is set on the fork's node
// when the chart is loaded (chart.Check); nil on every other node.
type Fork struct {
	// Join is the id of the node where the branches meet (the fork's
	// immediate post-dominator); "" when they never meet, which lint
	// reports.
	Join string `json:"join"`
	// Branches are the fork's lines, in chart order.
	Branches []ForkBranch `json:"branches"`
}

// ForkBranch is one branch of a fork: the line that starts it and its
// name, the line's label or, when it has none, the id of its first node.
type ForkBranch struct {
	Name  string `json:"name"`
	Line  string `json:"line"`
	First string `json:"first"`
}

// MetadataValue is the value of the node's custom data key that folds to
// key (the first in sorted order, as settings take it), and whether one
// is set.
func MetadataValue(n *Node, key string) (string, bool) {
	found := ""
	set := false
	for k := range n.Metadata {
		if FoldName(k) == key && (!set || k < found) {
			found, set = k, true
		}
	}
	return n.Metadata[found], set
}

// ParseBool reads the yes/no spellings people put in custom data.
func ParseBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "y", "on", "1":
		return true, true
	case "false", "no", "n", "off", "0":
		return false, true
	}
	return false, false
}

// IsFork says whether the node's custom data marks it a fork: parallel
// set to true (or yes, on, 1). Whether a fork is well drawn is lint's to
// say (readme/parallel.md#what-lint-says).
func IsFork(n *Node) bool {
	if len(n.Metadata) == 0 {
		return false
	}
	v, ok := MetadataValue(n, KeyParallel)
	b, _ := ParseBool(v)
	return ok && b
}
