package response

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The to* functions read a JSON value as the Go type a response field has,
// accepting the near misses LLMs write. ok is false when the value has no
// clear meaning as that type; the value is then the zero value.

// toBool reads true and false, the strings "true", "yes", "y", "1" and
// their opposites in any case, the numbers 1 and 0, and null as false.
func toBool(raw json.RawMessage) (v, ok bool) {
	switch raw = bytes.TrimSpace(raw); {
	case string(raw) == "true":
		return true, true
	case string(raw) == "false", string(raw) == "null":
		return false, true
	case raw[0] == '"':
		switch strings.ToLower(strings.TrimSpace(unquote(raw))) {
		case "true", "yes", "y", "1":
			return true, true
		case "false", "no", "n", "0":
			return false, true
		}
	default:
		switch f, err := strconv.ParseFloat(string(raw), 64); {
		case err == nil && f == 1:
			return true, true
		case err == nil && f == 0:
			return false, true
		}
	}
	return false, false
}

// number is the start of a string that toFloat reads as a number:
// "12", "12.5s", "1e3 tokens".
var number = regexp.MustCompile(`^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?`)

// toFloat reads a number, a string that starts with one ("12",
// "12 seconds", "1,234"), or null as 0. It never returns NaN or an
// infinity.
func toFloat(raw json.RawMessage) (float64, bool) {
	s := numberText(raw)
	if s == "" {
		return 0, string(bytes.TrimSpace(raw)) == "null"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// toInt reads what toFloat reads, rounded to a whole number.
func toInt(raw json.RawMessage) (int64, bool) {
	s := numberText(raw)
	if s == "" {
		return 0, string(bytes.TrimSpace(raw)) == "null"
	}
	if n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	// 2^63 itself is out of range; every float below it converts.
	if err != nil || math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, false
	}
	return int64(math.Round(f)), true
}

// numberText is the number a JSON number or string holds, with thousands
// separators gone, or "" if it holds none.
func numberText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch c := raw[0]; {
	case c == '-' || c >= '0' && c <= '9':
		return string(raw)
	case c == '"':
		s := strings.TrimSpace(unquote(raw))
		s = strings.NewReplacer(",", "", "_", "").Replace(s)
		return number.FindString(s)
	}
	return ""
}

// toString reads a string, a number or boolean as its text, null as "",
// and a list of one such value as that value.
func toString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '"':
		return unquote(raw), true
	case '{':
		return "", false
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil || len(items) != 1 || bytes.HasPrefix(bytes.TrimSpace(items[0]), []byte("[")) {
			return "", false
		}
		return toString(items[0])
	case 'n':
		return "", true
	}
	return string(raw), true
}

// toStrings reads a list of strings. A lone value is a list of one; null,
// "" and [] are an empty list; items that are not strings are kept as
// their compact JSON text, except null and blank strings, which are
// dropped. The list is never nil.
func toStrings(raw json.RawMessage) ([]string, bool) {
	raw = bytes.TrimSpace(raw)
	if raw[0] != '[' {
		return appendItem([]string{}, raw), true
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return []string{}, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = appendItem(out, bytes.TrimSpace(it))
	}
	return out, true
}

func appendItem(out []string, raw json.RawMessage) []string {
	switch raw[0] {
	case 'n':
		return out
	case '"':
		if s := unquote(raw); strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
		return out
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append(out, string(raw))
	}
	return append(out, b.String())
}

// unquote is the text of a JSON string, which raw is.
func unquote(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// head is the start of s on one line: runs of whitespace become one
// space, and at most n runes are kept, the last one "…" if s goes on.
func head(s string, n int) string {
	out := make([]rune, 0, n+2)
	space := false
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		if out = append(out, r); len(out) > n {
			return strings.TrimRight(string(out[:n-1]), " ") + "…"
		}
	}
	return string(out)
}

// tail is the end of s on one line, as head is its start.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	out := make([]rune, 0, n+2) // backwards
	space := false
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		if out = append(out, r); len(out) > n {
			out = out[:n-1]
			slices.Reverse(out)
			return "…" + strings.TrimLeft(string(out), " ")
		}
	}
	slices.Reverse(out)
	return string(out)
}
