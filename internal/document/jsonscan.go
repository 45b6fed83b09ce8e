package document

// The JSON grammar as the Lucid decoder (jsondecode.go) reads it: white
// space, members and elements, strings, numbers and literals, and values
// skipped whole, each checked as strictly as encoding/json checks them.

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// errNotFast is what jsonDecoder panics with to give up, caught by
// decodeJSON and decodeLinesAt only.
var errNotFast = &struct{ string }{"not for the fast JSON decoder"}

// maxSkipDepth bounds the nesting of the values the decoder skips, well
// below json.Unmarshal's limit of 10000.
const maxSkipDepth = 1000

type jsonDecoder struct {
	data    string
	pos     int
	areas   []jsonTextArea // the text areas of all items, sliced per item
	counted func(list string, n int)
	ahead   *linesAhead
}

func (d *jsonDecoder) fail() { panic(errNotFast) }

// peek returns the byte at pos, or 0 at the end of the data.
func (d *jsonDecoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

func (d *jsonDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value skips white space and returns the first byte of the value there.
func (d *jsonDecoder) value() byte {
	d.space()
	return d.peek()
}

// literal consumes word (true, false, null) at pos.
func (d *jsonDecoder) literal(word string) {
	if !strings.HasPrefix(d.data[d.pos:], word) {
		d.fail()
	}
	d.pos += len(word)
}

// null consumes a null at pos if there is one.
func (d *jsonDecoder) null() bool {
	if d.peek() == 'n' {
		d.literal("null")
		return true
	}
	return false
}

// member starts the next member of the object at pos (the opening brace
// when first) and returns its key, or reports false at the closing brace.
func (d *jsonDecoder) member(first bool) (string, bool) {
	if first {
		d.pos++ // {
	}
	d.space()
	switch c := d.peek(); {
	case c == '}':
		d.pos++
		return "", false
	case !first && c == ',':
		d.pos++
		d.space()
	case !first:
		d.fail()
	}
	if d.peek() != '"' {
		d.fail()
	}
	start := d.pos + 1
	if d.scanString() != plainASCII {
		d.fail() // json.Unmarshal decodes and case-folds it: see decodeJSONDoc
	}
	key := d.data[start : d.pos-1]
	d.space()
	if d.peek() != ':' {
		d.fail()
	}
	d.pos++
	return key, true
}

// elem starts the next element of the array at pos (the opening bracket
// when first), or reports false at the closing bracket.
func (d *jsonDecoder) elem(first bool) bool {
	if first {
		d.pos++ // [
	}
	d.space()
	switch c := d.peek(); {
	case c == ']':
		d.pos++
		return false
	case !first && c == ',':
		d.pos++
	case !first:
		d.fail()
	}
	return true
}

// field returns the index in names of key, matched exactly or, as
// json.Unmarshal does, ASCII case-insensitively (key is ASCII), or -1. It
// fails when seen already has that field: a field given twice is left to
// json.Unmarshal, which merges the two.
func (d *jsonDecoder) field(key string, names []string, seen *uint) int {
	for i, n := range names {
		if key == n || strings.EqualFold(key, n) {
			if *seen&(1<<i) != 0 {
				d.fail()
			}
			*seen |= 1 << i
			return i
		}
	}
	return -1
}

// open reports whether a value of the given kind ('{' or '[') starts at
// pos, false for null, and fails on anything else (a type error).
func (d *jsonDecoder) open(kind byte) bool {
	switch d.value() {
	case kind:
		return true
	case 'n':
		d.literal("null")
		return false
	}
	d.fail()
	return false
}

// String scans classify a string's inside.
const (
	plainASCII    = iota // no escapes, control or non-ASCII bytes: use as is
	plainUTF8            // no escapes, some non-ASCII bytes
	simpleEscapes        // escapes other than \u
	otherString          // \u escapes: left to encoding/json
)

// scanString moves past the string literal at pos and says what is inside.
func (d *jsonDecoder) scanString() int {
	data := d.data
	kind := plainASCII
	i := d.pos + 1
	for {
		if i >= len(data) {
			d.fail()
		}
		c := data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return kind
		case c == '\\':
			if i+1 >= len(data) {
				d.fail()
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				kind = max(kind, simpleEscapes)
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex4(data[i+2:i+6]) {
					d.fail()
				}
				kind = otherString
				i += 6
			default:
				d.fail()
			}
			continue
		case c < 0x20:
			d.fail()
		case c >= utf8.RuneSelf:
			kind = max(kind, plainUTF8)
		}
		i++
	}
}

func isHex4(s string) bool {
	for i := range 4 {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// str decodes the string literal at pos.
func (d *jsonDecoder) str() string {
	start := d.pos
	kind := d.scanString()
	inside := d.data[start+1 : d.pos-1]
	switch {
	case kind == plainASCII:
		return inside
	case kind == plainUTF8 && utf8.ValidString(inside):
		return inside
	case kind == simpleEscapes && utf8.ValidString(inside):
		return unescape(inside)
	}
	// \u escapes or invalid UTF-8, which encoding/json replaces: rare
	// enough to hand over.
	var s string
	if err := json.Unmarshal([]byte(d.data[start:d.pos]), &s); err != nil {
		d.fail()
	}
	return s
}

// unescape decodes the escapes of a checked string literal's inside, which
// has no \u escapes.
func unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		c := s[i+1]
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		}
		b.WriteByte(c)
		s = s[i+2:]
	}
}

