package prompts

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

//go:embed context.txt
var runSoFarHeading string

// RunSoFarBytes bounds the run-so-far section of a prompt
// (readme/context.md#the-run-so-far).
const RunSoFarBytes = 8 << 10

// Step is a finished step as the run so far shows it.
type Step struct {
	Node   string
	Text   string // the node's text; its first line is shown
	Kind   string // "process", "decision", "command" or "approval"
	Status string // "succeeded", "failed", …
	// A process step's comments; a decision's answer and reasons; a
	// command's command, exit status and the end of its output.
	Comments []string
	Answer   string
	Reasons  []string
	Command  string
	ExitCode int
	Output   string
}

// The bounds of what one entry shows: a node's text is its first line,
// and a command's output its last lines.
const (
	maxStepText    = 200
	maxOutputLines = 20
)

// RunSoFar is the run-so-far section for a step after n finished ones,
// step(0) the oldest, or "" when n is 0. It holds at most max bytes: the
// newest steps are kept whole and older ones cut first, to their heading
// line, then left out with a line that says how many. A newest step that
// alone is larger than max keeps its beginning and end. It is built from
// the newest step back and stops when max is spent, so its cost grows with
// max, not with the run.
func RunSoFar(n int, step func(i int) Step, max int) string {
	return (*Entries)(nil).RunSoFar(n, step, max)
}

// Entries keeps what RunSoFar renders of each step, so that a run renders
// a finished step once, not again in the prompt of every step after it
// (readme/performance.md#running-a-chart). Its zero value is ready. One
// Entries serves one numbering of steps and one bound: step(i) must be the
// same step, shown as step i+1, and max the same, in every call given it.
// It keeps only the newest steps a section can show, each within the
// section's bound, so what it holds does not grow with the run; a nil
// *Entries keeps nothing.
type Entries struct {
	first int // the index of items[0]
	items []rendered
}

// minEntry is less than the fewest bytes a step takes in a section: its
// heading line ("### Step 1: node  \"\" ()") and the line between entries.
const minEntry = 20

// rendered is one step's entry and its heading line. The entry is cut at
// the section's bound, like any entry cut at a limit it is then longer
// than the limit, and a section never has room for it whole.
type rendered struct{ whole, head string }

// get is step i's entry, whole, and its heading line.
func (m *Entries) get(i int, step func(i int) Step, max int) rendered {
	if m != nil && i >= m.first && i-m.first < len(m.items) && m.items[i-m.first].head != "" {
		return m.items[i-m.first]
	}
	s := step(i)
	r := rendered{whole: entry(i+1, s, max), head: heading(i+1, s) + "\n"}
	if m == nil || i < m.first {
		return r
	}
	for i-m.first >= len(m.items) {
		m.items = append(m.items, rendered{})
	}
	m.items[i-m.first] = r
	return r
}

// keepFrom forgets the steps before index i.
func (m *Entries) keepFrom(i int) {
	if m == nil || i <= m.first {
		return
	}
	drop := min(i-m.first, len(m.items))
	m.items = append(m.items[:0], m.items[drop:]...)
	m.first = i
}

// RunSoFar is RunSoFar, each step rendered once across the calls given m.
func (m *Entries) RunSoFar(n int, step func(i int) Step, max int) string {
	if n <= 0 {
		return ""
	}
	head := strings.TrimSpace(runSoFarHeading) + "\n\n"
	const leftOutRoom = 64 // "… 123456 earlier steps are left out.\n\n"
	budget := max - len(head) - leftOutRoom
	if budget <= 0 {
		return ""
	}
	var entries []string // newest first
	short := false       // an entry did not fit whole: the older ones are headings only
	i := n - 1
	for ; i >= 0 && budget > 0; i-- {
		r := m.get(i, step, max)
		e := ""
		if !short {
			// An entry cut to a limit is longer than the limit, so one
			// that fits is the whole entry.
			e = r.whole
			if len(e) > budget {
				if len(entries) > 0 {
					short, e = true, ""
				} else { // the newest alone: its beginning and its end
					e = cutMiddle(entry(i+1, step(i), budget), budget)
				}
			}
		}
		if short {
			e = r.head
			if len(e) > budget {
				break
			}
		}
		entries = append(entries, e)
		budget -= len(e) + 1
	}
	// A section shows at most max/minEntry steps, so those before the
	// newest max/minEntry are never shown again.
	m.keepFrom(n - max/minEntry)
	var b strings.Builder
	size := len(head) + leftOutRoom
	for _, e := range entries {
		size += len(e) + 1
	}
	b.Grow(size) // once, not doubling up to 8 KiB for every prompt
	b.WriteString(head)
	if i >= 0 {
		fmt.Fprintf(&b, "… %d earlier %s left out.\n\n", i+1, types.Choose(i+1, "step is", "steps are"))
	}
	for k := len(entries) - 1; k >= 0; k-- {
		b.WriteString(entries[k])
		if k > 0 {
			b.WriteByte('\n')
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// heading is an entry's first line: which step, which node, how it ended.
func heading(k int, s Step) string {
	text, _, _ := strings.Cut(s.Text, "\n")
	text = types.HeadBytes(strings.TrimSpace(text), maxStepText)
	what := s.Kind
	switch {
	case s.Kind == "command":
		what = fmt.Sprintf("command, exit status %d", s.ExitCode)
		if s.Status != "succeeded" && s.Status != "" {
			what += ", " + s.Status
		}
	case s.Status != "":
		what += ", " + s.Status
	}
	return fmt.Sprintf("### Step %d: node %s %q (%s)", k, s.Node, text, what)
}

// entry is one step, whole, or cut once it is longer than limit (the
// caller sees it is).
func entry(k int, s Step, limit int) string {
	var b strings.Builder
	b.WriteString(heading(k, s) + "\n")
	list := func(name string, items []string) {
		if len(items) == 0 {
			return
		}
		b.WriteString(name + ":\n")
		for _, it := range items {
			if b.Len() > limit {
				return
			}
			b.WriteString("- " + types.HeadBytes(it, limit) + "\n")
		}
	}
	// What the step left, whatever its kind: a command, an answer (a
	// decision's, a gate's), or comments.
	switch {
	case s.Command != "":
		b.WriteString("Command: " + types.HeadBytes(s.Command, limit) + "\n")
		if out := types.LastLines(s.Output, maxOutputLines, limit); strings.TrimSpace(out) != "" {
			b.WriteString("Output, last lines:\n" + out + "\n")
		}
	case s.Answer != "" || len(s.Reasons) > 0 || s.Kind == types.RoleDecision:
		if s.Answer != "" {
			b.WriteString("Answer: " + types.HeadBytes(s.Answer, limit) + "\n")
		}
		list("Reasons", s.Reasons)
	default:
		list("Comments", s.Comments)
	}
	return b.String()
}

// cutMiddle keeps s's beginning and end within max bytes.
func cutMiddle(s string, max int) string {
	const mark = "\n… (cut) …\n"
	if len(s) <= max {
		return s
	}
	if max <= len(mark) {
		return types.HeadBytes(s, max)
	}
	keep := max - len(mark)
	return types.HeadBytes(s, keep/2) + mark + types.TailBytes(s, keep-keep/2)
}
