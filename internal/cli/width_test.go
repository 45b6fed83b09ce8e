package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFitWidth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s     string
		cols  int
		ascii bool
		want  string
	}{
		{"short", 10, false, "short"},
		{"exactly10!", 10, false, "exactly10!"},
		{"eleven cols", 10, false, "eleven co…"},
		{"eleven cols", 10, true, "eleven ..."},
		{"日本語のテキスト", 9, false, "日本語の…"},                  // 2 columns each
		{"e\u0301te\u0301", 3, false, "e\u0301te\u0301"}, // combining accents take none
		{"anything", 0, false, ""},
		{"anything", 2, true, ".."},
	}
	for _, tt := range tests {
		got := fitWidth(tt.s, tt.cols, tt.ascii)
		assert.Equal(t, tt.want, got, "fitWidth(%q, %d, %v)", tt.s, tt.cols, tt.ascii)
		assert.LessOrEqual(t, textWidth(got), max(tt.cols, 0))
	}
}

// A huge line is cut having read only the columns it keeps: a megabyte
// costs what 80 columns do (reading it all took 1.2 s under -race on a
// loaded machine).
func TestFitWidthHuge(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("界", 1<<20)
	start := time.Now()
	got := fitWidth(s, 80, false)
	assert.Equal(t, 79, textWidth(got))
	assert.Less(t, time.Since(start), 100*time.Millisecond)
}
