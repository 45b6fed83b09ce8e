package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/nodeconf"
	"github.com/dtree-dev/dtree/types"
)

// FormatMermaid is a Mermaid flowchart: a .mmd or .mermaid file, or the
// ```mermaid blocks of a Markdown file (readme/mermaid.md).
const FormatMermaid = "mermaid"

const mermaidHint = "fix the line in the Mermaid text (the Mermaid Live Editor, mermaid.live, shows what Mermaid makes of it); dtree reads Mermaid flowcharts as Mermaid 11 does"

// mermaidHints say what to do in Mermaid where the shared rules' hints say
// what to do in Lucid.
var mermaidHints = map[string]string{
	// import rules
	"dangling_line":          "in Mermaid, an edge's two ends are node ids: write the missing node (A --> B[Task]) or remove the edge",
	"line_to_container":      "in Mermaid, an edge to a subgraph's id runs to no step: point it at a node inside the subgraph",
	"unlabeled_branch":       "label each edge out of {id} in Mermaid: {id} -->|Yes| D or {id} -- Yes --> D; or, if the edges should all run at once, add %% dtree: {id} parallel: true",
	"duplicate_branch_label": "give each edge out of {id} a different label ({id} -->|Yes| D, {id} -->|No| E); {id} -->|Yes| D & E labels both edges Yes: to run both, lead Yes to one step marked %% dtree: STEP parallel: true, whose edges go to D & E",
	"duplicate_line":         "delete one of the two edges from the Mermaid text",
	"bidirectional_line":     "write the edge with one head, pointing the way the run goes: A --> B, not A <--> B or A o--o B",
	"ambiguous_root":         "in Mermaid, the start is the only node no edge enters: write Start([Start]) --> A and connect or delete the other nodes no edge enters (an id misspelt in an edge, Fx for Fix, is a new node: 'dtree inspect' shows it with its id as text)",
	"no_root":                "add a start node and an edge to the first step: Start([Start]) --> A",
	"ignored_empty_shape":    "give the node a task (A[Run the tests]) and connect it with an edge, or delete it",
	"empty_chart":            "write at least one node in the flowchart (flowchart TD, then A[Task])",
	"not_a_flowchart":        "dtree runs flowcharts: write Start([Start]) --> A[Task] --> B{Question?} with labelled edges (B -->|Yes| C)",
	// lint
	"branching_terminator":   "give the start one edge to a decision node (B{Question?}) and branch there",
	"end_with_outgoing_line": "remove the edge out of the end, or write the node as a step (A[Task], not A([Task])) if the run should go on",
	"decision_one_branch":    "add a labelled edge for each other answer (B -->|No| C), or write the node as a step: B[Task], not B{Task}",
	"unreachable_node":       "lead to them with an edge from a node the run reaches, or delete them",
	"loop_without_exit":      "make a node in the loop a decision (B{Done?}) with a labelled edge that leaves the loop",
}

// mermaidMaxDepth caps subgraph nesting; Mermaid lays out a handful.
const mermaidMaxDepth = 256

// FromMermaid reads a Mermaid flowchart, or the flowcharts of a Markdown
// file's ```mermaid blocks (one page each). The error is only for a
// failure to read r.
func FromMermaid(r io.Reader) (*types.Document, error) {
	return fromMermaid(r, sizeOf(r))
}

func fromMermaid(r io.Reader, size int64) (*types.Document, error) {
	var buf bytes.Buffer
	buf.Grow(int(min(size, 1<<30)) + 1)
	if _, err := io.Copy(&buf, r); err != nil {
		return nil, err
	}
	src := buf.Bytes()
	b := newBuilder(FormatMermaid)
	blocks := MermaidBlocks(src)
	if len(blocks) == 0 {
		b.errorf("malformed_mermaid", nil, 0,
			"start the file with 'flowchart TD' (or graph LR, …); in a Markdown file, put the flowchart in a ```mermaid block",
			"not a Mermaid flowchart: no text starting with 'flowchart' or 'graph', and no ```mermaid block holding one")
		return b.doc, nil
	}
	// A line holds a node and an edge, as in "A --> B[Task]".
	b.reserve(2 * (bytes.Count(src, []byte("\n")) + 1))
	mr := &mermaidReader{b: b, seen: map[string]bool{}, docKeys: map[string]string{}}
	// Ids and labels are substrings of one copy of the text.
	str := string(src)
	// A Markdown file's title is its first # heading.
	if blocks[0][0] > 0 {
		b.doc.Title = firstTitle(src[:blocks[0][0]])
	}
	line := 1
	last := 0
	for i, blk := range blocks {
		before := src[last:blk[0]]
		line += bytes.Count(before, []byte("\n"))
		last = blk[0]
		mr.block(src[blk[0]:blk[1]], str[blk[0]:blk[1]], line, i, lastHeading(before), i == len(blocks)-1)
	}
	doc := b.build()
	for _, list := range [][]types.Diagnostic{doc.Errors, doc.Warnings} {
		for i := range list {
			if h, ok := mermaidHints[list[i].Class]; ok {
				list[i].Hint = h
			}
		}
	}
	return doc, nil
}

type mermaidReader struct {
	b       *builder
	seen    map[string]bool   // ids of earlier blocks
	docKeys map[string]string // the chart's properties: the block that set each

	// One block's state.
	page     string
	first    int      // the index in b.shapes of the block's first shape
	labelled []bool   // by index in b.shapes: a label gave its text
	subs     []string // open subgraphs, innermost last
	subLines []int    // the line each open subgraph starts on
	subIDs   map[string]bool
	pairs    map[string]int // the next number of a pair's edge ids (L_A_B_)
	data     []mermaidData
	rename   map[string]string // Mermaid id -> the node's id (%% dtree: X id: …)
	renamed  map[string]string // and back, as the id lines are applied
	raw      map[string]bool   // the Mermaid ids of the block's nodes
	stopped  bool
}

type mermaidData struct {
	node, key, value string
	quoted           bool // written as a JSON string
	line             int
}

