package response

import "strings"

const (
	esc = 0x1b
	bel = 0x07
)

// StripANSI removes terminal escape sequences, which agent CLIs print even
// when their output is piped (cursor and focus modes, colours, window
// titles). It removes:
//
//   - CSI sequences: ESC [ parameters intermediates final, e.g. "\x1b[31m",
//     "\x1b[?1004l";
//   - OSC, DCS, SOS, PM and APC strings: ESC ] (or P X ^ _) up to BEL, or up
//     to the next ESC as terminals do (ESC \ is removed whole), e.g.
//     "\x1b]0;title\x07";
//   - the other two-byte and nF escapes, e.g. "\x1b=", "\x1b(B".
//
// A sequence that is cut short (an OSC that nothing ends, a CSI that hits a
// byte it cannot contain) loses only its introducer, so that a broken escape
// never swallows the answer after it. ESC followed by a brace keeps the
// brace: it is worth more as JSON than as a shift code. Every ESC byte is
// removed, so the result contains none. Time is linear.
func StripANSI(s string) string {
	next := strings.IndexByte(s, esc)
	if next < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for next >= 0 {
		b.WriteString(s[last:next])
		last = next + 1 + escapeLen(s[next+1:])
		next = strings.IndexByte(s[last:], esc)
		if next >= 0 {
			next += last
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// escapeLen is how many bytes after an ESC belong to its sequence.
func escapeLen(s string) int {
	if s == "" {
		return 0
	}
	switch c := s[0]; {
	case c == '[':
		j := 1
		for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f { // parameters
			j++
		}
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f { // intermediates
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1
		}
		return 1
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		j := strings.IndexAny(s[1:], "\x07\x1b")
		switch {
		case j < 0:
			return 1
		case s[1+j] == bel:
			return 1 + j + 1
		case 2+j < len(s) && s[2+j] == '\\':
			return 1 + j + 2
		}
		return 1 + j // the ESC starts the next sequence
	case c >= 0x20 && c <= 0x2f: // nF: intermediates, then a final byte
		j := 1
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && isFinal(s[j]) {
			return j + 1
		}
		return 0
	case isFinal(c):
		return 1
	}
	return 0
}

// isFinal reports whether c may end a two-byte or nF escape; braces are
// kept for the JSON they more likely open or close.
func isFinal(c byte) bool {
	return c >= 0x30 && c <= 0x7e && c != '{' && c != '}'
}
