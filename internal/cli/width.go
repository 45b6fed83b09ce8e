package cli

import (
	"unicode"

	"golang.org/x/text/width"
)

// runeWidth is the columns a terminal gives r: 2 for East Asian wide and
// fullwidth characters, 0 for combining marks and controls, else 1.
func runeWidth(r rune) int {
	switch {
	case r >= 0x20 && r < 0x7f: // printable ASCII, most of every line: no table to look up
		return 1
	case r < 0x20 || r == 0x7f || unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r < 0x1100:
		return 1
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// textWidth is the columns s takes on a terminal.
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// fitWidth cuts s to at most cols columns, ending it with an ellipsis
// (... in ASCII) when it cut; "" when cols leaves no room. It reads s
// only as far as the columns it fits: a line of a megabyte costs what its
// first cols+1 columns do.
func fitWidth(s string, cols int, ascii bool) string {
	if cols <= 0 {
		return ""
	}
	ell, ellW := "…", 1
	if ascii {
		ell, ellW = "...", 3
	}
	// cut is where the text ends when it must be cut: the last point with
	// room for the ellipsis after it.
	used, cut := 0, -1
	for i, r := range s {
		w := runeWidth(r)
		if cut < 0 && used+w > cols-ellW {
			cut = i
		}
		if used+w > cols {
			if cols < ellW {
				return ell[:cols]
			}
			return s[:cut] + ell
		}
		used += w
	}
	return s
}