// firstTitle is the text of the first level-1 Markdown heading (# Title)
// in text, "" if none.
func firstTitle(text []byte) string {
	for pos := 0; pos < len(text); {
		l, next := lineAt(text, pos)
		pos = next
		if t, ok := bytes.CutPrefix(bytes.TrimSpace(l), []byte("# ")); ok {
			return cleanText(string(bytes.TrimSpace(bytes.TrimRight(t, "#"))))
		}
	}
	return ""
}

// lastHeading is the text of the last Markdown heading (# Title) in text,
// "" if none.
func lastHeading(text []byte) string {
	h := ""
	for pos := 0; pos < len(text); {
		l, next := lineAt(text, pos)
		pos = next
		t := bytes.TrimSpace(l)
		if len(t) > 1 && t[0] == '#' {
			t = bytes.TrimLeft(t, "#")
			if len(t) > 0 && (t[0] == ' ' || t[0] == '\t') {
				h = string(bytes.TrimSpace(bytes.TrimRight(t, "#")))
			}
		}
	}
	return cleanText(h)
}

// block reads one flowchart; first is its first line in the file, heading
// the Markdown heading above it.
func (mr *mermaidReader) block(text []byte, str string, first, pos int, heading string, last bool) {
	b := mr.b
	mr.page = strconv.Itoa(pos + 1)
	mr.first = len(b.shapes)
	mr.subs, mr.subLines = nil, nil
	mr.subIDs = map[string]bool{}
	mr.pairs = map[string]int{}
	mr.data = nil
	mr.rename = renames(text)
	mr.renamed, mr.raw = map[string]string{}, map[string]bool{}
	mr.stopped = false
	title := ""
	p := &mermaidParser{mr: mr, s: text, str: str, line: first}
	p.frontMatter(&title)
	if title != "" && pos == 0 {
		b.doc.Title = title // the first block's front matter title:
	}
	if title == "" {
		title = heading
	}
	if title == "" {
		title = "Mermaid " + mr.page
	}
	b.addPage(mr.page, title)
	p.parse()
	for _, d := range mr.data {
		mr.applyData(d)
	}
	if !last { // the ids a later block may repeat
		for i := mr.first; i < len(b.shapes); i++ {
			mr.seen[strings.TrimPrefix(b.shapes[i].ID, mr.page+":")] = true
		}
	}
}

// renames are a block's %% dtree: X id: NAME lines: node X's id is NAME,
// which Mermaid could not take as written (dtree's writer gives a node
// whose id has spaces or punctuation, or is a Mermaid keyword, an id of
// its own and this line). The first line for X counts.
func renames(text []byte) map[string]string {
	var out map[string]string
	for pos := 0; pos < len(text); {
		l, next := lineAt(text, pos)
		pos = next
		t := bytes.TrimSpace(l)
		if !bytes.HasPrefix(t, []byte("%%")) || !bytes.Contains(t, []byte(" id:")) {
			continue
		}
		d, ok, _ := parseDtreeComment(t)
		if !ok || d.node == "" || d.key != "id" || d.value == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		if _, set := out[d.node]; !set {
			out[d.node] = d.value
		}
	}
	return out
}

// docID is a Mermaid id as the document's: verbatim, unless an earlier
// block used it, then "N:" before it (N the block's number).
func (mr *mermaidReader) docID(id string) string {
	if r, ok := mr.rename[id]; ok {
		return r
	}
	if mr.seen[id] {
		return mr.page + ":" + id
	}
	return id
}

// nodeAt is the index in b.shapes of the node (not subgraph) with this
// Mermaid id in the block.
func (mr *mermaidReader) nodeAt(id string) (int, bool) {
	if mr.subIDs[id] {
		return 0, false
	}
	i, ok := mr.b.items.Get(mr.docID(id))
	return i, ok && i >= mr.first
}

// applyData sets a %% dtree: line's custom data.
func (mr *mermaidReader) applyData(d mermaidData) {
	b := mr.b
	if d.node == "" {
		if b.doc.Metadata == nil {
			b.doc.Metadata = map[string]string{}
		}
		// The first block that sets a name gives its value, of as many
		// lines as that block gives.
		if p, set := mr.docKeys[d.key]; !set || p == mr.page {
			b.doc.Metadata[d.key] = appendLine(b.doc.Metadata[d.key], d.value, set)
			mr.docKeys[d.key] = mr.page
		}
		return
	}
	i, ok := mr.nodeAt(d.node)
	if !ok {
		hint := "name a node of the flowchart: %% dtree: NODEID key: value"
		if mr.subIDs[d.node] {
			hint = "a subgraph is not a step: put the custom data on a node inside it"
		}
		b.errorf("malformed_mermaid", nil, d.line, hint, "%%%% dtree: names %q, which is no node of the flowchart", d.node)
		return
	}
	n := &b.shapes[i]
	if d.key == "id" {
		// The node's id, taken before the flowchart was read: two
		// Mermaid ids made one would be one node.
		if d.value == "" || mr.rename[d.node] != d.value {
			return // a later id line for the node: its first counts
		}
		if other, dup := mr.renamed[d.value]; dup && other != d.node {
			b.errorf("malformed_mermaid", []string{n.ID}, d.line, "give each node an id of its own",
				"%%%% dtree: gives %s the id %q, which %s has already", d.node, d.value, other)
		} else if d.value != d.node && mr.raw[d.value] && mr.rename[d.value] == "" {
			b.errorf("malformed_mermaid", []string{n.ID}, d.line, "give the node an id no other node of the flowchart has",
				"%%%% dtree: gives %s the id %q, a node's Mermaid id in the flowchart", d.node, d.value)
		}
		mr.renamed[d.value] = d.node
		return
	}
	if n.KeyLines == nil {
		n.KeyLines = map[string]int{}
	}
	if _, set := n.KeyLines[d.key]; !set {
		n.KeyLines[d.key] = d.line
	}
	if d.key == "tags" {
		n.Tags = append(n.Tags, strings.Fields(d.value)...)
		return
	}
	if n.Metadata == nil {
		n.Metadata = map[string]string{}
	}
	old, set := n.Metadata[d.key]
	n.Metadata[d.key] = appendLine(old, d.value, set)
	if !set && !knownKey(d.key) {
		// Kept, as a Lucid shape's custom data of any name is; but one
		// typo away from a key dtree acts on, it is most likely that key
		// misspelt.
		if k, ok := types.Nearest(types.FoldName(d.key), nodeconf.Keys()); ok {
			b.warnf("mermaid_comment", []string{n.ID}, d.line, "spell it "+keyName(k)+" ('dtree docs charts')",
				"node %s: custom data %q is no key dtree acts on, and is kept as data only; did you mean %s?", n.ID, d.key, keyName(k))
		}
	}
}

