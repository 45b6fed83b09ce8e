package document

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeJSONDoc fills doc from data as json.Unmarshal would, without
// reflection or a second pass over the input: strings without escapes are
// substrings of data, and only the fields of jsonDoc are decoded (the rest
// is checked and skipped). It reports false, leaving doc in any state, when
// data holds something it leaves to json.Unmarshal: a syntax error, a value
// of the wrong type, a field given twice, an object key with an escape or a
// non-ASCII byte (which json.Unmarshal may match to a field by Unicode case
// folding), or nesting deeper than maxSkipDepth. The caller then runs
// json.Unmarshal, which gives the same document or the exact error.
// FuzzJSONDecode holds the two to the same result.
//
// counted, when not nil, is told the length of each page's list of shapes
// and of lines as their decoding starts, so that the caller can prepare
// for them on another goroutine.
func decodeJSONDoc(data string, doc *jsonDoc, counted func(list string, n int)) bool {
	return decodeJSON(data, doc, counted, len(data) >= aheadMin)
}

// decodeJSON is decodeJSONDoc, with the first page's lines decoded on
// another goroutine when ahead is set (jsonahead.go).
func decodeJSON(data string, doc *jsonDoc, counted func(list string, n int), ahead bool) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if r != errNotFast {
				panic(r)
			}
			ok = false
		}
	}()
	d := &jsonDecoder{data: data, counted: counted}
	if ahead {
		d.ahead = decodeLinesAhead(data)
	}
	d.space()
	if d.peek() != '{' {
		return false // null, or a type error: json.Unmarshal says which
	}
	d.doc(doc)
	d.space()
	return d.pos == len(d.data)
}

// errNotFast is what jsonDecoder panics with to give up, caught by
// decodeJSONDoc only.
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

// An empty JSON array decodes to an empty slice, null or no field to nil;
// the decoders below keep that difference, as json.Unmarshal does.

var docFields = []string{"title", "pages"}

func (d *jsonDecoder) doc(doc *jsonDoc) {
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, docFields, &seen) {
		case 0:
			doc.Title = d.flex()
		case 1:
			doc.Pages = nil
			if d.open('[') {
				pages := []jsonPage{}
				for first := true; d.elem(first); first = false {
					pages = append(pages, jsonPage{})
					d.page(&pages[len(pages)-1])
				}
				doc.Pages = &pages
			}
		default:
			d.skip(1)
		}
	}
}

var pageFields = []string{"id", "title", "index", "items"}
var itemsFields = []string{"shapes", "lines", "groups"}

func (d *jsonDecoder) page(p *jsonPage) {
	if !d.open('{') {
		return // null leaves the page empty
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, pageFields, &seen) {
		case 0:
			p.ID = d.flex()
		case 1:
			p.Title = d.flex()
		case 2:
			p.Index = nil
			if d.value() == '-' || '0' <= d.peek() && d.peek() <= '9' {
				f, err := strconv.ParseFloat(d.number(), 64)
				if err != nil {
					d.fail()
				}
				p.Index = &f
			} else if !d.null() {
				d.fail()
			}
		case 3:
			if !d.open('{') {
				continue // null leaves the items as they are
			}
			var seen uint
			for first := true; ; first = false {
				key, ok := d.member(first)
				if !ok {
					break
				}
				switch d.field(key, itemsFields, &seen) {
				case 0:
					p.Items.Shapes = decodeLongList(d, "shapes", (*jsonDecoder).shape)
				case 1:
					if lines, ok := d.takeLinesAhead(); ok {
						p.Items.Lines = lines
					} else {
						p.Items.Lines = decodeLongList(d, "lines", (*jsonDecoder).line)
					}
				case 2:
					p.Items.Groups = decodeLongList(d, "groups", (*jsonDecoder).group)
				default:
					d.skip(1)
				}
			}
		default:
			d.skip(1)
		}
	}
}

// decodeList decodes an array of objects with elem, or null as nil.
func decodeList[T any](d *jsonDecoder, elem func(*jsonDecoder, *T)) []T {
	return decodeListCap(d, elem, 0)
}

// decodeLongList decodes a long array, such as a page's shapes, into a
// slice allocated once for its length, which countElems finds first:
// growing it by append (by 1.25 times past 256 elements) would allocate
// and copy about four times the final slice, most of a large chart's
// memory and a third of its import time.
func decodeLongList[T any](d *jsonDecoder, list string, elem func(*jsonDecoder, *T)) []T {
	if d.value() != '[' {
		return decodeList(d, elem)
	}
	n := countElems(d.data[d.pos:])
	if d.counted != nil {
		d.counted(list, n)
	}
	return decodeListCap(d, elem, n)
}

