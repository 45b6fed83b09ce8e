// Package vars finds and expands the {{…}} references of node text
// (readme/context.md#variables): {{var.NAME}}, {{node.ID.FIELD}},
// {{run.id}} and {{run.workdir}}. Only these namespaces are references;
// any other {{…}} is left as written, so templates inside prompts
// survive. Spaces just inside the braces are allowed ({{ var.NAME }}).
// In a command, a reference is never pasted: ParseCommand finds the
// quoting it stands in and Command.Script passes its value in a
// variable (readme/context.md#in-a-command).
package vars

import (
	"regexp"
	"strings"
)

// Namespaces of a reference.
const (
	NSVar  = "var"
	NSNode = "node"
	NSRun  = "run"
)

// NodeFields are what {{node.ID.FIELD}} may ask of a step that ran
// before: a process step's comments, a decision's or a gate's answer,
// any step's output (its final text), a command step's exit_code, an
// approval gate's reason.
var NodeFields = []string{"comments", "answer", "output", "exit_code", "reason"}

// RunFields are the fields of {{run.FIELD}}.
var RunFields = []string{"id", "workdir"}

// Ref is one reference in a text.
type Ref struct {
	Start, End int    // text[Start:End] is the reference, braces included
	Raw        string // as written: "{{var.branch}}"
	NS         string // NSVar, NSNode or NSRun
	Name       string // the variable's name, the node's id, or the run field
	Field      string // the node's field; "" for var and run
}

// maxRef bounds a reference's length: a node id of a few hundred bytes
// is the longest anyone writes, and a bound keeps a text of megabytes of
// "{{" linear to scan.
const maxRef = 1 << 10

var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidName reports whether name can be a variable's name: a letter or
// underscore, then letters, digits and underscores.
func ValidName(name string) bool { return validName.MatchString(name) }

// Scan calls fn with each reference in text, in order. Its time is linear
// in the text.
func Scan(text string, fn func(Ref)) {
	closeAt := -1 // the next "}}" at or after the cursor, -1 when unsearched
	for i := 0; ; {
		j := strings.Index(text[i:], "{{")
		if j < 0 {
			return
		}
		start := i + j
		if closeAt < start+2 {
			k := strings.Index(text[start+2:], "}}")
			if k < 0 {
				return // no "}}" after this: no reference either
			}
			closeAt = start + 2 + k
		}
		if closeAt-start <= maxRef {
			if r, ok := parse(text[start+2 : closeAt]); ok {
				r.Start, r.End, r.Raw = start, closeAt+2, text[start:closeAt+2]
				fn(r)
				i = closeAt + 2
				continue
			}
		}
		i = start + 1 // "{{{var.x}}": the reference may start one later
	}
}

// parse reads the inside of a {{…}} as a reference.
func parse(in string) (Ref, bool) {
	in = strings.TrimSpace(in)
	ns, rest, ok := strings.Cut(in, ".")
	if !ok || rest == "" {
		return Ref{}, false
	}
	switch ns {
	case NSVar, NSRun:
		if !ValidName(rest) {
			return Ref{}, false
		}
		return Ref{NS: ns, Name: rest}, true
	case NSNode:
		// The id may hold dots; the field is after the last one.
		k := strings.LastIndexByte(rest, '.')
		if k <= 0 || k == len(rest)-1 || strings.ContainsAny(rest, "{}\n") {
			return Ref{}, false
		}
		return Ref{NS: NSNode, Name: rest[:k], Field: rest[k+1:]}, true
	}
	return Ref{}, false
}

// Refs is every reference in text.
func Refs(text string) []Ref {
	var refs []Ref
	Scan(text, func(r Ref) { refs = append(refs, r) })
	return refs
}

// Expand replaces each reference in text with what value gives for it;
// a reference value has no answer for (ok false) stays as written.
func Expand(text string, value func(Ref) (string, bool)) string {
	var b strings.Builder
	last := 0
	Scan(text, func(r Ref) {
		v, ok := value(r)
		if !ok {
			return
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:r.Start])
		b.WriteString(v)
		last = r.End
	})
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}
