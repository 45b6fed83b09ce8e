package types_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/types"
)

func TestPlural(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		what string
		want string
	}{
		{1, "node", "1 node"},
		{0, "step", "0 steps"},
		{3, "retry", "3 retries"},
		{1, "retry", "1 retry"},
		{2, "reply", "2 replies"},
		{2, "key", "2 keys"},
		{2, "day", "2 days"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, types.Plural(tt.n, tt.what))
	}
}

func TestExcerptAndClip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text          string
		max           int
		excerpt, clip string
	}{
		{"", 5, "", ""},
		{"abc", 3, "abc", "abc"},
		{"abcd", 3, "abc…", "abc…"},
		{"abc\n", 3, "abc…", "abc…"},
		{"ab\ncd", 5, "ab…", "ab\ncd"},
		{"ünï🚀x", 4, "ünï🚀…", "ünï🚀…"},
		{"x", 0, "…", "…"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.excerpt, types.Excerpt(tt.text, tt.max), "Excerpt(%q, %d)", tt.text, tt.max)
		assert.Equal(t, tt.clip, types.Clip(tt.text, tt.max), "Clip(%q, %d)", tt.text, tt.max)
	}
}

// A huge one-line text costs no more than a short one: 10 MB cut 1,000
// times took half a minute when each call converted the whole line.
func TestExcerptReadsOnlyWhatItKeeps(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 10<<20)
	start := time.Now()
	for range 1000 {
		assert.Len(t, types.Excerpt(huge, 60), 60+len("…"))
		assert.Len(t, types.Clip(huge, 60), 60+len("…"))
	}
	assert.Less(t, time.Since(start), time.Second)
}

func TestByteBounds(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"head whole", types.HeadBytes("abc", 5), "abc"},
		{"head cut before a character", types.HeadBytes("aé", 2), "a"},
		{"tail cut after a character", types.TailBytes("éa", 2), "a"},
		{"tail whole", types.TailBytes("abc", 3), "abc"},
		{"last lines", types.LastLines("a\nb\nc\n", 2, 100), "b\nc"},
		{"last lines bounded by bytes", types.LastLines("a\nbbbb", 5, 3), "bbb"},
		{"no line break", types.LastLines("abc", 2, 100), "abc"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	for in, want := range map[string]string{"Path": "path", " none ": "none", "previous": "previous", "all": ""} {
		if got, ok := types.ContextMode(in); got != want || ok != (want != "") {
			t.Errorf("ContextMode(%q) = %q, %t", in, got, ok)
		}
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`make test; echo "exit $?"`, `"make test; echo "exit $?""`},
		{`C:\temp\out`, `"C:\temp\out"`},
		{"café → ✓", `"café → ✓"`},
		{"a\tb\nc\r", `"a\tb\nc\r"`},
		{"bell\x07 esc\x1b[2J", `"bell\x07 esc\x1b[2J"`},
		{"bad \xff byte", `"bad \xff byte"`},
		{"rtl \u202e override", `"rtl \u202e override"`},
		{"", `""`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, types.Quote(tt.in), "Quote(%q)", tt.in)
	}
}
