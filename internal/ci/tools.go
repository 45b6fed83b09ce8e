package ci

import (
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// toolText is a tool call on one line, shortened to max runes, with
// "(unfinished)" when it still ran as its call ended.
func toolText(t run.ToolUse, max int) string {
	s := types.Excerpt(strings.TrimSpace(t.Tool+" "+t.Arg), max)
	if t.Status == "unfinished" {
		s += " (unfinished)"
	}
	return s
}

// toolMark is a tool call's status as a sign.
func toolMark(status string) string {
	switch status {
	case "ok":
		return "✓"
	case "error":
		return "✗"
	}
	return "…" // unfinished, running
}

// ToolLines says a visit's tool calls and the files they changed, as
// the agents' streams told them (readme/ci.md): how many, the newest few,
// one a line, and the files; "" for a visit without any.
func ToolLines(n *run.NodeResult) string {
	if n.ToolCalls == 0 && len(n.Files) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s", types.Plural(n.ToolCalls, "tool call"))
	if len(n.Tools) < n.ToolCalls {
		fmt.Fprintf(&b, ", the last %d", len(n.Tools))
	}
	b.WriteString(":\n")
	for _, t := range n.Tools {
		fmt.Fprintf(&b, "  %s %s\n", toolMark(t.Status), toolText(t, 200))
	}
	if f := Files(n); f != "" {
		b.WriteString("files changed: " + f + "\n")
	}
	return b.String()
}

// Files names the files a visit's tools wrote, and how many more writes
// there were past the ones named; "" for none.
func Files(n *run.NodeResult) string {
	if len(n.Files) == 0 {
		return ""
	}
	s := strings.Join(n.Files, ", ")
	if n.FilesLeftOut > 0 {
		s += fmt.Sprintf(" (and %s not named)", types.Plural(n.FilesLeftOut, "write"))
	}
	return s
}

// toolSummary is the job summary's section on the steps' tool calls: one
// item a step that made any, at most maxRows.
func toolSummary(sum *run.Summary, s Summary) string {
	var b strings.Builder
	rows := 0
	for i := range sum.Nodes {
		n := &sum.Nodes[i]
		if n.ToolCalls == 0 && len(n.Files) == 0 {
			continue
		}
		if rows == maxRows {
			b.WriteString("\nMore steps' tool calls are in short.json and events.jsonl.\n")
			break
		}
		rows++
		var last []string
		for _, t := range n.Tools {
			last = append(last, toolMark(t.Status)+" "+code(s.mask(toolText(t, 100))))
		}
		fmt.Fprintf(&b, "- %d %s: %s", sum.NodesLeftOut+i+1, md(s.mask(types.Excerpt(CaseName(n), maxName))), types.Plural(n.ToolCalls, "tool call"))
		if len(last) > 0 {
			what := "the last"
			if len(last) == n.ToolCalls {
				what = ""
			}
			fmt.Fprintf(&b, "%s%s: %s", map[bool]string{true: ", ", false: ""}[what != ""], what, strings.Join(last, ", "))
		}
		if len(n.Files) > 0 {
			var files []string
			for _, f := range n.Files {
				files = append(files, code(s.mask(types.Excerpt(f, maxName))))
			}
			fmt.Fprintf(&b, "; files changed: %s", strings.Join(files, ", "))
			if n.FilesLeftOut > 0 {
				fmt.Fprintf(&b, " (and %s not named)", types.Plural(n.FilesLeftOut, "write"))
			}
		}
		b.WriteString("\n")
	}
	if rows == 0 {
		return ""
	}
	return "**Tool calls**\n\n" + b.String() + "\n"
}