// knownKeyNames are the keys dtree acts on as charts.md spells them.
var knownKeyNames = []string{"cli", "validate_cli", "retry_cli", "retries", "timeout", "validate_prompt", "max_visits",
	"validate", "model", "keep_running", "max_turns", "command", "context", "paths", "rollback", "approval"}

// knownKey reports whether dtree acts on a node's custom data key (tags
// and id are the %% dtree: lines' own).
func knownKey(k string) bool {
	f := types.FoldName(k)
	return f == "tags" || f == "id" || slices.Contains(nodeconf.Keys(), f)
}

// keyName is a normalized key as charts.md spells it.
func keyName(norm string) string {
	for _, k := range knownKeyNames {
		if types.FoldName(k) == norm {
			return k
		}
	}
	return norm
}

// appendLine joins a repeated key's values as lines.
func appendLine(old, v string, set bool) string {
	if !set {
		return v
	}
	return old + "\n" + v
}

// mermaidParser reads one block's statements.
type mermaidParser struct {
	mr   *mermaidReader
	s    []byte
	str  string // s as a string, to take substrings of
	i    int
	line int
}

func (p *mermaidParser) errorf(ids []string, hint, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.mr.b.errorf("malformed_mermaid", ids, p.line, hint, "%s", msg)
}

// frontMatter reads a leading --- block (its title:) and the header.
func (p *mermaidParser) frontMatter(title *string) {
	// Blank lines and comments before the front matter.
	for {
		p.skipBlankAndComments()
		if !p.atLineStart("---") {
			return
		}
		p.nextLine()
		start, end := p.i, p.i
		for p.i < len(p.s) {
			l := p.curLine()
			end = p.i
			p.nextLine()
			if string(bytes.TrimSpace(l)) == "---" {
				break
			}
			end = p.i
		}
		if t := frontMatterTitle(p.s[start:end]); t != "" {
			*title = t
		}
	}
}

// frontMatterTitle is the title: of a Mermaid front matter, read as the
// YAML it is (title: | and a block of lines; a config:'s own keys are
// not it); "" for none, or a front matter over 64 KiB.
func frontMatterTitle(fm []byte) string {
	if len(fm) > 64<<10 || !bytes.Contains(fm, []byte("title")) {
		return ""
	}
	var v struct {
		Title any `yaml:"title"`
	}
	if yaml.Unmarshal(fm, &v) != nil {
		return ""
	}
	s, ok := v.Title.(string)
	if !ok {
		return ""
	}
	return cleanText(strings.TrimSpace(s))
}

func (p *mermaidParser) atLineStart(s string) bool {
	return bytes.Equal(bytes.TrimSpace(p.curLine()), []byte(s))
}

// curLine is the rest of the current line, without its line break.
func (p *mermaidParser) curLine() []byte {
	l, _ := lineAt(p.s, p.i)
	return l
}

func (p *mermaidParser) nextLine() {
	_, next := lineAt(p.s, p.i)
	if next > p.i && next <= len(p.s) && p.s[next-1] == '\n' {
		p.line++
	}
	p.i = next
}

// skipBlankAndComments passes blank lines and %% comment lines, reading
// the %% dtree: ones.
func (p *mermaidParser) skipBlankAndComments() {
	for p.i < len(p.s) {
		t := bytes.TrimSpace(p.curLine())
		switch {
		case len(t) == 0:
		case bytes.HasPrefix(t, []byte("%%")):
			p.comment(t)
		default:
			return
		}
		p.nextLine()
	}
}

// comment reads a %% line: "%% dtree: NODEID key: value" is a node's
// custom data, "%% dtree: key: value" the chart's. A value written as a
// JSON string ("…", as dtree's writer quotes a value of several lines,
// outer spaces, % or control characters) is the string it stands for.
func (p *mermaidParser) comment(t []byte) {
	d, ok, msg := parseDtreeComment(t)
	if msg != "" {
		p.mr.b.warnf("mermaid_comment", nil, p.line,
			"write '%% dtree: NODEID key: value' for a step's custom data, '%% dtree: key: value' for the chart's ('dtree docs mermaid')", "%s", msg)
		return
	}
	if !ok {
		return
	}
	if d.node == "" && d.key == "" {
		p.errorf(nil, "write '%% dtree: NODEID key: value' for a step's custom data, '%% dtree: key: value' for the chart's",
			"cannot read the custom data %q", clip(d.value, 80))
		return
	}
	if d.value == "" && !d.quoted {
		return
	}
	d.line = p.line
	p.mr.data = append(p.mr.data, d)
}

// parseDtreeComment reads a %% comment line t (trimmed). ok is false for
// a comment that is not dtree's; msg says why a line that looks like one
// (%% dtree A cli: x, %% dtree; …) is not read. A %% dtree: line that
// cannot be read has no key, and its text as value.
func parseDtreeComment(t []byte) (d mermaidData, ok bool, msg string) {
	rest := bytes.TrimSpace(t[2:])
	after, found := bytes.CutPrefix(rest, []byte("dtree:"))
	if !found {
		if looksLikeDtree(rest) {
			return d, false, fmt.Sprintf("%q is not read: a dtree line starts with '%%%% dtree:'", clip(string(t), 80))
		}
		return d, false, ""
	}
	rest = bytes.TrimSpace(after)
	first, tail, _ := bytes.Cut(rest, []byte(" "))
	if k, ok := bytes.CutSuffix(first, []byte(":")); ok && len(k) > 0 {
		d.key = string(k)
		d.value, d.quoted = dtreeValue(bytes.TrimSpace(tail))
		return d, true, ""
	}
	k, v, found := bytes.Cut(bytes.TrimSpace(tail), []byte(":"))
	if len(first) == 0 || !found || len(bytes.TrimSpace(k)) == 0 || bytes.ContainsAny(bytes.TrimSpace(k), " \t") {
		d.value = string(rest)
		return d, true, ""
	}
	d.node, d.key = string(first), string(bytes.TrimSpace(k))
	d.value, d.quoted = dtreeValue(bytes.TrimSpace(v))
	return d, true, ""
}

