package export

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The classes MermaidOnto marks a run with: each is the name written, its
// suffix aside (OntoClasses).
const (
	ClassTaken    = "dtreeTaken"    // a node the run went through
	ClassRepeated = "dtreeRepeated" // … more than once: a thicker border
	ClassFailed   = "dtreeFailed"   // where it failed or was interrupted
	ClassStopped  = "dtreeStopped"  // where a visit, step or budget limit stopped it
)

// ontoStyles are the classes' styles, in the order they are defined and
// given. Mermaid 11 compiles a node's classes into its style in the order
// the class lines give them, a later one's property over an earlier's:
// dtree's lines come after the author's, so their colours win over the
// author's classes (not over a style line, which comes after every
// class), and dtreeRepeated's border over dtreeFailed's.
var ontoStyles = [][2]string{
	{ClassTaken, fmt.Sprintf("fill:%s,stroke:%s,stroke-width:2px", fillVisited, colorVisited)},
	{ClassStopped, fmt.Sprintf("fill:%s,stroke:%s,stroke-width:3px", fillLimit, colorLimit)},
	{ClassFailed, fmt.Sprintf("fill:%s,stroke:%s,stroke-width:3px", fillFailed, colorFailed)},
	{ClassRepeated, "stroke-width:4px"},
}

// Onto says what MermaidOnto left unmarked.
type Onto struct {
	// Missing are nodes of the run that known said the chart does not
	// have: the chart changed since the run.
	Missing []string
	// Unnamed are nodes of the run whose id a class line cannot name
	// (readme/graph.md#a-mermaid-chart): they are left as they are drawn.
	Unnamed []string
	// Suffix is what was added to the class names so that none is one
	// of the author's: "" when none was needed.
	Suffix string
}

// MermaidOnto writes src, the author's own Mermaid flowchart, then a
// block that marks t on it: a comment naming the run, classDef and class
// lines for the nodes it went through (ClassTaken), more than once
// (ClassRepeated), and the node where it failed (ClassFailed) or a limit
// stopped it (ClassStopped), a linkStyle line for the links it took, and
// a comment that ends the block (ontoEnd). A block an earlier run drawn
// on src left there is taken out first (withoutRun), so drawing on a
// drawn text is drawing on the author's. Nodes are named by their ids,
// which are the chart's (a Mermaid chart's node ids are dtree's); known,
// when not nil, says which the chart has, and the others are left out
// and listed in Missing. links are the text's links in Mermaid's order
// (MermaidLink), nil to mark none. The class names get a number when the
// author uses one of them. It reads src once and writes in time linear
// in src and t.
func MermaidOnto(w io.Writer, src []byte, t *Trace, known func(id string) bool) (Onto, error) {
	return MermaidOntoLinks(w, src, t, known, nil)
}

// MermaidLink is a link of a Mermaid text: its ends, as the text names
// them, and its label. A linkStyle line names a link by its place among
// every link of the text: each link of a chain and each pair of an "&"
// is one, in the order Mermaid 11 reads them (A & B --> C & D is A-C,
// A-D, B-C, B-D), the invisible ~~~ ones too.
type MermaidLink struct {
	From, To, Label string
}

