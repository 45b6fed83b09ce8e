package cli

import (
	"strings"
)

// utf8Locale reports whether the locale, as LC_ALL, LC_CTYPE and LANG set
// it (the first that is set wins, as in setlocale), takes UTF-8. None set
// counts as UTF-8, as it does for Go and for the terminals of today; one
// set to C, POSIX or another charset (en_US.ISO-8859-1) does not, and
// dtree then spells its symbols in ASCII (readme/run.md#progress).
func utf8Locale(getenv func(string) string) bool {
	if getenv == nil {
		return true
	}
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return true
}

// symbols are the characters dtree's own words use on a terminal, and
// their ASCII spelling.
var symbols = strings.NewReplacer(
	"→", "->",
	"✓", "ok",
	"✗", "x",
	"↩", "<-",
	"…", "...",
	"·", "-",
	"├─", "|-",
	"└─", "`-",
	"│", "|",
	"─", "-",
	"—", "-",
	"−", "-",
)

// asciiSymbols spells dtree's symbols in ASCII; other text, a node's, is
// left as it is.
func asciiSymbols(b []byte) []byte {
	return []byte(symbols.Replace(string(b)))
}