// dtreeValue is a %% dtree: line's value: a JSON string's text, else the
// text as written.
func dtreeValue(v []byte) (string, bool) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, true
		}
	}
	return string(v), false
}

// looksLikeDtree reports whether a comment's text (after %%) starts with
// "dtree" misspelt or without its colon ("dtree A cli: x", "Dtree:",
// "dtre:", "dtree :") and goes on as a dtree line would, "… key: value".
func looksLikeDtree(rest []byte) bool {
	word := rest
	if i := bytes.IndexAny(word, " \t"); i >= 0 {
		word = word[:i]
	}
	w := strings.ToLower(strings.TrimRight(string(word), ":;,.=-"))
	if w != "dtree" && !(len(w) >= 4 && len(w) <= 6 && w[0] == 'd' && typoOf(w, "dtree")) {
		return false
	}
	return bytes.Contains(rest[len(word):], []byte(":")) || bytes.HasSuffix(word, []byte(":"))
}

// typoOf reports whether a is one edit (a letter added, dropped, changed
// or two swapped) from b.
func typoOf(a, b string) bool {
	near, ok := types.Nearest(a, []string{b})
	return ok && near == b
}

// clip shortens s for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// parse reads the header and the statements.
func (p *mermaidParser) parse() {
	p.skipBlankAndComments()
	// The header: flowchart|graph [direction], maybe ";" and statements.
	l := p.curLine()
	t := bytes.TrimLeft(l, " \t")
	kw := t
	if i := bytes.IndexAny(kw, " \t;"); i >= 0 {
		kw = kw[:i]
	}
	p.i += len(l) - len(t) + len(kw)
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] != '\n' && p.s[p.i] != ';' && !bytes.HasPrefix(p.s[p.i:], []byte("%%")) {
		// Mermaid 11 takes a direction after the keyword, or nothing:
		// any other word fails its parser, and so the whole chart.
		start := p.i
		for p.i < len(p.s) && !bytes.ContainsRune([]byte(" \t\r\n;"), rune(p.s[p.i])) {
			p.i++
		}
		switch dir := string(p.s[start:p.i]); dir {
		case "TD", "TB", "BT", "RL", "LR", ">", "<", "^", "v":
		default:
			p.errorf(nil, "write one of TB, TD, BT, RL, LR after "+string(kw)+" (upper case), or nothing: Mermaid refuses the chart otherwise",
				"%s %s: %q is not a direction Mermaid knows", kw, clip(dir, 40), clip(dir, 40))
			p.restOfLine()
		}
	}
	for p.i < len(p.s) && !p.mr.stopped {
		p.statement()
	}
	if len(p.mr.subs) > 0 {
		// Name the line the subgraph opens on, not the end of the text.
		p.line = p.mr.subLines[len(p.mr.subLines)-1]
		p.errorf([]string{p.mr.subs[len(p.mr.subs)-1]}, "close every subgraph with a line 'end'",
			"subgraph %q is not closed with 'end'", p.mr.subs[len(p.mr.subs)-1])
	}
}

func (p *mermaidParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

// skipSpaceAndBreaks passes white space and line breaks: a statement
// goes on after an edge at the end of a line.
func (p *mermaidParser) skipSpaceAndBreaks() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\n':
			p.line++
		case ' ', '\t', '\r':
		default:
			return
		}
		p.i++
	}
}

// endStatement passes a statement's end: ";" or a line break.
func (p *mermaidParser) endStatement() bool {
	p.skipSpace()
	if p.i >= len(p.s) {
		return true
	}
	switch p.s[p.i] {
	case ';':
		p.i++
		return true
	case '\n':
		p.i++
		p.line++
		return true
	}
	if bytes.HasPrefix(p.s[p.i:], []byte("%%")) {
		p.restOfLine()
		return true
	}
	return false
}

// restOfLine passes the rest of the line and its break.
func (p *mermaidParser) restOfLine() {
	p.nextLine()
}

// statement reads one statement.
func (p *mermaidParser) statement() {
	p.skipSpace()
	if p.i >= len(p.s) {
		return
	}
	switch c := p.s[p.i]; {
	case c == '\n' || c == ';':
		p.endStatement()
		return
	case c == '%' && bytes.HasPrefix(p.s[p.i:], []byte("%%")):
		l := p.curLine()
		p.comment(bytes.TrimSpace(l))
		p.nextLine()
		return
	}
	word := p.peekWord()
	switch word {
	case "classDef", "class", "style", "linkStyle", "click", "direction", "accTitle", "callback", "href":
		p.restOfLine()
		return
	case "accDescr":
		rest := bytes.TrimSpace(p.curLine()[len(word):])
		if bytes.HasPrefix(rest, []byte("{")) && !bytes.Contains(rest, []byte("}")) {
			for p.i < len(p.s) && !bytes.Contains(p.curLine(), []byte("}")) {
				p.nextLine()
			}
		}
		p.restOfLine()
		return
	case "subgraph":
		p.i += len(word)
		p.subgraph()
		return
	case "end":
		after := p.i + 3
		if after >= len(p.s) || !isIDByte(p.s[after]) {
			p.i = after
			if len(p.mr.subs) == 0 {
				p.errorf(nil, "delete the 'end', or open a subgraph before it", "'end' closes no subgraph")
			} else {
				p.mr.subs = p.mr.subs[:len(p.mr.subs)-1]
				p.mr.subLines = p.mr.subLines[:len(p.mr.subLines)-1]
			}
			if !p.endStatement() {
				p.restOfLine()
			}
			return
		}
	}
	p.chain()
}

// peekWord is the word at p.i (letters), without moving.
func (p *mermaidParser) peekWord() string {
	j := p.i
	for j < len(p.s) && (p.s[j] >= 'a' && p.s[j] <= 'z' || p.s[j] >= 'A' && p.s[j] <= 'Z') {
		j++
	}
	if j < len(p.s) && isIDByte(p.s[j]) && p.s[j] != '-' {
		return ""
	}
	return p.str[p.i:j]
}

