package export

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dtree-dev/dtree/types"
)

// mermaidKeywords are the words Mermaid 11's flowchart parser, or dtree's
// reader, takes as a statement or a link target where a node id would be
// (end, style, click, …), folded to lower case: a node with such an id is
// written under another.
var mermaidKeywords = map[string]bool{"end": true, "style": true, "class": true, "classdef": true, "linkstyle": true,
	"click": true, "call": true, "href": true, "callback": true, "interpolate": true, "graph": true, "flowchart": true,
	"subgraph": true, "direction": true, "acctitle": true, "accdescr": true, "_self": true, "_blank": true,
	"_parent": true, "_top": true, "default": true}

// mermaidPlainID is an id Mermaid 11 and dtree's reader take as written.
var mermaidPlainID = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// MermaidChart writes doc as a Mermaid flowchart that dtree reads back as
// the same chart (readme/mermaid.md#convert-to-mermaid), where
// Mermaid(), the picture, numbers the nodes and keeps no custom data. Each
// node keeps its id; an id Mermaid cannot take as written (spaces,
// punctuation, a keyword such as end) is written as another and a
// "%% dtree: ID id: …" line gives the real one. Terminators are stadiums,
// decisions rhombi, predefined processes subroutines, the rest boxes;
// labels are quoted, with anything but letters, digits, spaces and plain
// punctuation written as Mermaid's entity codes (#34;) and line breaks as
// <br>, so no text ends a label or starts a statement. Tags and custom
// data are "%% dtree: ID key: value" lines, the chart's context and
// variables "%% dtree: key: value" lines, a value that is not one plain
// line per line a JSON string (with % as \u0025: no text makes a
// %%{directive}%%); the title is the front matter's. A chart of several
// pages is Markdown, a ```mermaid block per page. It returns what
// Mermaid's form drops.
func MermaidChart(w io.Writer, doc *types.Document) ([]string, error) {
	return mermaidChart(w, doc, false)
}

// MermaidMarkdown is MermaidChart as Markdown whatever the pages: a
// ```mermaid block a page, under the title and each page's as headings,
// for a .md file that GitHub draws.
func MermaidMarkdown(w io.Writer, doc *types.Document) ([]string, error) {
	return mermaidChart(w, doc, true)
}

// mermaidChart writes the chart; asMarkdown is set for a .md file, which
// is Markdown whatever the pages.
func mermaidChart(w io.Writer, doc *types.Document, asMarkdown bool) ([]string, error) {
	lost := losses{format: "Mermaid"}
	md := asMarkdown || len(doc.Pages) > 1
	starts := lucidStarts(doc, &lost)
	ids := mermaidIDs(doc, starts)
	byPage := make(map[string][]*types.Node, len(doc.Pages))
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		byPage[n.Page] = append(byPage[n.Page], n)
	}
	lines := edgesByPage(doc)
	bw := bufio.NewWriterSize(w, 64<<10)
	if md && !asMarkdown {
		lost.note("a Mermaid flowchart is one page: the chart's %d pages are written as Markdown, a ```mermaid block each, which dtree reads as its pages", len(doc.Pages))
	}
	if md && doc.Title != "" {
		bw.WriteString("# " + mermaidHeading(doc.Title) + "\n\n")
	}
	for k, p := range doc.Pages {
		if md {
			if p.Title != "" {
				bw.WriteString("## " + mermaidHeading(p.Title) + "\n\n")
			}
			bw.WriteString("```mermaid\n")
		}
		if k == 0 && doc.Title != "" {
			bw.WriteString("---\ntitle: " + dtreeQuote(doc.Title) + "\n---\n")
		}
		// A page with no title of its own reads as "Mermaid 1": nothing
		// is lost when that is the title left out.
		if k == 0 && p.Title != "" && p.Title != doc.Title && (doc.Title != "" || !md) &&
			(doc.Title != "" || p.Title != "Mermaid 1") {
			// The front matter's title is the chart's and its first
			// page's; a heading gives a later page's.
			lost.note("a Mermaid flowchart's title is its first page's too: page %s's title %q is left out", p.ID, types.Clip(p.Title, 60))
		}
		bw.WriteString("flowchart TD\n")
		if k == 0 {
			mermaidDocData(bw, doc, &lost)
		}
		startID := ""
		if starts[p.ID] {
			startID = ids.start[p.ID]
			bw.WriteString("    " + startID + "([\"Start\"])\n")
		}
		for _, n := range byPage[p.ID] {
			lost.node(n, false)
			id := ids.of[n.ID]
			open, closing := `["`, `"]`
			switch n.Kind {
			case types.KindTerminator:
				open, closing = `(["`, `"])`
			case types.KindDecision:
				open, closing = `{"`, `"}`
			case types.KindSubprocess:
				open, closing = `[["`, `"]]`
			case types.KindOther:
				lost.add("shapes other than flowchart steps (dtree reads them back as process steps)")
			}
			label := mermaidLabelText(n.Text)
			if label == "" {
				label = " " // Mermaid 11 does not parse an empty label, [""]
			}
			bw.WriteString("    " + id + open + label + closing + "\n")
			if id != n.ID {
				bw.WriteString("    %% dtree: " + id + " id: " + dtreeQuote(n.ID) + "\n")
			}
			mermaidNodeData(bw, id, n, &lost)
		}
		if startID != "" {
			bw.WriteString("    " + startID + " --> " + ids.of[p.Root] + "\n")
		}
		for _, e := range lines[p.ID] {
			from, okf := ids.of[e.From]
			to, okt := ids.of[e.To]
			if !okf || !okt {
				lost.add("edges without a node at both ends")
				continue
			}
			if len(e.ExtraLabels) > 0 {
				lost.add("edge labels after the first")
			}
			if e.Label == "" {
				bw.WriteString("    " + from + " --> " + to + "\n")
				continue
			}
			bw.WriteString("    " + from + " -->|\"" + mermaidLabelText(e.Label) + "\"| " + to + "\n")
		}
		if md {
			bw.WriteString("```\n")
			if k < len(doc.Pages)-1 {
				bw.WriteString("\n")
			}
		}
	}
	return lost.list(), bw.Flush()
}

