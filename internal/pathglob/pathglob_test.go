package pathglob

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		patterns string
		in, out  []string
	}{
		{"*.go", []string{"main.go", "a/b/c.go", ".x.go"}, []string{"main.go.txt", "go", "a/main.c"}},
		{"docs", []string{"docs", "docs/a.md", "x/docs/y/z"}, []string{"docs2/a", "adocs"}},
		{"docs/", []string{"docs/a.md", "x/docs/y"}, []string{"docs", "x/docs"}},
		{"/docs", []string{"docs", "docs/a"}, []string{"x/docs", "x/docs/a"}},
		{"src/*.go", []string{"src/a.go"}, []string{"src/x/a.go", "y/src/a.go"}},
		{"src/**/*.go", []string{"src/a.go", "src/x/y/a.go"}, []string{"a.go", "lib/src/a.go"}},
		{"**/gen", []string{"gen", "a/gen", "a/b/gen/x"}, []string{"agen"}},
		{"abc/**", []string{"abc/x", "abc/x/y"}, []string{"abc", "x/abc/y"}},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b/c"}, []string{"b", "x/a/b"}},
		{"src/, !src/gen/", []string{"src/a.go", "src/x/gen.go"}, []string{"src/gen/a.go", "lib/a.go"}},
		{"src/\n!src/gen/\nsrc/gen/keep.go", []string{"src/gen/keep.go"}, []string{"src/gen/other.go"}},
		{"*, !*.md", []string{"a.go", "d/x"}, []string{"README.md", "d/x.md"}},
		{"file?.txt", []string{"file1.txt"}, []string{"file10.txt", "file.txt"}},
		{"[!a]*", []string{"b", "x/b"}, []string{"a", "abc"}},
		{"[a-c].txt", []string{"b.txt"}, []string{"d.txt"}},
		{`\!bang`, []string{"!bang"}, []string{"bang"}},
		{`with\*star`, []string{"with*star"}, []string{"withXstar"}},
		{"name with space", []string{"d/name with space"}, []string{"name"}},
		{"**", []string{"a", "a/b/c"}, nil},
		{"x", []string{"x", "a\nb/x", "\xff/x"}, []string{"\xff"}},
	}
	for _, tt := range tests {
		s, errs := Parse(tt.patterns)
		require.Empty(t, errs, tt.patterns)
		for _, p := range tt.in {
			assert.True(t, s.Match(p), "%q should match %q", tt.patterns, p)
		}
		for _, p := range tt.out {
			assert.False(t, s.Match(p), "%q should not match %q", tt.patterns, p)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ patterns, want string }{
		{"", "lists no pattern"},
		{" , \n ", "lists no pattern"},
		{"!a, !b", "every pattern is negated"},
		{"[abc", "is not a glob"},
		{"../x", `".." segment`},
		{"a/./b", `"." segment`},
		{"a//b", "empty segment"},
		{"/", "names no file"},
		{"!", "names no file"},
		{`a\`, "lone backslash"},
		{strings.Repeat("a,", MaxPatterns+1), "1001 patterns, more than the 1000"},
	}
	for _, tt := range tests {
		_, errs := Parse(tt.patterns)
		require.NotEmpty(t, errs, tt.patterns)
		assert.Contains(t, errs[0].Error(), tt.want, tt.patterns)
	}
}

// A path of thousands of segments against a pattern of many "**" takes
// time linear in each, not exponential.
func TestMatchHugePath(t *testing.T) {
	t.Parallel()
	s, errs := Parse(strings.Repeat("**/a/", 50) + "z")
	require.Empty(t, errs)
	long := strings.Repeat("a/", 4000) + "b"
	start := time.Now()
	assert.False(t, s.Match(long))
	assert.Less(t, time.Since(start), 2*time.Second)
}