// subgraph reads "subgraph id [title]", "subgraph id" or "subgraph a title".
func (p *mermaidParser) subgraph() {
	mr := p.mr
	line := p.line
	p.skipSpace()
	l := p.curLine()
	if i := bytes.IndexByte(l, ';'); i >= 0 && !bytes.ContainsAny(l[:i], `["`) {
		l = l[:i]
	}
	text := strings.TrimSpace(string(l))
	id, title := text, ""
	if i := strings.IndexByte(text, '['); i > 0 && strings.HasSuffix(text, "]") {
		id, title = strings.TrimSpace(text[:i]), mermaidLabel(text[i+1:len(text)-1])
	} else if strings.HasPrefix(text, `"`) {
		title = mermaidLabel(text)
		id = title
	} else if strings.ContainsAny(text, " \t") {
		title = text
	}
	startLine := p.line
	p.i += len(l)
	if !p.endStatement() {
		p.restOfLine()
	}
	if id == "" {
		id = "subGraph" + strconv.Itoa(len(mr.subIDs))
	}
	if len(mr.subs) >= mermaidMaxDepth {
		p.errorf(nil, "nest fewer subgraphs", "subgraphs nest more than %d deep", mermaidMaxDepth)
		mr.stopped = true
		return
	}
	did := mr.docID(id)
	if i, ok := mr.nodeAt(id); ok {
		// A node named before its subgraph: the id is the subgraph's.
		mr.subIDs[id] = true
		n := &mr.b.shapes[i]
		n.Kind, n.Shape, n.Text, n.TextAreas = types.KindOther, "subgraph", cleanText(title), []string{}
		mr.b.flags[i].container = true
	} else if !mr.subIDs[id] {
		mr.subIDs[id] = true
		n := types.Node{ID: did, Page: mr.page, Kind: types.KindOther, Shape: "subgraph", Line: startLine,
			Text: cleanText(title), Tags: []string{}, Comments: []string{}, TextAreas: []string{}}
		if len(mr.subs) > 0 {
			n.Container = mr.docID(mr.subs[len(mr.subs)-1])
		}
		if mr.b.has(did) {
			p.errorf([]string{did}, mermaidHint, "id %q is used twice", id)
		} else {
			mr.b.addShape(shape{node: n, shapeFlags: shapeFlags{container: true}})
		}
	}
	mr.subs = append(mr.subs, id)
	mr.subLines = append(mr.subLines, line)
}

// chain reads "A --> B --> C", "A & B --> C", a lone node.
func (p *mermaidParser) chain() {
	prev, ok := p.group()
	if !ok {
		return
	}
	for {
		p.skipSpace()
		if p.endStatement() {
			return
		}
		edgeID := ""
		if id, ok := p.edgeID(); ok {
			edgeID = id
		}
		lk, ok := p.link()
		if !ok {
			p.errorf(nil, mermaidHint, "cannot read %q: expected an edge (-->), '&', or the end of the statement", clip(string(p.curLine()), 60))
			p.restOfLine()
			return
		}
		linkLine := p.line
		p.skipSpaceAndBreaks()
		if p.i >= len(p.s) {
			p.line = linkLine
			p.errorf(nil, mermaidHint, "the edge leads to no node: write its end (A --> B)")
			return
		}
		next, ok := p.group()
		if !ok {
			return
		}
		if n := len(prev) * len(next); n > maxAmpersandEdges(len(prev), len(next)) {
			// A & B --> C & D makes every pair's edge: the edges a line
			// makes stay in proportion to its length, or a 68 KB line
			// would be 9 million edges.
			p.line = linkLine
			p.errorf(nil, mermaidHint, "%d nodes & %d nodes make %d edges in one statement, more than dtree reads (%d): write the edges out, or join the nodes through one step",
				len(prev), len(next), n, maxAmpersandEdges(len(prev), len(next)))
			p.restOfLine()
			return
		}
		for _, a := range prev {
			for _, z := range next {
				p.edge(a, z, lk, edgeID)
				edgeID = "" // an id names one edge
			}
		}
		prev = next
	}
}

// mermaidLink is an edge's arrowheads and label.
type mermaidLink struct {
	heads [2]bool
	label string
}

// group reads "A", "A[text] & B(text)".
func (p *mermaidParser) group() ([]string, bool) {
	var ids []string
	for {
		p.skipSpace()
		id, ok := p.node()
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
		j := p.i
		for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
			j++
		}
		if j < len(p.s) && p.s[j] == '&' {
			p.i = j + 1
			continue
		}
		return ids, true
	}
}

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

func isIDByte(c byte) bool {
	return isWordStart(c) || c == '-' || c == '.' || c == '$' || c == '!' || c == '\'' || c == '/' || c == '*' || c == '+' || c == '#' || c == '?' || c == '^' || c == '`' || c == '\\' || c == ','
}

// nodeID reads an id: stops before an edge ("--", "-.", "==").
func (p *mermaidParser) nodeID() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '-' && p.i+1 < len(p.s) && (p.s[p.i+1] == '-' || p.s[p.i+1] == '.' || p.s[p.i+1] == '>') {
			break
		}
		if c == '`' || c == ',' {
			// A markdown string, the next id of a class line.
			break
		}
		if c == ':' && p.i+1 < len(p.s) && isIDByte(p.s[p.i+1]) && p.s[p.i+1] != ':' && p.i > start {
			// c:d is one id to Mermaid; ::: starts a class.
			p.i++
			continue
		}
		if !isIDByte(c) {
			break
		}
		p.i++
	}
	return p.str[start:p.i]
}

