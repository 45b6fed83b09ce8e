package runlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A secret that is also a JSON word, a key, or part of every timestamp is
// masked inside string values only: the document still parses, with the
// same keys and the same non-string values.
func TestRedactorJSONMasksStringValuesOnly(t *testing.T) {
	t.Parallel()
	for _, r := range bothWays("A_KEY=true", "B_KEY=null", "C_KEY=node", "D_KEY=2026", "E_KEY=false", "F_KEY=nabc", "G_KEY=u003c") {
		jsonMasksStringValuesOnly(t, r)
	}
}

// bothWays is a Redactor of env, and one with many more secrets, so that
// its matchers scan a byte at a time rather than jump with bytes.Index.
func bothWays(env ...string) []*Redactor {
	many := env
	for i := range 2 * fewHeads {
		many = append(many, fmt.Sprintf("OTHER%d_KEY=%dzzz", i, i))
	}
	r := NewRedactor(many)
	if len(r.json.heads) <= fewHeads || len(r.text.heads) <= fewHeads {
		panic("too few secrets")
	}
	return []*Redactor{NewRedactor(env), r}
}

func jsonMasksStringValuesOnly(t *testing.T, r *Redactor) {
	doc := map[string]any{
		"node":      "node 2026 true",
		"completed": true,
		"failed":    false,
		"nothing":   nil,
		"time":      "2026-11-24T20:45:09.123Z",
		"list":      []any{"true", "x\nabc", "<b>", "null/2026", 2026},
		"nested":    map[string]any{"null": "falsehood"},
	}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		enc.SetIndent("", " ")
		require.NoError(t, enc.Encode(doc))
		out := r.JSON(b.Bytes())
		var got map[string]any
		require.NoError(t, json.Unmarshal(out, &got), "html %v: %s", html, out)
		assert.Equal(t, map[string]any{
			"node":      "*** *** ***",
			"completed": true,
			"failed":    false,
			"nothing":   nil,
			"time":      "2026-11-24T20:45:09.123Z", // a timestamp is dtree's own
			"list":      []any{"***", "x\nabc", "<b>", "***/***", float64(2026)},
			"nested":    map[string]any{"null": "***hood"},
		}, got, "html %v", html)
	}
}

// Every form a secret takes in what dtree writes is masked: as it is and
// JSON-escaped (with and without HTML escapes) in text, and those forms
// escaped again inside JSON strings, so that nothing decodes to it.
func TestRedactorMasksEveryEncodedForm(t *testing.T) {
	t.Parallel()
	const secret = `a"b<c>&d\e`
	for _, r := range bothWays("MY_TOKEN=" + secret) {
		everyEncodedForm(t, r, secret)
	}
}

func everyEncodedForm(t *testing.T, r *Redactor, secret string) {
	escaped := func(s string, html bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		require.NoError(t, enc.Encode(s))
		return strings.TrimSpace(b.String())
	}
	texts := []string{secret, escaped(secret, true), escaped(secret, false)}
	for _, text := range texts {
		got := r.String("say " + text + " again")
		assert.NotContains(t, got, "b<c", text)
		assert.NotContains(t, got, `b\u003cc`, text)
		assert.Contains(t, got, "say ", text)
		// The agent's text inside a JSON document dtree writes.
		for _, html := range []bool{true, false} {
			doc := []byte(`{"comments": [` + escaped("used "+text, html) + `]}`)
			out := r.JSON(doc)
			var v struct{ Comments []string }
			require.NoError(t, json.Unmarshal(out, &v), "%s", out)
			assert.NotContains(t, v.Comments[0], "b<c", "%s html %v: %s", text, html, out)
			assert.Contains(t, v.Comments[0], "used ", text)
		}
	}
	// Quoted as Go quotes it (%q in messages), which differs from JSON for
	// control characters.
	q := NewRedactor([]string{"X_KEY=tab\there\x01x"})
	assert.Equal(t, `node "***" failed`, q.String(fmt.Sprintf("node %q failed", "tab\there\x01x")))
	assert.Equal(t, `{"m":"node \"***\" failed"}`, string(q.JSON([]byte(fmt.Sprintf(`{"m":%q}`, fmt.Sprintf("node %q failed", "tab\there\x01x"))))))

	// The cut-off start of a secret, as an excerpt shows it.
	assert.Equal(t, `node "***…"`, r.String(`node "a"b<c>…"`))
	assert.Equal(t, `node "ab…"`, r.String(`node "ab…"`), "shorter than a secret can be")
	// And its end, as the end of a long answer shows it.
	assert.Equal(t, `answer "…*** end"`, r.String(`answer "…<c>&d\e end"`))
	assert.Equal(t, `{"a":"…***"}`, string(r.JSON([]byte(`{"a":"…c\u003e\u0026d\\e"}`))))
	assert.Equal(t, `answer "…d\e end"`, r.String(`answer "…d\e end"`), "shorter than a secret can be")
}

func TestRedactorLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	r := NewRedactor([]string{"A_KEY=abc", "B_TOKEN=    ", "PATH=/usr/bin", "C_SECRET=\t\n\t\n", "NOEQUALS", "D_KEY="})
	assert.True(t, r.text.empty(), "short, blank and unnamed values are no secrets")
	in := []byte(`{"path": "/usr/bin", "abc": "abc    "}`)
	assert.Equal(t, in, r.JSON(in))
	assert.Equal(t, string(in), r.String(string(in)))

	// A secret inside the run's id is left alone there, not elsewhere.
	id := "20261124T204509Z-abcdef"
	r = NewRedactor([]string{"D_KEY=2026"}).Except(id)
	assert.Equal(t, "logs/"+id+"/events.jsonl *** in ***", r.String("logs/"+id+"/events.jsonl 2026 in 2026"))
	assert.Equal(t, `{"run_id":"`+id+`","n":"***"}`, string(r.JSON([]byte(`{"run_id":"`+id+`","n":"2026"}`))))

	// Secrets that overlap go as one.
	r = NewRedactor([]string{"A_KEY=abcdef", "B_KEY=cdefgh"})
	assert.Equal(t, "x *** y", r.String("x abcdefgh y"))
}

// Masking is one pass whatever the number of secrets: 50 secrets over
// 10 MB of text and of JSON take well under the test's limit (the old
// replace loop took a pass per secret form).
func TestRedactorIsLinear(t *testing.T) {
	t.Parallel()
	var env []string
	for i := range 50 {
		env = append(env, fmt.Sprintf("S%d_TOKEN=sk-%d-<%08x>", i, i, i*7919))
	}
	r := NewRedactor(env)
	line := `{"time": "2026-11-24T20:45:09Z", "text": "sk-1 sk-2 plain words \u003c and more sk-3-<00005ccd> done"}` + "\n"
	size := 10 << 20
	if raceEnabled {
		size = 1 << 20 // the race detector makes it ten times slower
	}
	big := []byte(strings.Repeat(line, size/len(line)))
	start := time.Now()
	text := r.Bytes(big)
	js := r.JSON(big)
	took := time.Since(start)
	assert.Less(t, took, 10*time.Second)
	assert.Equal(t, bytes.Count(big, []byte("sk-3-<00005ccd>")), bytes.Count(text, []byte("and more *** done")))
	assert.Equal(t, bytes.Count(big, []byte("\n")), bytes.Count(js, []byte("and more *** done\"}\n")))
	t.Logf("masked 2 x %d KB with %d secrets in %v", len(big)>>10, len(env), took)
}

func TestStreamRedactorCatchesSplitForms(t *testing.T) {
	t.Parallel()
	for _, r := range bothWays("X_SECRET=s3cr<e>t-value") {
		streamCatchesSplitForms(t, r)
	}
}

func streamCatchesSplitForms(t *testing.T, r *Redactor) {
	input := strings.Repeat("abc s3cr<e> ", 100) + `s3cr<e>t-value {"c": "s3cr\u003ce\u003et-value"} s3cr<e>t-v… end …e>t-value`
	want := strings.Repeat("abc s3cr<e> ", 100) + `*** {"c": "***"} ***… end …***`
	for _, chunk := range []int{1, 2, 5, 16, 4096} {
		s := r.Stream()
		var out strings.Builder
		for i := 0; i < len(input); i += chunk {
			out.Write(s.Write([]byte(input[i:min(i+chunk, len(input))])))
		}
		out.Write(s.Flush())
		assert.Equal(t, want, out.String(), "chunk %d", chunk)
	}
}

// BenchmarkRedactor masks 137 KB of events with 0, 3 and 50 secrets, none
// of them in the text (the usual case) or one on every line.
func BenchmarkRedactor(b *testing.B) {
	for _, n := range []int{0, 3, 50} {
		var env []string
		for i := range n {
			// Random-looking, as tokens are.
			env = append(env, fmt.Sprintf("S%d_TOKEN=%016x%016x", i, uint64(i+1)*0x9E3779B97F4A7C15, uint64(i+7)*0xC2B2AE3D27D4EB4F))
		}
		r := NewRedactor(env)
		for _, hit := range []bool{false, true} {
			comment := "ran the tests, all 212 passed"
			if hit && n > 0 {
				comment = "used " + strings.TrimPrefix(env[n-1], fmt.Sprintf("S%d_TOKEN=", n-1))
			}
			line := []byte(`{"time":"2026-11-24T20:45:09Z","event":"node_end","node":"4","response":{"completed":true,"comments":["` + comment + `"]}}` + "\n")
			doc := bytes.Repeat(line, 1000)
			name := fmt.Sprintf("%d-hit=%v", n, hit)
			b.Run("text/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				for b.Loop() {
					r.Bytes(doc)
				}
			})
			b.Run("json/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				for b.Loop() {
					r.JSON(doc)
				}
			})
			b.Run("event/"+name, func(b *testing.B) {
				for b.Loop() {
					r.JSON(line)
				}
			})
		}
	}
}