// mermaidIDNames are the Mermaid ids of a chart's nodes, and of the
// Start terminators added before pages (lucidStarts).
type mermaidIDNames struct {
	of    map[string]string // node id -> Mermaid id
	start map[string]string // page id -> its added start's Mermaid id
}

// mermaidIDs gives each node its Mermaid id: its own when Mermaid takes it
// as written, else one made of its letters and digits that no other node
// has.
func mermaidIDs(doc *types.Document, starts map[string]bool) mermaidIDNames {
	names := mermaidIDNames{of: make(map[string]string, len(doc.Nodes)), start: map[string]string{}}
	used := make(map[string]bool, len(doc.Nodes))
	plain := func(id string) bool {
		return mermaidPlainID.MatchString(id) && !mermaidKeywords[strings.ToLower(id)]
	}
	for _, n := range doc.Nodes {
		if plain(n.ID) {
			used[n.ID] = true
		}
	}
	fresh := freshIDs(used, "_")
	for _, n := range doc.Nodes {
		if _, done := names.of[n.ID]; done {
			continue // an id twice: the chart's error, written once
		}
		if plain(n.ID) {
			names.of[n.ID] = n.ID
			continue
		}
		names.of[n.ID] = fresh(mermaidSafeID(n.ID))
	}
	for _, p := range doc.Pages {
		if starts[p.ID] {
			names.start[p.ID] = fresh("start")
		}
	}
	return names
}

// mermaidSafeID is id's letters, digits and _ (ASCII), each run of other
// characters one _, at most 40 bytes, with n_ before it when it would be
// empty or a keyword.
func mermaidSafeID(id string) string {
	var b strings.Builder
	under := false
	for _, r := range id {
		if b.Len() >= 40 {
			break
		}
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" || mermaidKeywords[strings.ToLower(s)] {
		s = "n_" + s
	}
	return s
}

// mermaidDocData writes the chart's context and variables as %% dtree:
// lines.
func mermaidDocData(bw *bufio.Writer, doc *types.Document, lost *losses) {
	if c, ok := doc.Metadata["context"]; ok && c != "" {
		writeDtreeLines(bw, "    %% dtree: context: ", c)
	}
	for _, v := range doc.Vars {
		switch {
		case !v.HasDefault:
			lost.note("a Mermaid chart's variables have a value: variable %s, which has no default, is left out; pass it with --var", v.Name)
		case v.Name == "context" || !dtreeKey(v.Name):
			lost.note("variable %q cannot be named on a %%%% dtree: line: it is left out", v.Name)
		default:
			writeDtreeLines(bw, "    %% dtree: "+v.Name+": ", v.Default)
		}
	}
}