// node reads a node reference, with its shape and label if any, and adds
// the node at its first mention.
func (p *mermaidParser) node() (string, bool) {
	mr := p.mr
	if p.i >= len(p.s) || !isWordStart(p.s[p.i]) {
		p.errorf(nil, mermaidHint, "cannot read %q: expected a node id", clip(string(p.curLine()), 60))
		p.restOfLine()
		return "", false
	}
	line := p.line
	id := p.nodeID()
	if p.mr.rename != nil {
		p.mr.raw[id] = true
	}
	at := bytes.HasPrefix(p.s[p.i:], []byte("@{"))
	kind, shapeName, label, hasLabel, ok := p.shape(id)
	if !ok {
		p.restOfLine()
		return "", false
	}
	// :::class
	if bytes.HasPrefix(p.s[p.i:], []byte(":::")) {
		p.i += 3
		for p.i < len(p.s) && (isIDByte(p.s[p.i]) && p.s[p.i] != ',') {
			p.i++
		}
	}
	if mr.subIDs[id] {
		if hasLabel {
			p.errorf([]string{mr.docID(id)}, "give the node an id of its own: a subgraph already has this one", "%q is a subgraph's id, written here as a node", id)
		}
		return mr.docID(id), true
	}
	did := mr.docID(id)
	if i, ok := mr.nodeAt(id); ok {
		n := &mr.b.shapes[i]
		if n.Container == "" && len(mr.subs) > 0 {
			// In the first subgraph that names it, as Mermaid draws it.
			n.Container = mr.docID(mr.subs[len(mr.subs)-1])
		}
		if at {
			// A@{ shape: diam } after A[Text]: Mermaid's editors write
			// the shapes last.
			n.Kind, n.Shape = kind, shapeName
		}
		if hasLabel && !mr.labelled[i] {
			mr.labelled[i] = true
			n.Kind, n.Shape = kind, shapeName
			n.Text = label
			n.TextAreas = []string{}
			if label != "" {
				n.TextAreas = []string{label}
			}
		}
		return did, true
	}
	if mr.b.has(did) {
		p.errorf([]string{did}, mermaidHint, "id %q is used twice", id)
		return did, true
	}
	if !hasLabel {
		label = id
		if !at {
			kind, shapeName = types.KindProcess, "Process"
		}
	}
	n := types.Node{ID: did, Page: mr.page, Kind: kind, Shape: shapeName, Line: line,
		Text: label, Tags: []string{}, Comments: []string{}, TextAreas: []string{}}
	if label != "" {
		n.TextAreas = []string{label}
	}
	if len(mr.subs) > 0 {
		n.Container = mr.docID(mr.subs[len(mr.subs)-1])
	}
	i := len(mr.b.shapes)
	for len(mr.labelled) < i {
		mr.labelled = append(mr.labelled, false)
	}
	mr.labelled = append(mr.labelled, hasLabel)
	mr.b.addShape(shape{node: n})
	return did, true
}

// mermaidShapes are the bracket shapes, longest opener first: the kind,
// the name messages use, the opener and its closers.
var mermaidShapes = []struct {
	open    string
	close   []string
	kind    string
	name    string
	closeBy byte // the closer's first byte, to find it
}{
	{"(((", []string{")))"}, types.KindTerminator, "Double circle", ')'}, // Mermaid's "stop"
	{"([", []string{"])"}, types.KindTerminator, "Stadium", ']'},
	{"((", []string{"))"}, types.KindTerminator, "Circle", ')'},
	{"[[", []string{"]]"}, types.KindSubprocess, "Subroutine", ']'}, // a predefined process
	{"[(", []string{")]"}, types.KindProcess, "Database", ')'},
	{"[/", []string{"/]", "\\]"}, types.KindProcess, "Parallelogram", 0},
	{"[\\", []string{"\\]", "/]"}, types.KindProcess, "Parallelogram", 0},
	{"{{", []string{"}}"}, types.KindProcess, "Hexagon", '}'},
	{"[", []string{"]"}, types.KindProcess, "Process", ']'},
	{"(", []string{")"}, types.KindProcess, "Rounded", ')'},
	{"{", []string{"}"}, types.KindDecision, "Decision", '}'},
	{">", []string{"]"}, types.KindProcess, "Flag", ']'},
}

// shape reads what follows a node's id: a bracket shape with its label, an
// @{ … } shape, or nothing (hasLabel false). ok is false when it cannot be
// read (reported).
func (p *mermaidParser) shape(id string) (kind, name, label string, hasLabel, ok bool) {
	if bytes.HasPrefix(p.s[p.i:], []byte("@{")) {
		return p.shapeData(id)
	}
	for _, sh := range mermaidShapes {
		if !bytes.HasPrefix(p.s[p.i:], []byte(sh.open)) {
			continue
		}
		if sh.open == ">" && id == "" {
			continue
		}
		p.i += len(sh.open)
		text, ok := p.labelUntil(sh.close, id)
		if !ok {
			return "", "", "", false, false
		}
		return sh.kind, sh.name, mermaidLabel(text), true, true
	}
	return types.KindProcess, "Process", "", false, true
}

// labelUntil reads a label up to one of the closers: a "quoted" one (which
// may run over lines) or plain text on the line.
func (p *mermaidParser) labelUntil(closers []string, id string) (string, bool) {
	j := p.i
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	if j < len(p.s) && p.s[j] == '"' {
		q := bytes.IndexByte(p.s[j+1:], '"')
		if q < 0 {
			p.errorf([]string{p.mr.docID(id)}, "close the label's quote (\"…\")", "node %q: the quoted label is not closed", id)
			p.mr.stopped = true
			return "", false
		}
		end := j + 1 + q + 1
		k := end
		for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
			k++
		}
		for _, c := range closers {
			if bytes.HasPrefix(p.s[k:], []byte(c)) {
				text := p.str[j:end]
				p.line += bytes.Count(p.s[p.i:k], []byte("\n"))
				p.i = k + len(c)
				return text, true
			}
		}
		p.errorf([]string{p.mr.docID(id)}, fmt.Sprintf("end the node's label with %s right after its closing quote; a \" inside a quoted label ends it, so write a quote in it as #quot; (%s[\"say #quot;hi#quot;\"])", closers[0], id), "node %q: its label is not closed with %s", id, closers[0])
		return "", false
	}
	l := p.s[p.i:]
	best := -1
	var bc string
	for k := 0; k < len(l) && l[k] != '\n' && best < 0; k++ {
		for _, c := range closers {
			if l[k] == c[0] && bytes.HasPrefix(l[k:], []byte(c)) {
				best, bc = k, c
				break
			}
		}
	}
	if best < 0 {
		p.errorf([]string{p.mr.docID(id)}, fmt.Sprintf("end the node's label with %s on the same line, or quote it (\"…\")", closers[0]), "node %q: its label is not closed with %s", id, closers[0])
		return "", false
	}
	text := p.str[p.i : p.i+best]
	p.i += best + len(bc)
	return text, true
}

