package response_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/response"
)

// findCases are FindObjects' examples; FuzzFindObjects starts from them.
var findCases = []struct {
	name string
	in   string
	want []string
}{
	{"plain", `{"a":1}`, []string{`{"a":1}`}},
	{"empty object", `{}`, []string{`{}`}},
	{"none", "no braces at all", nil},
	{"empty text", "", nil},
	{"fenced", "Here you go:\n```json\n{\"answer\": \"Yes\"}\n```\n", []string{`{"answer": "Yes"}`}},
	{"prose around", `I think {"a":1} is right, and {"b":2}.`, []string{`{"a":1}`, `{"b":2}`}},
	{"adjacent", `{"a":1}{"b":2}`, []string{`{"a":1}`, `{"b":2}`}},
	{"whitespace inside", "{ \"a\" :\t[ 1 ,\r\n 2 ] }", []string{"{ \"a\" :\t[ 1 ,\r\n 2 ] }"}},
	{"nested returned once", `x {"a":{"b":[1,{"c":2}]}} y`, []string{`{"a":{"b":[1,{"c":2}]}}`}},
	{"objects in a top-level array", `[{"a":1},{"b":2}]`, []string{`{"a":1}`, `{"b":2}`}},
	{"csi before", "\x1b[?1004l\x1b[31m{\"a\":1}\x1b[0m", []string{`{"a":1}`}},
	{"osc title before", "\x1b]0;claude\x07{\"a\":1}", []string{`{"a":1}`}},
	{"colour inside the object", "{\"a\": \x1b[32m\"x\"\x1b[0m}", []string{`{"a": "x"}`}},
	{"esc before a brace", "\x1b{\"a\":1}", []string{`{"a":1}`}},
	{"braces in strings", `{"a":"x } y { z","}{":"{"}`, []string{`{"a":"x } y { z","}{":"{"}`}},
	{"escaped quotes", `{"a":"say \"hi\" }"} tail`, []string{`{"a":"say \"hi\" }"}`}},
	{"escaped backslash before quote", `{"a":"c:\\"} {"b":2}`, []string{`{"a":"c:\\"}`, `{"b":2}`}},
	{"unicode escapes", `{"u":"\u00e9\uD83D\uDE00"}`, []string{`{"u":"\u00e9\uD83D\uDE00"}`}},
	{"raw utf-8", `{"u":"héllo 世界"}`, []string{`{"u":"héllo 世界"}`}},
	{"invalid utf-8 in a string is valid json", "{\"a\":\"\xff\"}", []string{"{\"a\":\"\xff\"}"}},
	{"numbers and literals", `{"n":-0.5e+3,"z":0,"i":12,"t":true,"f":false,"x":null}`, []string{`{"n":-0.5e+3,"z":0,"i":12,"t":true,"f":false,"x":null}`}},
	{"stray brace in prose", `use {x to start, then {"a":1}`, []string{`{"a":1}`}},
	{"stray brace and quote in prose", `note {"unclosed then {"answer":"No"}`, []string{`{"answer":"No"}`}},
	{"stray closing braces", `}} {"a":1} }`, []string{`{"a":1}`}},
	{"outer never closes", `{"outer": {"inner": 1}`, []string{`{"inner": 1}`}},
	{"outer breaks later", `{"outer": {"inner": 1}, oops}`, []string{`{"inner": 1}`}},
	{"overlapping candidates", `{"k":"{"} ":1}`, []string{`{"k":"{"}`}},
	{"unquoted key", `{a:1}`, nil},
	{"single quotes", `{'a':1}`, nil},
	{"trailing comma", `{"a":1,}`, nil},
	{"leading zero", `{"a":01}`, nil},
	{"bare minus", `{"a":-}`, nil},
	{"dot without digits", `{"a":1.}`, nil},
	{"exponent without digits", `{"a":1e}`, nil},
	{"bad literal", `{"a":tru}`, nil},
	{"literal run on", `{"a":truex}`, nil},
	{"bad escape", `{"a":"\x"}`, nil},
	{"short unicode escape", `{"a":"\u12"}`, nil},
	{"newline in a string", "{\"a\":\"line\nbreak\"}", nil},
	{"missing colon", `{"a" 1}`, nil},
	{"missing comma", `{"a":1 "b":2}`, nil},
	{"mismatched close", `{"a":[1}`, nil},
	{"echo then answer", "Format:\n{\"answer\": \"<one of the answers above>\"}\nMy answer:\n```json\n{\"answer\": \"No\", \"reasons\": [\"x\"]}\n```",
		[]string{`{"answer": "<one of the answers above>"}`, `{"answer": "No", "reasons": ["x"]}`}},
}

