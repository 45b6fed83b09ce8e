package types

import (
	"fmt"
	"strings"
	"time"
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