// shapeData reads A@{ shape: diamond, label: "Text" } (Mermaid 11).
func (p *mermaidParser) shapeData(id string) (kind, name, label string, hasLabel, ok bool) {
	start := p.i + 2
	j := start
	inQuote := false
	lines := 0
	for ; j < len(p.s); j++ {
		c := p.s[j]
		if c == '\n' {
			lines++
		}
		if c == '\\' && inQuote && j+1 < len(p.s) && p.s[j+1] != '\n' {
			j++
		} else if c == '"' {
			inQuote = !inQuote
		} else if c == '}' && !inQuote {
			break
		}
	}
	if j >= len(p.s) {
		p.errorf([]string{p.mr.docID(id)}, "close the node's @{ with }", "node %q: its @{ … } is not closed", id)
		p.mr.stopped = true
		return "", "", "", false, false
	}
	body := p.s[start:j]
	p.i = j + 1
	p.line += lines
	shapeName := "rect"
	for _, kv := range splitOutsideQuotes(body) {
		k, v, found := strings.Cut(kv, ":")
		if !found {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "shape":
			shapeName = strings.Trim(v, `"'`)
		case "label":
			label, hasLabel = mermaidLabel(v), true
		}
	}
	kind = types.KindProcess
	switch shapeName {
	case "diam", "diamond", "decision", "question":
		kind = types.KindDecision
	case "subproc", "subroutine", "fr-rect", "framed-rectangle", "subprocess":
		kind = types.KindSubprocess
	case "stadium", "terminal", "pill", "circle", "circ", "sm-circ", "small-circle", "start",
		"fr-circ", "framed-circle", "stop", "dbl-circ", "double-circle", "f-circ", "filled-circle":
		kind = types.KindTerminator
	case "manual":
		// Mermaid 11's Manual Operation, "a manual task" by its own
		// name: a person's step, an approval gate as Lucid's and
		// draw.io's (readme/charts.md#approval-gates). Its geometric
		// names (trap-t, inv-trapezoid, trapezoid-top) and [\…/] are
		// drawn for looks, and stay steps.
		shapeName = "Manual operation"
	}
	return kind, shapeName, label, hasLabel, true
}

// splitOutsideQuotes splits an @{ } body at commas and line breaks outside
// quotes.
func splitOutsideQuotes(b []byte) []string {
	var out []string
	inQuote := false
	start := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(b):
			i++
		case c == '"':
			inQuote = !inQuote
		case (c == ',' || c == '\n') && !inQuote:
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return append(out, string(b[start:]))
}

// mermaidLabel is a label's text: quotes and a markdown string's backticks
// taken off, Mermaid's entity codes (#quot; #35;) and HTML entities decoded,
// <br> a line break, other tags and markdown's ** and * markers removed.
func mermaidLabel(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = strings.TrimSpace(s[1 : len(s)-1])
		if strings.Contains(s, `\"`) { // an @{ label: "…" }'s escaped quote
			s = strings.ReplaceAll(s, `\"`, `"`)
		}
	}
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		s = s[1 : len(s)-1]
		s = strings.NewReplacer("**", "", "__", "").Replace(s)
		lines := strings.Split(s, "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		s = strings.Join(lines, "\n")
	}
	if strings.ContainsAny(s, "<&") {
		s = mermaidHTML(s)
	}
	// Mermaid's entity codes last: they stand for text as it is shown,
	// so #60;b#62; is the text <b>, not a tag, and #32; a space that no
	// trimming takes (dtree's writer codes a line's outer spaces so).
	if strings.IndexByte(s, '#') >= 0 {
		s = mermaidEntities(s)
	}
	return cleanText(s)
}

// mermaidHTML is a label's HTML as Mermaid shows it: each <br> a line
// break (two make a blank line), a block tag (<div>, <p>, …) a line break
// where a line is not already starting, other tags removed, entities
// decoded, and each line's outer white space, which HTML does not show,
// trimmed.
func mermaidHTML(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	atLineStart := true
	text := func(t string) {
		if t == "" {
			return
		}
		t = html.UnescapeString(t)
		out.WriteString(t)
		atLineStart = strings.HasSuffix(t, "\n")
	}
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		gt := -1
		if lt >= 0 {
			gt = strings.IndexByte(s[lt:], '>')
		}
		if lt < 0 || gt < 0 {
			text(s)
			break
		}
		text(s[:lt])
		tag := strings.ToLower(strings.TrimLeft(s[lt+1:lt+gt], "/ "))
		if i := strings.IndexAny(tag, " \t\n/"); i >= 0 {
			tag = tag[:i]
		}
		switch tag {
		case "br":
			out.WriteByte('\n')
			atLineStart = true
		case "div", "p", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6":
			if !atLineStart {
				out.WriteByte('\n')
				atLineStart = true
			}
		}
		s = s[lt+gt+1:]
	}
	lines := strings.Split(strings.ReplaceAll(out.String(), "\u00a0", " "), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "\n")
}

// mermaidEntities turns Mermaid's #name; and #35; into HTML entities, which
// stripHTML decodes; a # that starts none is kept.
func mermaidEntities(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	for {
		i := strings.IndexByte(s, '#')
		if i < 0 {
			out.WriteString(s)
			break
		}
		out.WriteString(s[:i])
		s = s[i:]
		j := 1
		for j < len(s) && j < 32 && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j > 1 && j < len(s) && s[j] == ';' {
			ent := s[1:j]
			if ent[0] >= '0' && ent[0] <= '9' {
				// The code point itself: HTML's reading of &#133; as
				// Windows-1252's … would change a text written as codes.
				r, err := strconv.Atoi(ent)
				if err != nil || !utf8.ValidRune(rune(r)) || r == 0 {
					r = utf8.RuneError
				}
				out.WriteRune(rune(r))
			} else {
				out.WriteString(html.UnescapeString("&" + ent + ";"))
			}
			s = s[j+1:]
			continue
		}
		out.WriteByte('#')
		s = s[1:]
	}
	return out.String()
}

