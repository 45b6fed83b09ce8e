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
