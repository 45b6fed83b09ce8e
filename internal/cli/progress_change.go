package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dtree-dev/dtree/internal/ci"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// What each step changed in the working tree, in the progress
// (readme/workspace.md#what-each-step-changed).

// changed is what a step did to the working tree, for the end of its
// line: " · 3 files +40 −2"; "" when it changed nothing or checkpoints
// are off (readme/workspace.md).
func changed(c *types.Change) string {
	if c.Empty() {
		return ""
	}
	return " · " + ci.ChangeBrief(c)
}

// endLine prints a step's last line and what it changed: on the line
// when the terminal's width is not known or it fits, else on a line of
// its own under it, so that the change never pushes a line that fitted
// into wrapping.
func (p *progress) endLine(line, change string) {
	if change == "" || p.quiet {
		p.printf("%s\n", line)
		return
	}
	if w := p.width(); w > 0 && textWidth(line+change) >= w {
		p.printf("%s\n  %s\n", line, strings.TrimPrefix(change, " "))
		return
	}
	p.printf("%s%s\n", line, change)
}

// pathsShown bounds the files -v lists under a step: the checkpoints
// have them all (dtree diff).
const pathsShown = 10

// changedPaths are the lines -v prints under a step that changed files:
// one a file, at most pathsShown, then how many more.
func changedPaths(c *types.Change, mask func(string) string) string {
	var b strings.Builder
	for i, pc := range c.Paths {
		if i == pathsShown {
			break
		}
		b.WriteString("    " + mask(ci.PathLine(pc)) + "\n")
	}
	if more := c.Files - min(len(c.Paths), pathsShown); more > 0 {
		fmt.Fprintf(&b, "    … %s, not shown (dtree diff lists them)\n", ci.MoreFiles(more))
	}
	return b.String()
}

// WorkspaceOff says that the run's checkpoints stopped, git having
// failed: once, even with --quiet, as warnings are.
func (p *progress) WorkspaceOff(reason string) {
	p.notice("dtree: warning: " + reason)
}

// runChanged is the lines that end a run with what it changed and how
// to see it, one line where it fits the terminal, else two; none when
// checkpoints were off.
func (p *progress) runChanged(s *run.Summary) {
	if s.Change == nil {
		return
	}
	if s.Change.Empty() {
		p.printf("changed: nothing\n")
		return
	}
	brief, hint := "changed: "+ci.ChangeBrief(s.Change), "dtree diff "+s.RunID
	if s.Logs.Dir != "" {
		// The log directory, when not the default, as the resume hints
		// name it: the line finds the run pasted as printed.
		if d := filepath.Dir(s.Logs.Dir); filepath.Clean(d) != filepath.Clean(types.DefaultLogDir) {
			hint = types.ShellJoin([]string{"dtree", "diff", s.RunID, "--log-dir", d})
		}
	}
	if line := brief + " · " + hint; p.width() == 0 || textWidth(line) < p.width() {
		p.printf("%s\n", line)
		return
	}
	p.printf("%s\n  %s\n", brief, hint)
}
