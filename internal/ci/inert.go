package ci

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// How the GitHub Actions runner finds a workflow command in a line of a
// step's output (actions/runner, src/Runner.Worker/ActionCommandManager.cs
// TryProcessCommand, which tries src/Runner.Common/ActionCommand.cs
// TryParseV2 and then TryParse on every line):
//
//   - TryParseV2: message.TrimStart(), then message.StartsWith("::"): the
//     "::name::" form at the start of a line, after leading white space.
//   - TryParse: message.IndexOf("##["), then the first ']' after it: the
//     older "##[name]" form anywhere in a line. Every command is
//     accepted in this form too, stop-commands and add-mask included, and
//     only the token of a stop-commands resumes.
//
// Lines are what StreamReader.ReadLine returns (src/Runner.Sdk/
// ProcessInvoker.cs): a lone '\r' ends one as '\n' does. StartsWith and
// IndexOf with a string are culture-sensitive in .NET; with ICU (the
// runner does not run in invariant mode) characters without collation
// weight are skipped: "#\u200b#[" is found as "##[" and "\u200b::" starts
// with "::" (learn.microsoft.com/dotnet/core/extensions/globalization-icu).
// So a zero-width character does not break a command; a plain space,
// which has a weight and which TrimStart does not reach inside a word,
// does. Neutralize puts one inside each marker: "## [" and ": :".

// Neutralize makes every line of b inert for the runner: "##[" anywhere
// becomes "## [" (in JSON, whose '#' are all inside strings, "##\u005b":
// the same string), and, when lineStarts, a line that starts with "::"
// (after white space) starts with ": :". A line starts at the start of b
// and after every '\n' or lone '\r'; without lineStarts only after a lone
// '\r', which dtree never writes itself. It returns b itself when nothing
// changes.
func Neutralize(b []byte, json, lineStarts bool) []byte {
	if !needsLook(b) {
		return b
	}
	var out []byte
	last := 0
	put := func(at int, ins string) {
		out = append(append(out, b[last:at]...), ins...)
		last = at
	}
	// prev1, prev2 are the last two runes with a weight; start is true
	// while the line has had only white space and weightless runes; colon
	// that its first weighted rune was ':'.
	var prev1, prev2 rune
	start, colon := true, false
	newLine := func(check bool) {
		prev1, prev2 = 0, 0
		start, colon = check, false
	}
	newLine(lineStarts)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == '\n':
			newLine(lineStarts)
		case r == '\r' && (i+1 == len(b) || b[i+1] != '\n'):
			newLine(true)
		case weightless(r):
		case start && !colon && unicode.IsSpace(r):
		default:
			if r == '[' && prev1 == '#' && prev2 == '#' {
				if json {
					out = append(append(out, b[last:i]...), `\u005b`...)
					last = i + n
				} else {
					put(i, " ")
				}
			}
			if start {
				switch {
				case colon && r == ':':
					put(i, " ")
					start = false
				case !colon && r == ':' && !json:
					colon = true
				default:
					start = false
				}
			}
			prev2, prev1 = prev1, r
		}
		i += n
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// needsLook is false for text that can hold no command: no "##" and no
// ':', the common case, which Neutralize then returns untouched.
func needsLook(b []byte) bool {
	return bytes.IndexByte(b, ':') >= 0 || bytes.Contains(b, []byte("#")) && bytes.IndexByte(b, '[') >= 0
}

// weightless reports whether ICU's collation gives r no weight, or may:
// control and format characters, variation selectors, the other default
// ignorable code points and combining marks. Taking too many is safe:
// it only breaks a marker that was not one.
func weightless(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\r' || r == 0x7f ||
		unicode.In(r, unicode.Cc, unicode.Cf, unicode.Mn, unicode.Me, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}