// MermaidOntoLinks is MermaidOnto, the links it took marked by their
// place in links.
func MermaidOntoLinks(w io.Writer, src []byte, t *Trace, known func(id string) bool, links []MermaidLink) (Onto, error) {
	src = withoutRun(src)
	var res Onto
	res.Suffix = classSuffix(src)
	members := map[string][]string{}
	add := func(id, class string) {
		switch {
		case known != nil && !known(id):
			res.Missing = append(res.Missing, id)
		case !classID(id):
			res.Unnamed = append(res.Unnamed, id)
		default:
			members[class] = append(members[class], id)
		}
	}
	ids := make([]string, 0, len(t.Visits)+1)
	for id, v := range t.Visits {
		if v > 0 {
			ids = append(ids, id)
		}
	}
	if t.Stopped != "" && t.Visits[t.Stopped] == 0 {
		ids = append(ids, t.Stopped) // a limit kept the run out of it
	}
	slices.Sort(ids)
	for _, id := range ids {
		class := ClassTaken
		if t.Interrupted[id] {
			class = ClassFailed
		}
		if id == t.Stopped {
			switch t.StoppedHow {
			case "failed", "interrupted":
				class = ClassFailed
			case "limit_reached", "budget_reached", "waiting_for_approval":
				class = ClassStopped
			}
		}
		add(id, class)
		if t.Visits[id] > 1 && (known == nil || known(id)) && classID(id) {
			members[ClassRepeated] = append(members[ClassRepeated], id)
		}
	}

	nl := "\n"
	if bytes.HasSuffix(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	bw := bufio.NewWriter(w)
	bw.Write(src)
	if len(src) > 0 && src[len(src)-1] != '\n' {
		bw.WriteString(nl)
	}
	fmt.Fprintf(bw, "%%%% run %s drawn by dtree graph --run: %s", oneLine(t.RunID), strings.ReplaceAll(oneLine(t.Status), "_", " "))
	if t.Stopped != "" {
		fmt.Fprintf(bw, " at %s", oneLine(t.Stopped))
	}
	bw.WriteString(nl)
	for _, cs := range ontoStyles {
		if len(members[cs[0]]) > 0 {
			fmt.Fprintf(bw, "classDef %s%s %s%s", cs[0], res.Suffix, cs[1], nl)
		}
	}
	for _, cs := range ontoStyles {
		if m := members[cs[0]]; len(m) > 0 {
			fmt.Fprintf(bw, "class %s %s%s%s", strings.Join(m, ","), cs[0], res.Suffix, nl)
		}
	}
	if len(links) > 0 {
		keys := make([][2]string, len(links))
		labels := make([]string, len(links))
		for i, l := range links {
			keys[i], labels[i] = [2]string{l.From, l.To}, l.Label
		}
		taken := takenEdges(keys, labels, t.Steps, func(s Step) ([2]string, bool) { return [2]string{s.From, s.To}, true })
		first := true
		for i, n := range taken {
			if n == 0 {
				continue
			}
			if first {
				bw.WriteString("linkStyle ")
				first = false
			} else {
				bw.WriteByte(',')
			}
			bw.WriteString(strconv.Itoa(i))
		}
		if !first {
			fmt.Fprintf(bw, " %s%s", ontoLinkStyle, nl)
		}
	}
	bw.WriteString(ontoEnd + nl)
	return res, bw.Flush()
}

// ontoLinkStyle is the style of the links a run took; ontoEnd ends the
// block MermaidOnto writes, which starts with ontoStart.
const (
	ontoLinkStyle = "stroke:" + colorVisited + ",stroke-width:3px"
	ontoStart     = "%% run "
	ontoStartMark = " drawn by dtree graph --run: "
	ontoEnd       = "%% end of the run drawn by dtree graph --run"
)

// withoutRun is src without the blocks of runs MermaidOnto drew on it:
// from a line "%% run ID drawn by dtree graph --run: …" to the line
// ontoEnd, the lines of dtree's between them (classDef and class lines
// of its classes, linkStyle lines) taken out, any other kept; a block
// with no end (as dtree wrote before it had one) runs while its lines are
// dtree's class lines. The author's own lines are never taken out. It is
// src itself when there is no block; linear in src.
func withoutRun(src []byte) []byte {
	if !bytes.Contains(src, []byte(ontoStartMark)) {
		return src
	}
	var out []byte
	in, ended := false, false // in a block; it has an end line
	for pos := 0; pos < len(src); {
		end := bytes.IndexByte(src[pos:], '\n')
		next := len(src)
		if end >= 0 {
			next = pos + end + 1
		}
		line := src[pos:next]
		text := strings.TrimSpace(string(line))
		pos = next
		switch {
		case strings.HasPrefix(text, ontoStart) && strings.Contains(text, ontoStartMark):
			in = true
			ended = bytes.Contains(src[pos:], []byte(ontoEnd))
			continue
		case in && text == ontoEnd:
			in = false
			continue
		case in && dtreeLine(text, ended):
			continue
		case in && !ended:
			in = false
		}
		out = append(out, line...)
	}
	return out
}

// dtreeLine reports whether a line of a run's block is dtree's: a
// classDef or class line of one of its classes, or (in a block with an
// end line) a linkStyle line.
func dtreeLine(text string, ended bool) bool {
	f := strings.Fields(text)
	switch {
	case len(f) >= 2 && f[0] == "classDef":
		return ontoClass(f[1])
	case len(f) >= 3 && f[0] == "class":
		return ontoClass(f[len(f)-1])
	case len(f) >= 2 && f[0] == "linkStyle":
		return ended
	}
	return false
}

// ontoClass reports whether name is one of dtree's classes, with or
// without its number.
func ontoClass(name string) bool {
	for _, cs := range ontoStyles {
		if rest, ok := strings.CutPrefix(name, cs[0]); ok && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// classSuffix is "" when src uses none of the class names, else the
// smallest number that, added to each, makes a name src does not use. It
// reads src once: the words that start with "dtree" are gathered, and
// a number is tried against them in constant time.
func classSuffix(src []byte) string {
	used := map[string]bool{}
	for i := 0; ; {
		k := bytes.Index(src[i:], []byte("dtree"))
		if k < 0 {
			break
		}
		start := i + k
		end := start + len("dtree")
		for end < len(src) && classChar(src[end]) {
			end++
		}
		if start == 0 || !classChar(src[start-1]) {
			used[string(src[start:end])] = true
		}
		i = end
	}
	for n := 0; ; n++ {
		suffix := ""
		if n > 0 {
			suffix = strconv.Itoa(n)
		}
		clash := false
		for _, cs := range ontoStyles {
			clash = clash || used[cs[0]+suffix]
		}
		if !clash {
			return suffix
		}
	}
}

func classChar(b byte) bool {
	return b == '_' || b == '-' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// classID reports whether a class line can name the node id: Mermaid's
// parser reads it as the same id there as in a node statement. That is
// letters and digits (of any script) and _ - . / : $ ! ? ' * + # \, with
// no "--" (a link) and no "::" (the ::: of a class shorthand); a comma
// would split it in two, and the other characters open a shape, a
// string, a comment or a link.
func classID(id string) bool {
	if id == "" || !utf8.ValidString(id) || strings.Contains(id, "--") || strings.Contains(id, "::") {
		return false
	}
	switch id {
	case "end", "graph", "flowchart", "subgraph", "style", "linkStyle", "class", "classDef", "click", "interpolate":
		return false
	}
	for _, r := range id {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(`_-./:$!?'*+#\`, r) {
			return false
		}
	}
	return true
}
