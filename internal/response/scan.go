package response

import (
	"encoding/json"
	"slices"
	"strings"
)

// FindObjects returns every balanced top-level JSON object in text, in
// order, after [StripANSI]. Each is a substring of the stripped text and is
// valid JSON by [json.Valid].
//
// The rule is leftmost-first: at each '{', if a valid JSON object starts
// there, it is returned and the search goes on after its closing '}';
// otherwise the search goes on at the next '{'. So objects in fences or
// prose are found, a stray "use {x" before the real object is stepped over,
// an object nested in one that never closes is still found, and an object
// inside a returned object is not returned again. As for json.Valid, an
// object nested more than 10000 deep is not valid, though the ones in it
// may be.
//
// The obvious way to apply that rule, parsing from every '{', is quadratic:
// a reply full of `{"a` fragments makes each parse run to the end. Instead
// one pass runs a JSON parser for every '{' at once. A '{' where a parser
// expects a value is a nested object and shares that parser's work; any
// other '{' starts a new parser, and the old structural one, which could not
// take a '{' there, has already failed. Two parsers that are both alive are
// always on opposite sides of every string quote (one in a string, one not),
// so at most two run at any time and the scan is linear.
func FindObjects(text string) []string {
	text = StripANSI(text)
	spans, _ := scan(text)
	var out []string
	next := 0
	for _, sp := range spans {
		if sp.start < next {
			continue
		}
		obj := text[sp.start:sp.end]
		// The parser follows encoding/json's grammar; json.Valid makes
		// sure, at a cost linear in what is returned.
		if !json.Valid([]byte(obj)) {
			continue
		}
		out = append(out, obj)
		next = sp.end
	}
	return out
}

// span is a valid JSON object at text[start:end].
type span struct{ start, end int }

// scan finds every offset where a valid JSON object starts, with its end,
// sorted by start; spans may nest or overlap. It also reports the most
// parsers that ran at once, which tests hold to two.
func scan(text string) (spans []span, maxLive int) {
	var live []*parser
	var spare []*parser
	found := func(start, end int) { spans = append(spans, span{start, end}) }
	for i := 0; i < len(text); i++ {
		switch {
		case len(live) == 0:
			// Nothing to follow until the next '{'.
			j := strings.IndexByte(text[i:], '{')
			if j < 0 {
				i = len(text)
				continue
			}
			i += j
		case len(live) == 1 && live[0].mode == mStr:
			// Only plain string bytes until a quote, backslash, control
			// byte or '{'.
			for i < len(text)-1 && !stopsString(text[i]) {
				i++
			}
		}
		c := text[i]
		taken := false
		n := 0
		for _, p := range live {
			if p.step(c, i, found) {
				// Only a '{' taken as a value leaves a parser here.
				taken = taken || (c == '{' && p.mode == mObjOpen)
				live[n] = p
				n++
			} else {
				spare = append(spare, p)
			}
		}
		clear(live[n:])
		live = live[:n]
		if c == '{' && !taken {
			var p *parser
			if k := len(spare); k > 0 {
				p, spare = spare[k-1], spare[:k-1]
			} else {
				p = new(parser)
			}
			p.begin(i)
			live = append(live, p)
		}
		maxLive = max(maxLive, len(live))
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	return spans, maxLive
}

// stopsString reports whether c, read in a string, may do more than add
// itself to it, or may start a new candidate.
func stopsString(c byte) bool { return c == '"' || c == '\\' || c == '{' || c < 0x20 }
