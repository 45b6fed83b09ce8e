package agent

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/types"
)

// The ring must hold exactly the last max bytes whatever the write sizes.
func TestTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int
		writes []string
	}{
		{name: "nothing", max: 4},
		{name: "under", max: 8, writes: []string{"ab", "cd"}},
		{name: "exactly", max: 4, writes: []string{"ab", "cd"}},
		{name: "wraps", max: 4, writes: []string{"abc", "def", "g"}},
		{name: "wraps many times", max: 5, writes: []string{"ab", "cdefg", "h", "ijklmn", "op", "q", "rstuvwxyz", "0"}},
		{name: "one write longer than max", max: 3, writes: []string{"a", "bcdefgh"}},
		{name: "write of max after wrap", max: 3, writes: []string{"ab", "cd", "efg", "h"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tl := tail{max: tt.max}
			all := ""
			for _, w := range tt.writes {
				tl.add([]byte(w))
				all += w
				want := all[max(0, len(all)-tt.max):]
				assert.Equal(t, want, tl.String(), "after %q", w)
				assert.Equal(t, len(all) > tt.max, tl.truncated())
				assert.LessOrEqual(t, len(tl.buf), tt.max)
			}
			assert.Equal(t, int64(len(all)), tl.n)
		})
	}
}

func TestTailDropsACutRune(t *testing.T) {
	t.Parallel()
	tl := tail{max: 5}
	tl.add([]byte("x日本")) // 7 bytes; the last 5 start inside 日
	assert.Equal(t, "本", tl.String())
}

