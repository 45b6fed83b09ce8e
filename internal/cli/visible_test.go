package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVisible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünï and → kept", "plain text, ünï and → kept"},
		{"two\tcolumns\nand lines", "two\tcolumns\nand lines"},
		{"\x1b]0;PWNED\a\x1b[2J", `\x1b]0;PWNED\a\x1b[2J`},
		{"ok\rfaked", `ok\rfaked`},
		{"\u009b31m C1 CSI", `\u009b31m C1 CSI`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"\u2067isolate\u2069", `\u2067isolate\u2069`},
		{"\x00\x7f", `\x00\x7f`},
	} {
		assert.Equal(t, tc.want, visible(tc.in), "%q", tc.in)
	}
}
