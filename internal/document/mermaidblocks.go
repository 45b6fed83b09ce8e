package document

import (
	"bytes"
	"regexp"
)

// MermaidBlocks are the byte ranges [start,end) of the Mermaid flowcharts
// of src, in file order (index i is --page i+1). A Markdown file's are the
// bodies of its ```mermaid (or ~~~mermaid) fenced blocks whose diagram is a
// flowchart; a Mermaid file's (.mmd, .mermaid), whose text is a flowchart
// itself, is the whole text. A body runs from the line after the opening
// fence to the start of the closing fence's line, or to the end of src when
// the block is not closed (as CommonMark reads it).
func MermaidBlocks(src []byte) [][2]int {
	if isMermaidHead(src) {
		return [][2]int{{0, len(src)}}
	}
	var out [][2]int
	pos := 0
	for pos < len(src) {
		line, next := lineAt(src, pos)
		ch, n, info, ok := openingFence(line)
		if !ok {
			pos = next
			continue
		}
		start := next
		end := len(src)
		pos = len(src)
		for p := start; p < len(src); {
			l, nx := lineAt(src, p)
			if closingFence(l, ch, n) {
				end, pos = p, nx
				break
			}
			p = nx
		}
		if mermaidInfo(info) && isMermaidHead(src[start:end]) {
			out = append(out, [2]int{start, end})
		}
	}
	return out
}

// lineAt is the line of src at pos without its line break, and where the
// next line starts.
func lineAt(src []byte, pos int) (line []byte, next int) {
	i := bytes.IndexByte(src[pos:], '\n')
	if i < 0 {
		return src[pos:], len(src)
	}
	return src[pos : pos+i], pos + i + 1
}

// openingFence reads a CommonMark fence opening: up to three spaces, three
// or more backticks or tildes, an info string (no backtick after backticks).
func openingFence(line []byte) (ch byte, n int, info []byte, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, nil, false
	}
	ch = line[i]
	j := i
	for j < len(line) && line[j] == ch {
		j++
	}
	if j-i < 3 {
		return 0, 0, nil, false
	}
	info = line[j:]
	if ch == '`' && bytes.IndexByte(info, '`') >= 0 {
		return 0, 0, nil, false
	}
	return ch, j - i, info, true
}

// closingFence reports whether line closes a fence of n chars ch: up to
// three spaces, at least n of them, then only white space.
func closingFence(line []byte, ch byte, n int) bool {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] == ch {
		j++
	}
	return j-i >= n && len(bytes.TrimSpace(line[j:])) == 0
}

// mermaidInfo reports whether a fence's info string names Mermaid: its
// first word is "mermaid", case aside.
func mermaidInfo(info []byte) bool {
	f := bytes.Fields(info)
	return len(f) > 0 && bytes.EqualFold(f[0], []byte("mermaid"))
}

// isMermaidHead reports whether text is a Mermaid flowchart: its first
// statement, after blank lines, %% comments and directives and a front
// matter block (--- … ---), is "flowchart", "flowchart-elk" or "graph".
func isMermaidHead(text []byte) bool {
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
	pos := 0
	front := false
	first := true
	for pos < len(text) {
		line, next := lineAt(text, pos)
		pos = next
		t := bytes.TrimSpace(line)
		switch {
		case front:
			if bytes.Equal(t, []byte("---")) {
				front = false
			}
			continue
		case len(t) == 0 || bytes.HasPrefix(t, []byte("%%")):
			continue
		case first && bytes.Equal(t, []byte("---")):
			front, first = true, false
			continue
		}
		word := t
		if i := bytes.IndexAny(word, " \t;"); i >= 0 {
			word = word[:i]
		}
		return bytes.Equal(word, []byte("flowchart")) || bytes.Equal(word, []byte("graph")) ||
			bytes.Equal(word, []byte("flowchart-elk")) // laid out by ELK, read alike
	}
	return false
}

// mermaidFence matches the opening fence of a Markdown ```mermaid block.
var mermaidFence = regexp.MustCompile("(?m)^ {0,3}(```|~~~)[ \t]*mermaid")

// isMermaidDetect tells Mermaid from a file's first bytes (Detect): a
// flowchart's text, or Markdown with a ```mermaid block in them.
func isMermaidDetect(head []byte) bool {
	return isMermaidHead(head) || mermaidFence.Match(head)
}