func TestParseEnvelope(t *testing.T) {
	t.Parallel()
	def := Definition{Name: "j", Output: OutputJSON, AnswerPath: "out.0.text", ErrorPath: "err",
		InputTokensPath: "u.in", OutputTokensPath: "u.out", CostPath: "u.cost", DurationPath: "ms"}
	tests := []struct {
		name       string
		def        Definition
		stdout     string
		total      int64 // 0: len(stdout)
		truncated  bool
		wantAnswer string
		wantError  bool
		wantErr    string
		check      func(t *testing.T, e envelope)
	}{
		{name: "array path and usage", stdout: `{"out":[{"text":"hi"}],"u":{"in":3,"out":4.0,"cost":0.5},"ms":9}`,
			wantAnswer: "hi", check: func(t *testing.T, e envelope) {
				require.NotNil(t, e.usage.InputTokens)
				assert.Equal(t, int64(3), *e.usage.InputTokens)
				assert.Equal(t, int64(4), *e.usage.OutputTokens)
				assert.InDelta(t, 0.5, *e.usage.CostUSD, 1e-9)
				assert.Equal(t, int64(9), *e.usage.DurationMS)
			}},
		{name: "wrong types are unknown, null silently", stdout: `{"out":[{"text":"hi"}],"u":{"in":"3","out":null,"cost":true},"ms":[1]}`,
			wantAnswer: "hi", check: func(t *testing.T, e envelope) {
				u, warnings := CheckUsage(e.usage)
				assert.Nil(t, u.InputTokens)
				assert.Nil(t, u.OutputTokens)
				assert.Nil(t, u.CostUSD)
				assert.Nil(t, u.DurationMS)
				assert.Equal(t, []string{"input_tokens is not a number dtree can read", "duration_ms is not a number dtree can read",
					"cost_usd is not a number dtree can read"}, warnings)
			}},
		{name: "structured answer as JSON", stdout: `{"out":[{"text":{"b":[1,2]}}]}`, wantAnswer: `{"b":[1,2]}`},
		{name: "missing answer is not an empty one", stdout: `{"out":[]}`, wantErr: `answer_path "out.0.text" not found in the output`},
		{name: "empty answer", stdout: `{"out":[{"text":""}]}`, wantAnswer: ""},
		{name: "an array of events: the last with the answer", stdout: `[{"type":"init"},{"out":[{"text":"first"}]},{"out":[{"text":"last"}],"u":{"in":7}},{"type":"bye"}]`,
			wantAnswer: "last", check: func(t *testing.T, e envelope) {
				require.NotNil(t, e.usage.InputTokens, "usage of the object with the answer")
				assert.Equal(t, int64(7), *e.usage.InputTokens)
			}},
		{name: "events a line: the last with the answer", stdout: "{\"type\":\"init\"}\n{\"out\":[{\"text\":\"a\"}]}\n\x1b[0m{\"out\":[{\"text\":\"b\"}]}\n{\"type\":\"bye\"}\n", wantAnswer: "b"},
		{name: "events without the answer path", stdout: "{\"type\":\"init\"}\n{\"type\":\"bye\"}\n", wantErr: `answer_path "out.0.text" not found in the output`},
		{name: "the last event says it failed", stdout: `[{"out":[{"text":"a"}]},{"err":true}]`, wantError: true},
		{name: "error flag must be true, not truthy", stdout: `{"out":[{"text":"x"}],"err":"yes"}`, wantAnswer: "x"},
		{name: "error flag", stdout: `{"out":[{"text":"x"}],"err":true}`, wantAnswer: "x", wantError: true},
		{name: "no answer path: the object", def: Definition{Output: OutputJSON},
			stdout: "note {\"a\": {\"b\": 1}} end", wantAnswer: `{"a": {"b": 1}}`},
		{name: "braces but not JSON", stdout: "{not json}", wantErr: "no JSON envelope"},
		{name: "no braces", stdout: "plain", wantErr: "no JSON object"},
		{name: "exactly 64 KiB", stdout: `{"out":`, total: 65536, wantErr: "truncated"},
		{name: "tail of a longer stdout", stdout: `"x"}`, total: 5 << 20, truncated: true, wantErr: "only the last 4 of 5242880 bytes"},
		{name: "text trims", def: Definition{Output: OutputText}, stdout: "\n answer \n", wantAnswer: "answer"},
		{name: "unknown format", def: Definition{Output: "xml"}, stdout: "<a/>", wantErr: "unknown output format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := tt.def
			if d.Output == "" {
				d = def
			}
			total := tt.total
			if total == 0 {
				total = int64(len(tt.stdout))
			}
			e, err := parseEnvelope(d, tt.stdout, total, tt.truncated)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAnswer, e.answer)
			assert.Equal(t, tt.wantError, e.failed)
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

// parseEnvelope reads a whole stdout as Run reads it piecewise.
func parseEnvelope(def Definition, stdout string, total int64, truncated bool) (envelope, error) {
	return decodeAll(def, output{stdout: stdout, total: total, truncated: truncated})
}

func TestChildEnv(t *testing.T) {
	t.Parallel()
	def := Definition{Env: map[string]string{"B": "def", "TERM": "vt100"}, UnsetEnv: []string{"GONE"}}
	got := childEnv([]string{"A=1", "B=base", "GONE=x", "NO_COLOR=0", "EMPTY=", "NOEQUALS"}, def)
	assert.Equal(t, []string{"A=1", "EMPTY=", "NOEQUALS", "B=def", "NO_COLOR=1", "TERM=vt100"}, got)
}

// A definition's EnvDefaults are the CLI's unless dtree's environment
// has its own value, which the user set and which wins (claude's
// CLAUDE_CODE_MAX_RETRIES); Env wins over both.
func TestChildEnvDefaults(t *testing.T) {
	t.Parallel()
	def := Definition{
		EnvDefaults: map[string]string{"RETRIES": "1", "MINE": "1", "EMPTY": "1", "BOTH": "default"},
		Env:         map[string]string{"BOTH": "env"},
	}
	got := childEnv([]string{"MINE=7", "EMPTY=", "RETRIES_X=3", "BOTH=user"}, def)
	assert.Equal(t, []string{"MINE=7", "EMPTY=", "RETRIES_X=3", "BOTH=env", "NO_COLOR=1", "RETRIES=1", "TERM=dumb"}, got)
}

func TestMessageLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 400)
	tests := []struct {
		name, got, want string
	}{
		{name: "first line", got: firstLine("\n  one \ntwo"), want: "one"},
		{name: "stderr line", got: stderrLine("one\n two \n\n"), want: "two"},
		{name: "minutes", got: types.ShortDuration(10 * time.Minute), want: "10m"},
		{name: "hours", got: types.ShortDuration(2 * time.Hour), want: "2h"},
		{name: "mixed", got: types.ShortDuration(90*time.Minute + 5*time.Second), want: "1h30m5s"},
		{name: "sub-second", got: types.ShortDuration(500 * time.Millisecond), want: "500ms"},
		{name: "clipped on a rune boundary", got: clip(long), want: strings.Repeat("é", 150) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.got)
		})
	}
}

// objects hands over each top-level JSON object once its closing brace
// has arrived, whatever the write sizes, skipping what is between them.
func TestObjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []string
	}{
		{name: "one object", in: `{"a":1}`, want: []string{`{"a":1}`}},
		{name: "escapes and prose around", in: "\x1b[?1004lhi {\"a\":{\"b\":2}} bye\n{\"c\":3}",
			want: []string{`{"a":{"b":2}}`, `{"c":3}`}},
		{name: "braces and quotes in strings", in: `{"a":"}{\"}\\","b":"{"}`, want: []string{`{"a":"}{\"}\\","b":"{"}`}},
		{name: "pretty-printed", in: "{\n  \"a\": {\n    \"b\": [1, {}]\n  }\n}\n", want: []string{"{\n  \"a\": {\n    \"b\": [1, {}]\n  }\n}"}},
		{name: "cut off", in: `{"a":{"b":1}`, want: nil},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 3, 1000} {
			t.Run(tt.name+"/"+strconv.Itoa(size), func(t *testing.T) {
				t.Parallel()
				var got []string
				o := splitObjects(func(b []byte) { got = append(got, string(b)) })
				for in := tt.in; len(in) > 0; {
					k := min(size, len(in))
					o.write([]byte(in[:k]))
					in = in[k:]
				}
				o.close()
				assert.Equal(t, tt.want, got)
			})
		}
	}
}
