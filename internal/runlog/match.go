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
	pats   [][]byte         // distinct, longest first
	byHead map[uint32][]int // indexes in pats by their first four bytes
	filter []uint64         // a bit per headHash of those
	heads  [][]byte         // the distinct first four bytes
	// ends finds the end of a string cut off at its start, after "…":
	// by the first four bytes of each of its ends at least minSecret
	// long, the string and where that end starts in it.
	ends    map[uint32][][2]int
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
	m.ends = map[uint32][][2]int{}
	for i, p := range m.pats {
		for off := 1; off+minSecret <= len(p); off++ {
			h := binary.LittleEndian.Uint32(p[off:])
			m.ends[h] = append(m.ends[h], [2]int{i, off})
		}
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
	return bytes.Contains(b, ellipsis) // and the end of a secret after it
}

// span is a part of a text to mask, [start, end).
type span struct{ start, end int }

// scan appends to spans every match that starts in b[lo:hi] (it may run on
// to the end of b), merging those that overlap, so that two secrets
// sharing bytes go as one. At each position it takes the longest match:
// a whole string, a start of one at least minSecret long cut off by "…",
// or after "…" an end of one at least minSecret long. With escaped, b[lo:hi] is the inside of a JSON string, and matches
// start only where no escape sequence (\" or \u003c) continues.
func (m *matcher) scan(b []byte, lo, hi int, escaped bool, spans []span) []span {
	n := len(spans)
	spans = m.scanStarts(b, lo, hi, escaped, spans)
	// The end of a string after "…", as a text cut at its start shows it.
	var ends []span
	for i := lo; i < hi; {
		k := bytes.Index(b[i:hi], ellipsis)
		if k < 0 {
			break
		}
		s := i + k + len(ellipsis)
		if s+minSecret <= len(b) {
			best := 0
			for _, e := range m.ends[binary.LittleEndian.Uint32(b[s:])] {
				if end := m.pats[e[0]][e[1]:]; len(end) > best && bytes.HasPrefix(b[s:], end) {
					best = len(end)
				}
			}
			if best > 0 {
				ends = append(ends, span{s, s + best})
			}
		}
		i = s
	}
	if len(ends) == 0 {
		return spans
	}
	return append(spans[:n], mergeSpans(spans[n:], ends)...)
}

// mergeSpans merges two lists of spans in order into one, joining those
// that overlap.
func mergeSpans(a, b []span) []span {
	out := make([]span, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var s span
		if len(b) == 0 || len(a) > 0 && a[0].start <= b[0].start {
			s, a = a[0], a[1:]
		} else {
			s, b = b[0], b[1:]
		}
		if k := len(out); k > 0 && s.start < out[k-1].end {
			out[k-1].end = max(out[k-1].end, s.end)
		} else {
			out = append(out, s)
		}
	}
	return out
}

func (m *matcher) scanStarts(b []byte, lo, hi int, escaped bool, spans []span) []span {
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