// edgeID reads an edge's id written before it: e1@-->.
func (p *mermaidParser) edgeID() (string, bool) {
	j := p.i
	for j < len(p.s) && isWordStart(p.s[j]) || j < len(p.s) && j > p.i && p.s[j] == '-' && j+1 < len(p.s) && isWordStart(p.s[j+1]) {
		j++
	}
	if j == p.i || j+1 >= len(p.s) || p.s[j] != '@' || !strings.ContainsRune("-=<~ox.", rune(p.s[j+1])) {
		return "", false
	}
	id := p.str[p.i:j]
	p.i = j + 1
	return id, true
}

// link reads an edge: its arrowheads, its length and its label (-->|x| or
// -- x -->). ~~~ is an invisible link: a link that makes no edge.
func (p *mermaidParser) link() (mermaidLink, bool) {
	var lk mermaidLink
	s := p.s
	i := p.i
	if bytes.HasPrefix(s[i:], []byte("~~~")) {
		for i < len(s) && s[i] == '~' {
			i++
		}
		p.i = i
		lk.heads = [2]bool{false, false}
		lk.label = "\x00invisible"
		return lk, true
	}
	if i < len(s) && (s[i] == '<' || s[i] == 'o' || s[i] == 'x') && i+1 < len(s) && (s[i+1] == '-' || s[i+1] == '=') {
		lk.heads[0] = true
		i++
	}
	if i >= len(s) || (s[i] != '-' && s[i] != '=') {
		return lk, false
	}
	ch := s[i]
	dotted := ch == '-' && i+1 < len(s) && s[i+1] == '.'
	head := func(j int) int {
		if j < len(s) && (s[j] == '>' || s[j] == 'o' || s[j] == 'x') {
			if s[j] == '>' || j+1 >= len(s) || !isIDByte(s[j+1]) || s[j+1] == '-' {
				lk.heads[1] = true
				return j + 1
			}
		}
		return j
	}
	if dotted {
		j := i + 1
		for j < len(s) && s[j] == '.' {
			j++
		}
		if j < len(s) && s[j] == '-' {
			p.i = head(j + 1)
			return p.pipeLabel(lk), true
		}
		// -. text .->
		k := indexOnLine(s[j:], []byte(".-"))
		if k < 0 {
			return lk, false
		}
		lk.label = mermaidLabel(p.str[j : j+k])
		e := j + k + 1
		for e < len(s) && s[e] == '-' {
			e++
		}
		p.i = head(e)
		return p.pipeLabel(lk), true
	}
	j := i
	for j < len(s) && s[j] == ch {
		j++
	}
	if j-i < 2 {
		return lk, false
	}
	if j < len(s) && (s[j] == '>' || ((s[j] == 'o' || s[j] == 'x') && (j+1 >= len(s) || !isIDByte(s[j+1])))) {
		p.i = head(j)
		return p.pipeLabel(lk), true
	}
	if j-i >= 3 {
		p.i = j // --- or ===: no head
		return p.pipeLabel(lk), true
	}
	// -- text --> or == text ==>: the text runs to the next run of two.
	pair := []byte{ch, ch}
	k := indexOnLine(s[j:], pair)
	if k < 0 {
		return lk, false
	}
	lk.label = mermaidLabel(p.str[j : j+k])
	e := j + k
	for e < len(s) && s[e] == ch {
		e++
	}
	p.i = head(e)
	return p.pipeLabel(lk), true
}

// indexOnLine is the index of pat in s before the first line break, -1 if
// none: it reads no further than the match or the line's end, so that a
// long line of edges is read once.
func indexOnLine(s, pat []byte) int {
	for i := 0; i+len(pat) <= len(s); i++ {
		if s[i] == '\n' {
			return -1
		}
		if s[i] == pat[0] && bytes.HasPrefix(s[i:], pat) {
			return i
		}
	}
	return -1
}

// pipeLabel reads a |label| after a link.
func (p *mermaidParser) pipeLabel(lk mermaidLink) mermaidLink {
	j := p.i
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	if j < len(p.s) && p.s[j] == '|' {
		l, _ := lineAt(p.s, j+1)
		if k := bytes.IndexByte(l, '|'); k >= 0 {
			lk.label = mermaidLabel(p.str[j+1 : j+1+k])
			p.i = j + 1 + k + 1
		}
	}
	return lk
}

// edge adds an edge from a to z (document ids).
// maxAmpersandEdges is how many edges one link between a group of a
// nodes and one of z may make (a & b --> c & d: a×z): any fan from or to
// one node, and a cross of a few nodes each, which charts draw; not a
// product that grows with the square of the text.
func maxAmpersandEdges(a, z int) int {
	if a == 1 || z == 1 {
		return a * z
	}
	return 4*(a+z) + 64
}

func (p *mermaidParser) edge(a, z string, lk mermaidLink, id string) {
	mr := p.mr
	if lk.label == "\x00invisible" {
		return
	}
	if id == "" {
		// Mermaid's: L_A_B_0, then _1 for a second edge A to B.
		base := "L_" + a + "_" + z + "_"
		id = base + "0"
		if mr.b.has(id) {
			// The pair's next number, kept for pairs with several
			// edges: counting up from 1 each time would be quadratic.
			k := max(mr.pairs[base], 1)
			for id = base + strconv.Itoa(k); mr.b.has(id); id = base + strconv.Itoa(k) {
				k++
			}
			mr.pairs[base] = k + 1
		}
	} else if mr.b.has(id) {
		base := mr.page + ":" + id
		id = base
		for k := 2; mr.b.has(id); k++ {
			id = base + "-" + strconv.Itoa(k)
		}
	}
	if !lk.heads[0] && !lk.heads[1] {
		// A --- B runs from A to B, as Mermaid lays it out.
		lk.heads[1] = true
	}
	var labels []string
	if lk.label != "" {
		labels = []string{lk.label}
	}
	style := func(h bool) string {
		if h {
			return "Arrow"
		}
		return "None"
	}
	mr.b.addLine(line{id: id, page: mr.page, ends: [2]string{a, z}, labels: labels, srcLn: p.line},
		[2]string{style(lk.heads[0]), style(lk.heads[1])})
}
