package ci

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// runnerSees reports whether a line holds a workflow command as the runner
// reads it (ActionCommand.cs): "::" at its start after white space, or
// "##[" anywhere, skipping what ICU gives no weight, as .NET's
// culture-sensitive StartsWith and IndexOf do.
func runnerSees(line string) bool {
	var kept []rune
	for _, r := range line {
		if !weightless(r) {
			kept = append(kept, r)
		}
	}
	s := string(kept)
	return strings.HasPrefix(strings.TrimLeft(s, " \t\u00a0\u3000"), "::") || strings.Contains(s, "##[")
}

// runnerLines splits output as StreamReader.ReadLine does: at "\r\n",
// '\n' or a lone '\r'.
func runnerLines(s string) []string {
	return strings.FieldsFunc(strings.ReplaceAll(s, "\r\n", "\n"), func(r rune) bool { return r == '\n' || r == '\r' })
}

func TestNeutralizeLeavesNoCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"  ✗ attempt 1: FAIL ##[error]x\n", "  ✗ attempt 1: FAIL ## [error]x\n"},
		{"##[stop-commands]tok\n", "## [stop-commands]tok\n"},
		{"##[add-mask]s3cr3t\n", "## [add-mask]s3cr3t\n"},
		{"#\u200b#[error]x\n", "#\u200b# [error]x\n"},
		{"##\u00ad[error]x\n", "##\u00ad [error]x\n"},
		{"dtree: error: x\n::error::forged\n", "dtree: error: x\n: :error::forged\n"},
		{"  \t::warning::x\n", "  \t: :warning::x\n"},
		{"\u200b::error::x\n", "\u200b: :error::x\n"},
		{":\u200b:error::x\n", ":\u200b :error::x\n"},
		{"ok\r::error::x\n", "ok\r: :error::x\n"},
		{"a :: b\n", "a :: b\n"},
		{"# [x] and #[y]\n", "# [x] and #[y]\n"},
		{"plain text\n", "plain text\n"},
	} {
		got := string(Neutralize([]byte(tc.in), false, true))
		assert.Equal(t, tc.want, got, "%q", tc.in)
		for _, line := range runnerLines(got) {
			assert.False(t, runnerSees(line), "%q still holds a command in %q", tc.in, line)
		}
	}
}

func TestNeutralizeWholeOutput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		in               string
		json, lineStarts bool
		want             string
	}{
		{"dtree's own command kept", "::error file=c.csv::x ##[add-mask]y\n", false, false, "::error file=c.csv::x ## [add-mask]y\n"},
		{"a lone CR starts a line", "note\r::error::x\n", false, false, "note\r: :error::x\n"},
		{"CRLF does not", "::group::a\r\n::endgroup::\n", false, false, "::group::a\r\n::endgroup::\n"},
		{"every line start", "dtree: error: x\n::error::y\n  ::warning::z\n", false, true, "dtree: error: x\n: :error::y\n  : :warning::z\n"},
		{"JSON keeps its value", `{"a": "##[error]x", "b": "#` + "\u200b" + `#[x"}` + "\n", true, false, `{"a": "##\u005berror]x", "b": "#` + "\u200b" + `#\u005bx"}` + "\n"},
		{"nothing to do", "✓ 3 Write (1s)\n", false, true, "✓ 3 Write (1s)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := string(Neutralize([]byte(tc.in), tc.json, tc.lineStarts))
			assert.Equal(t, tc.want, got)
			var kept strings.Builder
			for _, r := range got {
				if !weightless(r) {
					kept.WriteRune(r)
				}
			}
			assert.NotContains(t, kept.String(), "##[")
		})
	}
}
