package export

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// referenceWrap is wrap as it was before it streamed: short to read, and
// quadratic in a long word. wrap must give what it gives.
func referenceWrap(text string, width, max int) []string {
	text = strings.Map(func(r rune) rune {
		if r != '\n' && (r < 0x20 || r == 0x7f) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(text, "\uFFFD"))
	var out []string
	cut := false
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			for utf8.RuneCountInString(word) > width {
				if line != "" {
					out = append(out, line)
					line = ""
				}
				r := []rune(word)
				out = append(out, string(r[:width]))
				word = string(r[width:])
			}
			switch {
			case line == "":
				line = word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
		if len(out) > max {
			cut = true
			break
		}
	}
	if len(out) > max {
		out, cut = out[:max], true
	}
	for len(out) > 1 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if cut {
		last := []rune(out[len(out)-1])
		if len(last) >= width {
			last = last[:width-1]
		}
		out[len(out)-1] = string(last) + "…"
	}
	return out
}

func TestWrapMatchesReference(t *testing.T) {
	t.Parallel()
	cases := []string{
		"", "a", "\n", "\n\n\n\n\n\n\n", "   ", "Run the tests", strings.Repeat("x", 28), strings.Repeat("x", 29),
		strings.Repeat("x", 200), "short " + strings.Repeat("y", 60) + " tail",
		"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen",
		"a\x00b\x01c\td\x7fe", "bad \xff\xfe utf8 \xff", "\uFFFD\xff", "ünï 🚀 漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字",
		"line one\n\nline three\n", "x\u00a0y\u0085z", strings.Repeat("word ", 100),
	}
	alphabet := []rune{'a', 'b', ' ', ' ', '\n', '\t', '\x00', 'ü', '漢', '\u00a0', 0xFFFD}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range r.IntN(300) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
			if r.IntN(50) == 0 {
				b.WriteByte(0xff)
			}
		}
		cases = append(cases, b.String())
	}
	for _, c := range cases {
		for _, wm := range [][2]int{{wrapWidth, wrapLines}, {5, 3}, {1, 1}, {3, 10}} {
			assert.Equal(t, referenceWrap(c, wm[0], wm[1]), wrap(c, wm[0], wm[1]), "%q width %d max %d", c, wm[0], wm[1])
		}
	}
}
