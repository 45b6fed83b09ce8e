package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// Environment the parent sets for the replay child.
const (
	EnvPlan    = "DTREE_REPLAY_PLAN" // the plan file in the run directory
	EnvNode    = "DTREE_NODE_ID"     // set for every agent call
	EnvPurpose = "DTREE_PURPOSE"     // "run" or "validate", set for every agent call
)

// Serve is `dtree agent replay`: it prints the next reply of the node named
// by DTREE_NODE_ID and moves the node's cursor on. A node with no reply
// left is an error naming the node and the answers file. It returns the
// exit status.
func Serve(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "replay: "+format+"\n", args...)
		return 1
	}
	// The prompt is not needed, but the parent writes it whole; taking it
	// keeps a long one from meeting a closed pipe.
	_, _ = io.Copy(io.Discard, stdin)
	planPath := getenv(EnvPlan)
	if planPath == "" {
		fmt.Fprintln(stderr, "replay: this is dtree's offline agent; it runs inside `dtree run CHART --answers FILE`")
		return 2
	}
	plan, err := readPlan(planPath)
	if err != nil {
		return fail("read the plan: %v", err)
	}
	id, purpose := getenv(EnvNode), getenv(EnvPurpose)
	node := plan.Nodes[id]
	switch {
	case node == nil:
		return fail("node %s has no replies in %s; add a list under %q", id, plan.Answers, id)
	case len(node.Replies) == 0:
		return fail("node %s %q has no replies in %s; add a list under %q", id, types.Excerpt(node.Text, 60), plan.Answers, id)
	}
	used, err := readState(planPath + ".state")
	if err != nil {
		return fail("read the replay state: %v", err)
	}
	n := used[id]
	if n >= len(node.Replies) {
		spent := fmt.Sprintf("its %d replies (line %d) are used", len(node.Replies), node.Line)
		if len(node.Replies) == 1 {
			spent = fmt.Sprintf("its one reply (line %d) is used", node.Line)
		}
		return fail("node %s %q has no reply left in %s: %s; add one for this %s call",
			id, types.Excerpt(node.Text, 60), plan.Answers, spent, purposeName(purpose))
	}
	used[id] = n + 1
	if err := writeState(planPath+".state", used); err != nil {
		return fail("write the replay state: %v", err)
	}
	out, errText := Render(node.Replies[n].Text, node.Decision, purpose == "validate")
	if errText != "" {
		fmt.Fprintln(stderr, errText)
		return 1
	}
	_, _ = io.WriteString(stdout, out+"\n")
	return 0
}

// Render turns a reply into what an agent would print. Shorthands:
// "ok" (completed, or validation passed), "fail: why" (not completed, or
// validation failed with why as its warning), "error: why" (the call
// fails: errText is set), "raw: text" (text printed exactly, however it
// reads: how answers.yaml records a reply that did not parse). A JSON
// object is printed as written; a decision's other replies are its
// answer; other text is printed as is, as an agent's prose would be.
func Render(reply string, decision, validation bool) (out, errText string) {
	t := strings.TrimSpace(reply)
	lower := strings.ToLower(t)
	switch {
	case strings.HasPrefix(lower, "raw:"):
		return strings.TrimPrefix(t[len("raw:"):], " "), ""
	case strings.HasPrefix(lower, "error:"):
		return "", strings.TrimSpace(t[len("error:"):])
	case strings.HasPrefix(t, "{"):
		return t, ""
	case decision && !validation:
		b, _ := json.Marshal(map[string]string{"answer": t})
		return string(b), ""
	case lower == "ok" && validation:
		return `{"fully_completed": true}`, ""
	case lower == "ok":
		return `{"completed": true}`, ""
	case strings.HasPrefix(lower, "fail:") && validation:
		b, _ := json.Marshal(map[string]any{"fully_completed": false, "should_retry": true,
			"warnings": []string{strings.TrimSpace(t[len("fail:"):])}})
		return string(b), ""
	case strings.HasPrefix(lower, "fail:"):
		b, _ := json.Marshal(map[string]any{"completed": false, "comments": []string{strings.TrimSpace(t[len("fail:"):])}})
		return string(b), ""
	}
	return reply, ""
}

func purposeName(p string) string {
	if p == "validate" {
		return "validation"
	}
	return "run"
}

func readState(path string) (map[string]int, error) {
	used := map[string]int{}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return used, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &used); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return used, nil
}

// writeState replaces the state file in one rename: calls are one at a
// time, and one killed mid-write leaves the old state.
func writeState(path string, used map[string]int) error {
	b, err := json.Marshal(used)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
