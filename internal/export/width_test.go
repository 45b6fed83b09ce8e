package export

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestColumns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"Run the tests", 13},
		{"ünï", 3},
		{"e\u0301", 1},               // e and a combining acute accent
		{"日本語のテキスト", 16},             // CJK ideographs and kana: wide
		{"테스트", 6},                   // Hangul: wide
		{"ＡＢＣ", 6},                   // fullwidth Latin
		{"ｶﾀｶﾅ", 4},                  // halfwidth katakana: narrow
		{"🚀 ship", 7},                // an emoji is wide
		{"❤\ufe0f", 2},               // a narrow symbol drawn as an emoji
		{"👍\ufe0f", 2},               // an emoji with a redundant selector
		{"✓ 2 visits · 1 retry", 20}, // the run's note
		{"", 0},
	} {
		assert.Equal(t, tc.want, columns(tc.in), "%q", tc.in)
	}
}

// TestSVGBoxFitsWideText checks that a box is wide enough for its text at
// charW a column: wide characters take two.
func TestSVGBoxFitsWideText(t *testing.T) {
	t.Parallel()
	for _, line := range []string{"日本語のテキストを要約する", "🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀", "Run the tests and summarize"} {
		b := box(picNode{kind: "process", lines: []string{line}})
		assert.GreaterOrEqual(t, b.w, float64(columns(line))*charW+2*padX, line)
	}
	narrow := box(picNode{kind: "process", lines: []string{"abcdefghijklmn"}})
	wide := box(picNode{kind: "process", lines: []string{"日本語のテキストを要約する一"}})
	assert.InDelta(t, 2*(narrow.w-2*padX), wide.w-2*padX, 0.01, "14 wide characters take twice the room of 14 narrow ones")
}
