package types

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNearest(t *testing.T) {
	t.Parallel()
	keys := []string{"default_cli", "default_validate_cli", "default_retry_cli", "log_dir"}
	cmds := []string{"get", "set", "unset", "list", "path"}
	tests := []struct {
		word       string
		candidates []string
		want       string
	}{
		{"default_clii", keys, "default_cli"},
		{"DEFAULT_CLI", keys, "default_cli"},
		{"default_retry_cli", keys, ""}, // itself: nothing to suggest
		{"log-dir", keys, "log_dir"},
		{"lst", cmds, "list"},
		{"gte", cmds, ""}, // a transposition is 2 edits, too many for 3 letters
		{"unsett", cmds, "unset"},
		{"colour", keys, ""},
		{"", keys, ""},
		{"gemni", []string{"claude", "codex", "gemini"}, "gemini"},
		{"retrys", []string{"retries", "retry-cli", "timeout"}, "retries"},
		{strings.Repeat("x", 1<<20), keys, ""},
	}
	for _, tt := range tests {
		got, ok := Nearest(tt.word, tt.candidates)
		assert.Equal(t, tt.want, got, "Nearest(%.20q)", tt.word)
		assert.Equal(t, tt.want != "", ok)
	}
	assert.Equal(t, "; did you mean list?", DidYouMean("lst", cmds))
	assert.Empty(t, DidYouMean("xyz", cmds))
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 0, EditDistance("abc", "abc"))
	assert.Equal(t, 1, EditDistance("abc", "abd"))
	assert.Equal(t, 3, EditDistance("", "abc"))
	assert.Equal(t, 64, EditDistance(strings.Repeat("a", 65), "a"), "long words are not compared")
}
