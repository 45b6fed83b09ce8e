package runlog

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// matcher finds any of a set of byte strings, each at least minSecret
// long, in one pass over a text, however many there are: at each position
// a bit filter on the next four bytes, and only where it hits a look at
// the strings that start with them. Masking 50 secrets in 10 MB is one
// pass, not 50 (TestRedactorIsLinear).
type matcher struct {
	pats    [][]byte         // distinct, longest first
	byHead  map[uint32][]int // indexes in pats by their first four bytes
	filter  []uint64         // a bit per headHash of those
	heads   [][]byte         // the distinct first four bytes
	longest int
}

// fewHeads is how many distinct beginnings mayContain looks for with
// bytes.Contains, which is faster than a scan for a handful of them;
// beyond that it leaves the work to scan.
const fewHeads = 8

// ellipsis marks text cut short (types.Excerpt and friends): a cut-off
// start of a secret followed by it is masked too.
var ellipsis = []byte("…")

func newMatcher(pats [][]byte) matcher {
	var m matcher
	seen := map[string]bool{}
	for _, p := range pats {
		if len(p) >= minSecret && !seen[string(p)] {
			seen[string(p)] = true
			m.pats = append(m.pats, p)
		}
	}
	if len(m.pats) == 0 {
		return m
	}
	slices.SortStableFunc(m.pats, func(a, b []byte) int { return len(b) - len(a) })
	m.byHead = map[uint32][]int{}
	m.filter = make([]uint64, 1<<16/64)
	for i, p := range m.pats {
		h := binary.LittleEndian.Uint32(p)
		if _, ok := m.byHead[h]; !ok {
			m.heads = append(m.heads, p[:4])
		}
		m.byHead[h] = append(m.byHead[h], i)
		x := headHash(h)
		m.filter[x>>6] |= 1 << (x & 63)
		m.longest = max(m.longest, len(p))
	}
	return m
}

func headHash(h uint32) uint32 { return (h * 0x9E3779B1) >> 16 }

func (m *matcher) empty() bool { return len(m.pats) == 0 }

// mayContain is false when no match can start in b.
func (m *matcher) mayContain(b []byte) bool {
	if m.empty() || len(b) < minSecret {
		return false
	}
	if len(m.heads) > fewHeads {
		return true
	}
	for _, h := range m.heads {
		if bytes.Contains(b, h) {
			return true
		}
	}
	return false
}

// span is a part of a text to mask, [start, end).
type span struct{ start, end int }

// scan appends to spans every match that starts in b[lo:hi] (it may run on
// to the end of b), merging those that overlap, so that two secrets
// sharing bytes go as one. At each position it takes the longest match:
// a whole string, or a start of one at least minSecret long cut off by
// "…". With escaped, b[lo:hi] is the inside of a JSON string, and matches
// start only where no escape sequence (\" or \u003c) continues.
func (m *matcher) scan(b []byte, lo, hi int, escaped bool, spans []span) []span {
	last := min(hi, len(b)-minSecret+1)
	add := func(i int) {
		h := binary.LittleEndian.Uint32(b[i:])
		if end := m.longestAt(b[i:], h); end > 0 {
			if n := len(spans); n > 0 && i < spans[n-1].end {
				spans[n-1].end = max(spans[n-1].end, i+end)
			} else {
				spans = append(spans, span{i, i + end})
			}
		}
	}
	if len(m.heads) <= fewHeads {
		// Jump from one beginning of a secret to the next with
		// bytes.Index, which is many times faster than a byte at a time;
		// next holds each beginning's next place, so the text is searched
		// once per beginning.
		var next [fewHeads]int
		for k := range m.heads {
			next[k] = -1
		}
		for i := lo; i < last; {
			at := -1
			for k, h := range m.heads {
				if next[k] < i && next[k] != len(b) {
					next[k] = len(b)
					if x := bytes.Index(b[i:min(last+minSecret-1, len(b))], h); x >= 0 {
						next[k] = i + x
					}
				}
				if next[k] < len(b) && (at < 0 || next[k] < at) {
					at = next[k]
				}
			}
			if at < 0 {
				break
			}
			if !escaped || boundary(b, lo, at) {
				add(at)
			}
			i = at + 1
		}
		return spans
	}
	for i := lo; i < last; {
		step := 1
		if escaped && b[i] == '\\' {
			step = 2
			if b[i+1] == 'u' {
				step = 6
			}
		}
		if x := headHash(binary.LittleEndian.Uint32(b[i:])); m.filter[x>>6]&(1<<(x&63)) != 0 {
			add(i)
		}
		i += step
	}
	return spans
}

// boundary says no JSON escape sequence that starts at or after lo
// continues at p.
func boundary(b []byte, lo, p int) bool {
	if oddSlashes(b, lo, p) {
		return false // p is the escaped byte of \x
	}
	for d := 1; d <= 4; d++ { // p is in the digits of \uXXXX
		if u := p - d; u > lo && b[u] == 'u' && oddSlashes(b, lo, u) {
			return false
		}
	}
	return true
}

// oddSlashes says an odd run of backslashes ends before i: b[i] is escaped.
func oddSlashes(b []byte, lo, i int) bool {
	n := 0
	for k := i - 1; k >= lo && b[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

// longestAt is the length of the longest match at the start of b, 0 for
// none; h is b's first four bytes.
func (m *matcher) longestAt(b []byte, h uint32) int {
	best := 0
	for _, k := range m.byHead[h] {
		p := m.pats[k]
		if bytes.HasPrefix(b, p) {
			// The longest whole match; a cut-off longer one may reach further.
			return max(best, len(p))
		}
		c := 0
		for c < len(p) && c < len(b) && b[c] == p[c] {
			c++
		}
		if c >= minSecret && bytes.HasPrefix(b[c:], ellipsis) {
			best = max(best, c)
		}
	}
	return best
}