func TestFindObjects(t *testing.T) {
	t.Parallel()
	for _, tc := range findCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := response.FindObjects(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, slowFind(response.StripANSI(tc.in)), got, "reference")
			checkScan(t, tc.in)
		})
	}
}

// TestFindObjectsDepth checks encoding/json's nesting limit of 10000: an
// object one level too deep is not valid, but the one inside it is.
func TestFindObjectsDepth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		levels int
		open   string // one level's opening
		close  string
		skip   int // how many outer levels are too deep
	}{
		{"objects at the limit", 10000, `{"a":`, "}", 0},
		{"objects past the limit", 10001, `{"a":`, "}", 1},
		{"objects well past the limit", 10005, `{"a":`, "}", 5},
		// Each level is two deep: 2*(10002-5002) = 10000.
		{"arrays between objects", 10002, `{"a":[`, "]}", 5002},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := strings.Repeat(tc.open, tc.levels) + "1" + strings.Repeat(tc.close, tc.levels)
			level := func(l int) string { return s[len(tc.open)*l : len(s)-len(tc.close)*l] }
			want := level(tc.skip)
			assert.True(t, json.Valid([]byte(want)))
			if tc.skip > 0 {
				assert.False(t, json.Valid([]byte(level(tc.skip-1))), "one level out should be too deep")
			}
			assert.Equal(t, []string{want}, response.FindObjects(s))
			// The parser itself, not only json.Valid behind it, must see
			// the outer levels as too deep.
			spans, _ := response.Scan(s)
			if assert.NotEmpty(t, spans) {
				assert.Equal(t, [2]int{len(tc.open) * tc.skip, len(s) - len(tc.close)*tc.skip}, spans[0])
			}
		})
	}
}

func TestFindObjectsLargeStrayBraces(t *testing.T) {
	t.Parallel()
	in := strayBraces(1<<20, 10_000) + `{"answer":"Yes"}`
	got := response.FindObjects(in)
	assert.Equal(t, []string{`{"answer":"Yes"}`}, got)
	_, live := response.Scan(in)
	assert.LessOrEqual(t, live, 2)
}

// TestFindObjectsAgainstReference compares FindObjects with slowFind on
// random texts built from valid objects, objects with a token dropped,
// added or cut, and prose with stray braces, quotes and escapes. They reach
// far more valid and nearly valid objects than the fuzzer's random bytes.
func TestFindObjectsAgainstReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var valid int
	for range 20_000 {
		var toks []string
		for range 1 + rng.IntN(3) {
			if rng.IntN(3) == 0 {
				toks = append(toks, stray[rng.IntN(len(stray))])
				continue
			}
			obj := genObject(rng, 3, nil)
			switch rng.IntN(5) {
			case 0: // drop a token
				i := rng.IntN(len(obj))
				obj = append(obj[:i], obj[i+1:]...)
			case 1: // add one
				i := rng.IntN(len(obj) + 1)
				obj = slices.Insert(obj, i, stray[rng.IntN(len(stray))])
			case 2: // cut short
				obj = obj[:rng.IntN(len(obj))]
			}
			toks = append(toks, obj...)
		}
		in := strings.Join(toks, "")
		got := response.FindObjects(in)
		if want := slowFind(response.StripANSI(in)); !slices.Equal(got, want) {
			t.Fatalf("FindObjects(%q)\n got %q\nwant %q", in, got, want)
		}
		checkScan(t, in)
		for _, obj := range got {
			if len(obj) > 8 {
				valid++
			}
		}
	}
	assert.Greater(t, valid, 10_000, "the generator should make many non-trivial objects")
}

