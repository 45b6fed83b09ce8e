package export

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dtree-dev/dtree/types"
)

// YAML writes doc as a dtree YAML chart (readme/yaml-charts.md): one page
// with no title as top-level nodes:, else pages:. A terminator that starts
// its page is kind: start, any other kind: end; a shape is written only for
// kind other, where it says what the node is. It returns what YAML drops.
//
// The YAML is written as it goes, not built as a tree first: a 100,000
// node chart converts in about a second (readme/performance.md).
func YAML(w io.Writer, doc *types.Document) ([]string, error) {
	lost := losses{format: "YAML"}
	bw := bufio.NewWriterSize(w, 64<<10)
	y := &yamlWriter{w: bw, out: outEdges(doc), starts: roots(doc), lost: &lost}
	if doc.Title != "" {
		y.textField("", "title", doc.Title)
	}
	if c, ok := doc.Metadata["context"]; ok {
		y.textField("", "context", c)
	}
	if len(doc.Vars) > 0 {
		bw.WriteString("vars:\n")
		for _, v := range doc.Vars {
			if v.HasDefault {
				y.textField("  ", v.Name, v.Default)
			} else {
				bw.WriteString("  " + v.Name + ": null\n")
			}
		}
	}
	if len(doc.Pages) == 1 && doc.Pages[0].Title == "" {
		bw.WriteString("nodes:\n")
		if err := y.nodes(doc, doc.Pages[0].ID, "  "); err != nil {
			return nil, err
		}
	} else {
		bw.WriteString("pages:\n")
		for _, p := range doc.Pages {
			bw.WriteString("  - ")
			y.field("", "id", p.ID)
			if p.Title != "" {
				y.textField("    ", "title", p.Title)
			}
			bw.WriteString("    nodes:\n")
			if err := y.nodes(doc, p.ID, "      "); err != nil {
				return nil, err
			}
		}
	}
	return lost.list(), bw.Flush()
}

type yamlWriter struct {
	w      *bufio.Writer
	out    map[string][]*types.Edge
	starts map[string]bool
	lost   *losses
}

// nodes writes a page's nodes as a list at the given indentation.
func (y *yamlWriter) nodes(doc *types.Document, page, indent string) error {
	in := indent + "  "
	for _, n := range nodesOn(doc, page) {
		y.lost.node(n, false)
		y.w.WriteString(indent + "- ")
		y.field("", "id", n.ID)
		kind := n.Kind
		if kind == types.KindTerminator {
			kind = "end"
			if y.starts[n.ID] {
				kind = "start"
			}
		}
		y.field(in, "kind", kind)
		if n.Kind == types.KindOther && n.Shape != "" {
			y.field(in, "shape", n.Shape)
		}
		if n.Text != "" {
			y.textField(in, "text", n.Text)
		}
		meta := n.Metadata
		if c, ok := meta["command"]; ok { // written as the YAML reader prefers it
			y.textField(in, "command", c)
			meta = maps.Clone(meta)
			delete(meta, "command")
		}
		// A fork's and a join's keys are written as the YAML reader
		// prefers them too (readme/parallel.md): parallel: in place of
		// next:, join: beside the text.
		fork := types.IsFork(n)
		for k, v := range meta {
			switch types.FoldName(k) {
			case types.KeyParallel:
				if !fork {
					continue
				}
			case types.KeyJoin:
				if v = strings.ToLower(strings.TrimSpace(v)); v != types.JoinAll && v != types.JoinAny {
					continue
				}
				y.field(in, "join", v)
			default:
				continue
			}
			meta = maps.Clone(meta)
			delete(meta, k)
		}
		if len(n.Tags) > 0 {
			y.w.WriteString(in + "tags: [")
			for i, t := range n.Tags {
				if i > 0 {
					y.w.WriteString(", ")
				}
				y.w.WriteString(yamlScalar(t, true))
			}
			y.w.WriteString("]\n")
		}
		if len(meta) > 0 {
			y.w.WriteString(in + "metadata:\n")
			for _, k := range sortedKeys(meta) {
				y.textField(in+"  ", k, meta[k])
			}
		}
		if fork {
			y.forkEdges(n, in)
		} else if err := y.edges(n, in); err != nil {
			return err
		}
	}
	return nil
}