func decodeListCap[T any](d *jsonDecoder, elem func(*jsonDecoder, *T), n int) []T {
	if !d.open('[') {
		return nil
	}
	list := make([]T, 0, n)
	for first := true; d.elem(first); first = false {
		var v T
		list = append(list, v)
		elem(d, &list[len(list)-1])
	}
	return list
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

// flexList decodes an array of flexStrings, or null as nil.
func (d *jsonDecoder) flexList() []flexString {
	if !d.open('[') {
		return nil
	}
	list := []flexString{}
	for first := true; d.elem(first); first = false {
		list = append(list, d.flex())
	}
	return list
}

var shapeFields = []string{"id", "class", "textAreas", "customData", "linkedData", "contains"}

func (d *jsonDecoder) shape(s *jsonShape) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, shapeFields, &seen) {
		case 0:
			s.ID = d.flex()
		case 1:
			s.Class = d.flex()
		case 2:
			s.TextAreas = d.textAreas()
		case 3:
			s.CustomData = decodeList(d, (*jsonDecoder).pair)
		case 4:
			s.LinkedData = decodeList(d, (*jsonDecoder).linked)
		case 5:
			s.Contains = nil
			if d.open('{') {
				s.Contains = &struct {
					Shapes []flexString `json:"shapes"`
				}{}
				var seen uint
				for first := true; ; first = false {
					key, ok := d.member(first)
					if !ok {
						break
					}
					if d.field(key, containsFields, &seen) == 0 {
						s.Contains.Shapes = d.flexList()
					} else {
						d.skip(1)
					}
				}
			}
		default:
			d.skip(1)
		}
	}
}

var containsFields = []string{"shapes"}

// textAreas decodes a list of text areas, or null as nil. The lists are
// slices of blocks of areaBlock areas: one allocation per item, most of
// them of one area, cost more than the rest of an item's decoding.
func (d *jsonDecoder) textAreas() []jsonTextArea {
	if !d.open('[') {
		return nil
	}
	if d.areas == nil {
		d.areas = make([]jsonTextArea, 0, areaBlock)
	}
	start := len(d.areas)
	for first := true; d.elem(first); first = false {
		if len(d.areas) == cap(d.areas) { // a new block, with this list so far
			block := make([]jsonTextArea, 0, max(areaBlock, 2*(len(d.areas)-start)))
			d.areas, start = append(block, d.areas[start:]...), 0
		}
		d.areas = append(d.areas, jsonTextArea{})
		d.textArea(&d.areas[len(d.areas)-1])
	}
	return d.areas[start:len(d.areas):len(d.areas)]
}

const areaBlock = 4096

var textAreaFields = []string{"label", "text"}

func (d *jsonDecoder) textArea(t *jsonTextArea) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, textAreaFields, &seen) {
		case 0:
			t.Label = d.flex()
		case 1:
			t.Text = d.flex()
		default:
			d.skip(1)
		}
	}
}

var pairFields = []string{"key", "name", "value", "data"}

func (d *jsonDecoder) pair(kv *jsonPair) {
	d.pairOrLinked(kv, nil)
}

func (d *jsonDecoder) linked(ld *jsonLinked) {
	d.pairOrLinked(&ld.jsonPair, &ld.Data)
}

// pairOrLinked decodes a customData entry, or with data not nil a
// linkedData entry, which has a data list besides.
func (d *jsonDecoder) pairOrLinked(kv *jsonPair, data *[]jsonPair) {
	if !d.open('{') {
		return
	}
	fields := pairFields
	if data == nil {
		fields = fields[:3]
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, fields, &seen) {
		case 0:
			kv.Key = d.flex()
		case 1:
			kv.Name = d.flex()
		case 2:
			kv.Value = d.flex()
		case 3:
			*data = decodeList(d, (*jsonDecoder).pair)
		default:
			d.skip(1)
		}
	}
}

var lineFields = []string{"id", "endpoint1", "endpoint2", "textAreas"}

func (d *jsonDecoder) line(l *jsonLine) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, lineFields, &seen) {
		case 0:
			l.ID = d.flex()
		case 1:
			d.endpoint(&l.Endpoint1)
		case 2:
			d.endpoint(&l.Endpoint2)
		case 3:
			l.TextAreas = d.textAreas()
		default:
			d.skip(1)
		}
	}
}

var endpointFields = []string{"style", "connectedTo"}

func (d *jsonDecoder) endpoint(e *jsonEndpoint) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, endpointFields, &seen) {
		case 0:
			e.Style = d.flex()
		case 1:
			e.ConnectedTo = d.flex()
		default:
			d.skip(1)
		}
	}
}

var groupFields = []string{"id", "members"}

func (d *jsonDecoder) group(g *jsonGroup) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, groupFields, &seen) {
		case 0:
			g.ID = d.flex()
		case 1:
			g.Members = d.flexList()
		default:
			d.skip(1)
		}
	}
}
