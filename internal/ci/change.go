package ci

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// ChangeBrief says a change of the working tree in short (readme/
// workspace.md): "3 files +40 −2"; "no change" for none.
func ChangeBrief(c *types.Change) string {
	if c.Empty() {
		return "no change"
	}
	return fmt.Sprintf("%s +%s −%s", types.Plural(c.Files, "file"), types.Thousands(int64(c.Added)), types.Thousands(int64(c.Removed)))
}

// PathText is a changed file's path as a line of text can hold it: as it
// is, or quoted as a Go string when it has a line break, a control
// character or bytes that are not UTF-8 (a file name may have any).
func PathText(p string) string {
	if utf8.ValidString(p) && !strings.ContainsFunc(p, unicode.IsControl) {
		return p
	}
	return strconv.Quote(p)
}

// PathLine is one file of a change: its status letter, its path and its
// lines, "M internal/x.go +3 −1"; a binary file says so.
func PathLine(p types.PathChange) string {
	lines := fmt.Sprintf("+%d −%d", p.Added, p.Removed)
	if p.Binary {
		lines = "binary"
	}
	return p.Status + " " + PathText(p.Path) + " " + lines
}

// maxCasePaths bounds the paths a JUnit case lists.
const maxCasePaths = 20

// ChangeLines says a change, then its files one a line, at most max of
// them, and how many more; "" when c is nil (no checkpoints).
func ChangeLines(c *types.Change, max int, indent string) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("changed: " + ChangeBrief(c) + "\n")
	for i, p := range c.Paths {
		if i == max {
			break
		}
		b.WriteString(indent + PathLine(p) + "\n")
	}
	if more := c.Files - min(len(c.Paths), max); more > 0 {
		fmt.Fprintf(&b, "%s… %s\n", indent, MoreFiles(more))
	}
	return b.String()
}

// maxSummaryPaths bounds the files the job summary lists for one step.
const maxSummaryPaths = 10

// changeSummary is the job summary's section on what the steps changed
// in the working tree: one item a step that changed any file, its files
// as code, at most maxRows steps and maxSummaryPaths files each; "" when
// no step changed a file.
func changeSummary(sum *run.Summary, s Summary) string {
	var b strings.Builder
	rows := 0
	for i := range sum.Nodes {
		n := &sum.Nodes[i]
		if n.Change.Empty() {
			continue
		}
		if rows == maxRows {
			b.WriteString("\nMore steps' changes are in short.json and events.jsonl.\n")
			break
		}
		rows++
		var files []string
		for j, p := range n.Change.Paths {
			if j == maxSummaryPaths {
				break
			}
			files = append(files, p.Status+" "+code(s.mask(types.Excerpt(PathText(p.Path), maxName))))
		}
		fmt.Fprintf(&b, "- %d %s: %s: %s", sum.NodesLeftOut+i+1, md(s.mask(types.Excerpt(CaseName(n), maxName))),
			md(ChangeBrief(n.Change)), strings.Join(files, ", "))
		if more := n.Change.Files - len(files); more > 0 {
			fmt.Fprintf(&b, " and %s more", types.Thousands(int64(more)))
		}
		b.WriteString("\n")
	}
	if rows == 0 {
		return ""
	}
	return "**Changes**\n\n" + b.String() + "\n"
}

// MoreFiles counts the files a list leaves out: "1 more file", "99,990
// more files".
func MoreFiles(n int) string {
	if n == 1 {
		return "1 more file"
	}
	return types.Thousands(int64(n)) + " more files"
}
