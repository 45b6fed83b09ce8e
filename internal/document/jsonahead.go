package document

// A large page's lines are decoded on a second goroutine while the decoder
// reads the shapes before them: the JSON import otherwise runs on one of
// the two cores, and the lines are about half of a chart's bytes.

// aheadMin is the input size from which decodeJSONDoc decodes lines ahead.
const aheadMin = 1 << 20

// linesAhead is the first page's line list, decoded ahead. The fields are
// set before done is closed.
type linesAhead struct {
	done  chan struct{}
	start int // the offset of the list's '[', -1 when none was found
	end   int // the offset after the list
	lines []jsonLine
	ok    bool
}

// decodeLinesAhead finds the first page's line list and decodes it, on
// another goroutine.
func decodeLinesAhead(data string) *linesAhead {
	a := &linesAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.start = findLines(data)
		if a.start >= 0 {
			a.lines, a.end, a.ok = decodeLinesAt(data, a.start)
		}
	}()
	return a
}

// decodeLinesAt decodes the line list at pos, reporting false where
// decodeJSONDoc would give up.
func decodeLinesAt(data string, pos int) (lines []jsonLine, end int, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if r != errNotFast {
				panic(r)
			}
			ok = false
		}
	}()
	d := &jsonDecoder{data: data, pos: pos}
	lines = decodeLongList(d, "lines", (*jsonDecoder).line)
	return lines, d.pos, true
}

// takeLinesAhead returns the lines decoded ahead when they are the list at
// pos, which it then moves past; the decoder reads any other list itself.
// The same code decoded them from the same offset of the same data, so
// they are what the decoder would have read. It is used once.
func (d *jsonDecoder) takeLinesAhead() ([]jsonLine, bool) {
	a := d.ahead
	if a == nil {
		return nil, false
	}
	d.ahead = nil
	d.value()
	<-a.done
	if !a.ok || a.start != d.pos {
		return nil, false
	}
	d.pos = a.end
	return a.lines, true
}

// findLines returns the offset of the first page's line list: the '['
// after the key "lines" in the object after the key "items" in an element
// of the root's "pages" array; -1 when it finds none. It checks nothing:
// the decoder takes the lines decoded from there only when its own list
// starts at the same offset.
func findLines(s string) int {
	var path [4]string // the key before each open container, by depth
	key, depth := "", 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			j := closingQuote(s, i)
			if j < 0 {
				return -1
			}
			k := j + 1
			for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
				k++
			}
			if k < len(s) && s[k] == ':' {
				key = s[i+1 : j]
			}
			i = j
		case '{', '[':
			if c == '[' && depth == 4 && key == "lines" && path[3] == "items" && path[1] == "pages" {
				return i
			}
			if depth < len(path) {
				path[depth] = key
			}
			key, depth = "", depth+1
		case '}', ']':
			key, depth = "", depth-1
			if depth < 0 {
				return -1
			}
		}
	}
	return -1
}
