package export

import (
	"unicode"

	"golang.org/x/text/width"
)

// columns is how many columns s takes when drawn, as a terminal counts
// them: East Asian Wide and Fullwidth characters (CJK ideographs, kana,
// Hangul, fullwidth forms, and most emoji, which Unicode gives the Wide
// property) take two, a character made an emoji by U+FE0F (❤️) two,
// combining marks, joiners and variation selectors none, any other one.
// SVG boxes are sized from it: counting runes drew CJK text and emoji
// over their boxes' edges.
func columns(s string) int {
	n, last := 0, 0 // last: the columns of the character before
	for _, r := range s {
		w := 1
		switch {
		case r == 0xFE0F: // emoji presentation: a narrow symbol drawn as an emoji
			w = 0
			if last == 1 {
				w = 1
			}
		case r == 0x200D, r >= 0xFE00 && r <= 0xFE0E, unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
			w = 0
		default:
			switch width.LookupRune(r).Kind() {
			case width.EastAsianWide, width.EastAsianFullwidth:
				w = 2
			}
		}
		n += w
		if w > 0 {
			last = w
		}
	}
	return n
}