// mermaidNodeData writes a node's tags and custom data as %% dtree: lines.
func mermaidNodeData(bw *bufio.Writer, id string, n *types.Node, lost *losses) {
	var tags []string
	for _, t := range n.Tags {
		if t == "" || strings.IndexFunc(t, unicode.IsSpace) >= 0 {
			lost.add("tags with spaces (a %% dtree: tags line is space separated)")
			continue
		}
		tags = append(tags, t)
	}
	if len(tags) > 0 {
		bw.WriteString("    %% dtree: " + id + " tags: " + dtreeQuoteIfNeeded(strings.Join(tags, " ")) + "\n")
	}
	for _, k := range sortedKeys(n.Metadata) {
		key := strings.TrimSpace(k)
		if under := strings.ReplaceAll(key, " ", "_"); under != key && n.Metadata[under] == "" {
			key = under // "Validate Prompt" is validate_prompt to dtree
		}
		if !dtreeKey(key) || key == "id" || key == "tags" {
			lost.add("custom data keys that cannot be written on a %% dtree: line (no spaces, : or %; not id or tags)")
			continue
		}
		writeDtreeLines(bw, "    %% dtree: "+id+" "+key+": ", n.Metadata[k])
	}
	if n.Step == types.StepApproval && !slices.ContainsFunc(sortedKeys(n.Metadata), func(k string) bool { return types.FoldName(k) == "approval" }) {
		// A gate by its shape (Lucid's and draw.io's Manual operation),
		// which a Mermaid box is not: the key says it.
		bw.WriteString("    %% dtree: " + id + " approval: true\n")
	}
}

// dtreeKey reports whether a key can be written on a %% dtree: line: not
// empty, printable, no white space, ':', '%' or '"'.
func dtreeKey(k string) bool {
	if k == "" || !utf8.ValidString(k) {
		return false
	}
	for _, r := range k {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || r == ':' || r == '%' || r == '"' {
			return false
		}
	}
	return true
}

// writeDtreeLines writes a value after prefix: a line per line when each
// is plain text (printable, no '%', no outer spaces, not quoted), as the
// reader joins a key's lines; else one JSON string.
func writeDtreeLines(bw *bufio.Writer, prefix, v string) {
	lines := strings.Split(v, "\n")
	for _, l := range lines {
		if !dtreePlain(l) {
			bw.WriteString(prefix + dtreeQuote(v) + "\n")
			return
		}
	}
	for _, l := range lines {
		bw.WriteString(prefix + l + "\n")
	}
}

// dtreeQuoteIfNeeded is v as written on one %% dtree: line.
func dtreeQuoteIfNeeded(v string) string {
	if dtreePlain(v) {
		return v
	}
	return dtreeQuote(v)
}

// dtreePlain reports whether a line of a value reads back as itself.
func dtreePlain(l string) bool {
	if l == "" || l != strings.TrimSpace(l) || !utf8.ValidString(l) || strings.HasPrefix(l, `"`) && strings.HasSuffix(l, `"`) {
		return false
	}
	for _, r := range l {
		if r == '%' || !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// dtreeQuote is s as a JSON string (also a YAML double-quoted one) on one
// line: quotes, backslashes, control characters, U+2028 and U+2029 and '%'
// escaped, invalid UTF-8 as U+FFFD.
func dtreeQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
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
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || r == '%' || r == 0x2028 || r == 0x2029 || r == 0x85 || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mermaidLabelText is s for a quoted Mermaid label that dtree reads back
// as s: letters, digits, spaces inside a line and plain punctuation stay,
// a line break is <br>, a line's outer white space and every other
// character (the quote, #, %, &, <, >, `, |, ;, braces, control
// characters) are entity codes (#34;), which Mermaid shows as the
// character and dtree's reader decodes last.
func mermaidLabelText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteString("<br>")
		}
		rest := strings.TrimLeftFunc(line, unicode.IsSpace)
		lead := line[:len(line)-len(rest)]
		inner := strings.TrimRightFunc(rest, unicode.IsSpace)
		trail := rest[len(inner):]
		for _, r := range lead {
			fmt.Fprintf(&b, "#%d;", r)
		}
		for _, r := range inner {
			switch {
			case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" .,:!?'()[]/+-*=_@$^~", r)):
				b.WriteRune(r)
			case r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
				b.WriteRune(r)
			default:
				fmt.Fprintf(&b, "#%d;", r)
			}
		}
		for _, r := range trail {
			fmt.Fprintf(&b, "#%d;", r)
		}
	}
	return b.String()
}

// mermaidHeading is a Markdown heading's text: one line, no # at its end.
func mermaidHeading(s string) string {
	return strings.TrimRight(strings.TrimSpace(oneLine(s)), "#")
}