// stray is what genObject's objects are mixed and broken with.
var stray = []string{
	"{", "}", "[", "]", ":", ",", `"`, `\`, "x", " use {x ", ` say {"hi `, "01", "nul",
	"\n", "\x1b[31m", "\x1b]0;t\x07", "\x1b",
}

// genObject appends the tokens of a random valid JSON object to toks.
func genObject(rng *rand.Rand, depth int, toks []string) []string {
	toks = append(toks, "{")
	for i := range rng.IntN(4) {
		if i > 0 {
			toks = append(toks, ",")
		}
		toks = append(toks, genString(rng), ws(rng), ":", ws(rng))
		toks = genValue(rng, depth-1, toks)
	}
	return append(toks, ws(rng), "}")
}

func genValue(rng *rand.Rand, depth int, toks []string) []string {
	switch n := rng.IntN(8); {
	case n == 0 && depth > 0:
		return genObject(rng, depth, toks)
	case n == 1 && depth > 0:
		toks = append(toks, "[")
		for i := range rng.IntN(3) {
			if i > 0 {
				toks = append(toks, ",", ws(rng))
			}
			toks = genValue(rng, depth-1, toks)
		}
		return append(toks, "]")
	case n < 5:
		return append(toks, genString(rng))
	}
	return append(toks, []string{"0", "-1", "12.5", "-0.5e+3", "1E2", "true", "false", "null"}[rng.IntN(8)])
}

func genString(rng *rand.Rand) string {
	return []string{`"k"`, `""`, `"a}{"`, `"\""`, `"\\"`, `"\u00e9"`, `"x\"}"`, `"é{"`}[rng.IntN(8)]
}

func ws(rng *rand.Rand) string {
	return []string{"", "", " ", "\n\t"}[rng.IntN(4)]
}

// slowFind is FindObjects' rule applied literally: at each '{', the
// shortest prefix from there that json.Valid accepts, if any, and then on
// after it. It is cubic, for small inputs only.
func slowFind(s string) []string {
	var out []string
	next := 0
	for _, sp := range slowSpans(s) {
		if sp[0] >= next {
			out = append(out, s[sp[0]:sp[1]])
			next = sp[1]
		}
	}
	return out
}

// slowSpans is every object that starts in s, as scan finds them.
func slowSpans(s string) [][2]int {
	spans := [][2]int{}
	for i := range len(s) {
		if s[i] != '{' {
			continue
		}
		for j := i + 1; j <= len(s); j++ {
			if s[j-1] == '}' && json.Valid([]byte(s[i:j])) {
				spans = append(spans, [2]int{i, j})
				break
			}
		}
	}
	return spans
}

// checkScan holds scan, under FindObjects, to slowSpans and to two parsers.
func checkScan(t testing.TB, in string) {
	t.Helper()
	spans, live := response.Scan(in)
	if want := slowSpans(response.StripANSI(in)); !slices.Equal(spans, want) {
		t.Fatalf("scan(%q)\n got %v\nwant %v", in, spans, want)
	}
	if live > 2 {
		t.Fatalf("scan(%q) ran %d parsers at once", in, live)
	}
}

var ansiCases = []struct {
	name, in, want string
}{
	{"none", "plain {text}", "plain {text}"},
	{"focus mode", "\x1b[?1004lhi", "hi"},
	{"colour", "\x1b[31mred\x1b[0m", "red"},
	{"colour with intermediates", "\x1b[1;38;5;208mx", "x"},
	{"osc title with bel", "\x1b]0;title\x07text", "text"},
	{"osc hyperlink with st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
	{"osc ended by the next escape", "\x1b]0;title\x1b[31mred", "red"},
	{"unterminated osc keeps its text", "\x1b]0;t {\"a\":1}", "0;t {\"a\":1}"},
	{"cut csi keeps its text", "\x1b[31", "31"},
	{"csi with bad byte", "\x1b[31\x01x", "31\x01x"},
	{"charset", "\x1b(Bx", "x"},
	{"keypad mode", "\x1b=x\x1b>", "x"},
	{"lone esc at end", "a\x1b", "a"},
	{"esc before brace keeps it", "\x1b{}\x1b}", "{}}"},
	{"esc esc", "\x1b\x1b[0mx", "x"},
	{"dcs", "\x1bPq#0\x1b\\x", "x"},
	// From the agent runner's own table, when it had a remover of its own.
	{"private mode", "\x1b[?1004l\x1b[?25h{\"a\":1}", "{\"a\":1}"},
	{"osc link with st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
	{"charset and two-byte", "\x1b(Ba\x1b=b\x1bMc", "abc"},
	{"non-ascii kept", "\x1b[2Künï 日本", "ünï 日本"},
	{"lone esc before a sequence", "a\x1b\x1b[0m[31mb", "a[31mb"},
}

func TestStripANSI(t *testing.T) {
	t.Parallel()
	for _, tc := range ansiCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, response.StripANSI(tc.in))
		})
	}
}

// strayBraces is about n bytes of prose with exactly k stray '{', some
// opening a string or an array, as agents write when they quote code.
func strayBraces(n, k int) string {
	frags := []string{"use {x here, ", `say {"ok then `, "a {b} c ", `map{"a": [1, `}
	chunk := max(n/k, 16)
	fill := strings.Repeat("The quick brown fox jumps over the lazy dog. ", chunk/40+1)
	var b strings.Builder
	b.Grow(chunk * k)
	for i := range k {
		f := frags[i%len(frags)]
		b.WriteString(f)
		b.WriteString(fill[:max(chunk-len(f), 0)])
	}
	return b.String()
}