// edges writes a node's ways out: unlabelled ones under next: (one id, or
// a list), labelled ones under branches:.
func (y *yamlWriter) edges(n *types.Node, in string) error {
	var next []string
	var branches []*types.Edge
	seen := map[string]bool{}
	for _, e := range y.out[n.ID] {
		if len(e.ExtraLabels) > 0 {
			y.lost.add("line labels after the first")
		}
		if e.Label == "" {
			next = append(next, e.To)
			continue
		}
		if seen[e.Label] {
			return fmt.Errorf("node %s has two branches labelled %q, which YAML's branches: cannot hold", n.ID, e.Label)
		}
		seen[e.Label] = true
		branches = append(branches, e)
	}
	switch len(next) {
	case 0:
	case 1:
		y.field(in, "next", next[0])
	default:
		y.w.WriteString(in + "next: [")
		for i, id := range next {
			if i > 0 {
				y.w.WriteString(", ")
			}
			y.w.WriteString(yamlScalar(id, true))
		}
		y.w.WriteString("]\n")
	}
	if len(branches) > 0 {
		y.w.WriteString(in + "branches:\n")
		for _, e := range branches {
			y.field(in+"  ", e.Label, e.To)
		}
	}
	return nil
}

// forkEdges writes a fork's ways out under parallel:: a list of ids when
// no line is labelled, else a mapping of branch names (a line's label, or
// its first node's id, which names an unlabelled branch) to ids.
func (y *yamlWriter) forkEdges(n *types.Node, in string) {
	out := y.out[n.ID]
	labelled := false
	for _, e := range out {
		labelled = labelled || e.Label != ""
		if len(e.ExtraLabels) > 0 {
			y.lost.add("line labels after the first")
		}
	}
	if !labelled {
		y.w.WriteString(in + "parallel: [")
		for i, e := range out {
			if i > 0 {
				y.w.WriteString(", ")
			}
			y.w.WriteString(yamlScalar(e.To, true))
		}
		y.w.WriteString("]\n")
		return
	}
	y.w.WriteString(in + "parallel:\n")
	for _, e := range out {
		name := e.Label
		if name == "" {
			name = e.To
		}
		y.field(in+"  ", name, e.To)
	}
}

// field writes "key: value" at the given indentation, a value on one
// line.
func (y *yamlWriter) field(indent, key, value string) {
	y.w.WriteString(indent + yamlScalar(key, false) + ": " + yamlScalar(value, false) + "\n")
}

// textField is field for text: with line breaks, a literal block when it
// can be. indent is where the key starts, so not after "- ".
func (y *yamlWriter) textField(indent, key, value string) {
	y.w.WriteString(indent + yamlScalar(key, false) + ":")
	if block, ok := literalBlock(value, indent+"  "); ok {
		y.w.WriteString(" |-\n" + block)
		return
	}
	y.w.WriteString(" " + yamlScalar(value, false) + "\n")
}

// yamlScalar writes s plain when YAML reads it back as the same text (and
// as text: dtree reads every scalar as written, but words YAML 1.1 reads
// as booleans or null are quoted for other readers), else double-quoted.
// In a flow list (flow) commas and brackets need quotes too.
func yamlScalar(s string, flow bool) string {
	if plainOK(s, flow) {
		return s
	}
	return quoteYAML(s)
}

func plainOK(s string, flow bool) bool {
	switch strings.ToLower(s) {
	case "", "~", "null", "y", "yes", "n", "no", "true", "false", "on", "off", "<<":
		return false
	}
	if !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return false
	}
	if strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`", rune(s[0])) {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	if flow && strings.ContainsAny(s, ",[]{}") {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || r == '\uFEFF' {
			return false
		}
	}
	return true
}

// quoteYAML writes s as a double-quoted scalar, escaping what YAML needs
// escaped and every character that is not printable.
func quoteYAML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || unicode.IsPrint(r) && r != '\uFEFF':
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// literalBlock renders multi-line text as the body of a |- block at the
// given indentation, when a block reads back the same: printable lines
// (tabs allowed), none made only of spaces, the first not starting with
// one, no line break at the end.
func literalBlock(s, indent string) (string, bool) {
	if !strings.Contains(s, "\n") || strings.HasSuffix(s, "\n") || strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t") || !utf8.ValidString(s) {
		return "", false
	}
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if line != "" && strings.TrimLeft(line, " ") == "" {
			return "", false
		}
		for _, r := range line {
			if r != '\t' && (!unicode.IsPrint(r) || r == '\uFEFF') {
				return "", false
			}
		}
		if line != "" {
			b.WriteString(indent + line)
		}
		b.WriteByte('\n')
	}
	return b.String(), true
}
