package types

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Excerpt is the first line of text, cut at max runes; "…" marks what was
// left out. It reads no further into text than it keeps, so a node text
// of megabytes costs what a short one does.
func Excerpt(text string, max int) string {
	n := 0
	for i, r := range text {
		if r == '\n' || n == max {
			return text[:i] + "…"
		}
		n++
	}
	return text
}

// Clip is text, line breaks and all, cut at max runes; "…" marks what was
// left out. Like Excerpt it reads no further than it keeps.
func Clip(text string, max int) string {
	n := 0
	for i := range text {
		if n == max {
			return text[:i] + "…"
		}
		n++
	}
	return text
}

// Plural counts things: "1 node", "3 nodes".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if k := len(what); k > 1 && what[k-1] == 'y' && !strings.ContainsRune("aeiou", rune(what[k-2])) {
		return fmt.Sprintf("%d %sies", n, what[:k-1]) // retry, retries
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Thousands writes n with commas: 12,400.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	b.WriteString(s[:len(s)-len(digits)])
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ShortDuration drops the zero tails of time.Duration.String: 10m, 1h30m.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Choose is one when n is 1, else many: "variable has", "variables have".
func Choose(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// HeadBytes is s's first max bytes, not cut inside a UTF-8 character.
func HeadBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && s[max]&0xC0 == 0x80 {
		max--
	}
	return s[:max]
}

// TailBytes is s's last max bytes, not starting inside a UTF-8
// character.
func TailBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := len(s) - max
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}

// LastLines is the end of s without its final line break: at most n
// lines and max bytes. It reads only the end it keeps.
func LastLines(s string, n, max int) string {
	s = TailBytes(strings.TrimRight(s, "\n"), max)
	end := len(s)
	for range n {
		j := strings.LastIndexByte(s[:end], '\n')
		if j < 0 {
			return s
		}
		end = j
	}
	return s[end+1:]
}

// Context modes: how much of the run so far a step's prompts get
// (readme/context.md#the-run-so-far).
const (
	ContextNone     = "none"     // no section
	ContextPrevious = "previous" // the step just before
	ContextPath     = "path"     // every step so far (the default)
)

// ContextModes are the modes, narrowest first.
var ContextModes = []string{ContextNone, ContextPrevious, ContextPath}

// ContextMode is s as a mode (case and spaces ignored), false when it is
// none of them.
func ContextMode(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, m := range ContextModes {
		if s == m {
			return m, true
		}
	}
	return "", false
}

// Quote puts a text in double quotes for people to read: unlike %q it
// leaves quotes, backslashes and every printable character as they are
// (`"echo "hi""`, not `"echo \"hi\""`), and spells only what a terminal
// would act on or hide: control characters as \n, \t, \r or \xNN, and
// bytes that are not UTF-8 as \xNN.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x2028 || r == 0x2029 || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			fmt.Fprintf(&b, `\u%04x`, r) // line separators and bidi controls reorder or break a line
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_./=:,@+%-]+$`)

// ShellJoin shows argv as a shell would need it typed: elements with
// spaces or special characters in single quotes. It is only shown; dtree
// never runs a shell.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if plainArg.MatchString(a) {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}