// number moves past the number at pos, checked against JSON's grammar, and
// returns its text.
func (d *jsonDecoder) number() string {
	data, start := d.data, d.pos
	i := start
	digits := func() {
		j := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		if i == j {
			d.fail()
		}
	}
	if i < len(data) && data[i] == '-' {
		i++
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else {
		digits()
	}
	if i < len(data) && data[i] == '.' {
		i++
		digits()
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		digits()
	}
	d.pos = i
	return data[start:i]
}

// flex decodes a flexString: a string, a number or boolean as written, null
// as "".
func (d *jsonDecoder) flex() flexString {
	switch c := d.value(); {
	case c == '"':
		return flexString(d.str())
	case c == 'n':
		d.literal("null")
		return ""
	case c == 't':
		d.literal("true")
		return "true"
	case c == 'f':
		d.literal("false")
		return "false"
	case c == '-' || '0' <= c && c <= '9':
		return flexString(d.number())
	}
	d.fail() // an object or an array, or not JSON
	return ""
}

// skip checks and moves past the value at pos, at the given nesting depth.
func (d *jsonDecoder) skip(depth int) {
	if depth > maxSkipDepth {
		d.fail()
	}
	switch c := d.value(); {
	case c == '{':
		for first := true; ; first = false {
			if _, ok := d.member(first); !ok {
				return
			}
			d.skip(depth + 1)
		}
	case c == '[':
		for first := true; d.elem(first); first = false {
			d.skip(depth + 1)
		}
	case c == '"':
		d.scanString()
	case c == 't':
		d.literal("true")
	case c == 'f':
		d.literal("false")
	case c == 'n':
		d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		d.number()
	default:
		d.fail()
	}
}

// closingQuote returns the offset of the quote that closes the string
// opened at i, one not escaped by an odd number of backslashes, or -1.
func closingQuote(s string, i int) int {
	for {
		j := strings.IndexByte(s[i+1:], '"')
		if j < 0 {
			return -1
		}
		i += 1 + j
		k := i - 1
		for s[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i
		}
	}
}

// countElems returns how many elements the array at the start of s has,
// when it is valid JSON; it is a size to allocate, not a check. It steps
// from quote to quote with IndexByte, so it costs a small part of decoding.
func countElems(s string) int {
	depth, n := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			if depth == 1 && n == 0 {
				n = 1
			}
			if i = closingQuote(s, i); i < 0 {
				return n
			}
		case '[', '{':
			depth++
			if depth == 2 && n == 0 {
				n = 1
			}
		case ']', '}':
			depth--
			if depth == 0 {
				return n
			}
		case ',':
			if depth == 1 {
				n++
			}
		default:
			if depth == 1 && n == 0 && s[i] > ' ' {
				n = 1 // a first element that is not an object or array
			}
		}
	}
	return n
}
