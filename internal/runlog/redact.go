package runlog

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// minSecret is the shortest value treated as a secret: replacing "1" or
// "on" everywhere would wreck the logs and hide nothing. The matcher
// finds secrets by their first four bytes, so it is at least 4.
const minSecret = 4

// Redactor replaces secret values with ***. The secrets are the values of
// environment variables whose names end in _KEY, _TOKEN or _SECRET
// (readme/logs.md#secrets) that are at least minSecret bytes long and not only
// whitespace. Each is masked in every form dtree may write it in: as it
// is, JSON-escaped (with and without encoding/json's HTML escapes) and
// Go-quoted (%q in messages) in text, and inside JSON strings those forms
// escaped once more. Bytes is for text
// (agent output, stderr), JSON for documents dtree encoded; YAML and SVG
// are masked through String before they are encoded (readme/logs.md).
type Redactor struct {
	text matcher // raw and JSON-escaped forms, anywhere in text
	json matcher // the text forms as they appear inside a JSON string
	// keep are dtree's own words (the run id) that a secret may happen to
	// be part of: a match inside one is left alone.
	keep [][]byte
}

// NewRedactor finds the secrets in env ("NAME=value" entries).
func NewRedactor(env []string) *Redactor {
	var text, inJSON [][]byte
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !isSecretName(name) || len(value) < minSecret || strings.TrimSpace(value) == "" {
			continue
		}
		q := strconv.Quote(value) // messages quote texts with %q
		forms := []string{value, jsonEscape(value, false), jsonEscape(value, true), q[1 : len(q)-1]}
		for _, f := range forms {
			text = append(text, []byte(f))
			inJSON = append(inJSON, []byte(jsonEscape(f, false)), []byte(jsonEscape(f, true)))
		}
	}
	return &Redactor{text: newMatcher(text), json: newMatcher(inJSON)}
}

// Except returns a Redactor that leaves the words alone wherever a secret
// overlaps them: the run's id is in every path of the run, and a secret
// "2026" must not turn the run's directory into "***1124T…".
func (r *Redactor) Except(words ...string) *Redactor {
	c := *r
	c.keep = slices.Clone(r.keep)
	for _, w := range words {
		if w != "" {
			c.keep = append(c.keep, []byte(w))
		}
	}
	return &c
}

func isSecretName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_KEY") || strings.HasSuffix(n, "_TOKEN") || strings.HasSuffix(n, "_SECRET")
}

// jsonEscape is s inside a JSON string as encoding/json writes it, quotes
// left out.
func jsonEscape(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s)
	q := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(q[1 : len(q)-1])
}

// Mask is what a secret is replaced by.
const Mask = "***"

var mask = []byte(Mask)

// MayBeMasked says whether s, read back from a log, may have had a
// secret masked in it: it holds Mask. (A value that held "***" itself
// reads the same.)
func MayBeMasked(s string) bool { return strings.Contains(s, Mask) }

// Bytes returns text b with every secret replaced. b is not changed; with
// nothing to mask it is returned as is.
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.text.mayContain(b) {
		return b
	}
	spans := r.text.scan(b, 0, len(b), false, nil)
	return replaceSpans(b, r.kept(b, spans))
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r.text.empty() {
		return s
	}
	return string(r.Bytes([]byte(s)))
}

// JSON returns the JSON document b with every secret replaced inside its
// string values, as encoding/json escaped it. Object keys (in what dtree
// writes, names it chose), numbers, true, false, null and the document's
// punctuation are never touched, so the result parses as b did; a string
// that is a whole RFC 3339 timestamp is left alone too ("2026" is no
// secret to hide in a time).
func (r *Redactor) JSON(b []byte) []byte {
	if !r.json.mayContain(b) {
		return b
	}
	var spans []span
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		start := i + q + 1
		end := stringEnd(b, start)
		if end < len(b) && !isKey(b, end+1) {
			n := len(spans)
			spans = r.json.scan(b[:end], start, end, true, spans)
			if len(spans) > n && isTimestamp(b[start:end]) {
				spans = spans[:n]
			}
		}
		i = end + 1
	}
	return replaceSpans(b, r.kept(b, spans))
}

// stringEnd is the index of the quote that ends the JSON string whose
// content starts at start, or len(b).
func stringEnd(b []byte, start int) int {
	for j := start; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return len(b)
		}
		end := j + q
		slashes := 0
		for k := end - 1; k >= start && b[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 0 {
			return end
		}
		j = end + 1
	}
}

// isKey says the string that ended before i is an object key.
func isKey(b []byte, i int) bool {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

func isTimestamp(s []byte) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > len(time.RFC3339Nano)+4 {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, string(s))
	return err == nil
}

// kept drops the spans that overlap one of r.keep in b.
func (r *Redactor) kept(b []byte, spans []span) []span {
	if len(spans) == 0 || len(r.keep) == 0 {
		return spans
	}
	var keep []span
	for _, w := range r.keep {
		for i := 0; ; {
			k := bytes.Index(b[i:], w)
			if k < 0 {
				break
			}
			keep = append(keep, span{i + k, i + k + len(w)})
			i += k + 1
		}
	}
	if len(keep) == 0 {
		return spans
	}
	slices.SortFunc(keep, func(a, b span) int { return a.start - b.start })
	out := spans[:0]
	j := 0
	for _, s := range spans {
		for j < len(keep) && keep[j].end <= s.start {
			j++
		}
		overlaps := false
		for k := j; k < len(keep) && keep[k].start < s.end; k++ {
			if keep[k].end > s.start {
				overlaps = true
				break
			}
		}
		if !overlaps {
			out = append(out, s)
		}
	}
	return out
}

// replaceSpans returns b with each span replaced by the mask; the spans are
// in order and do not overlap.
func replaceSpans(b []byte, spans []span) []byte {
	if len(spans) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	at := 0
	for _, s := range spans {
		out = append(append(out, b[at:s.start]...), mask...)
		at = s.end
	}
	return append(out, b[at:]...)
}

// Stream returns a redactor for output that arrives in pieces: a secret
// split across two writes is still caught.
func (r *Redactor) Stream() *StreamRedactor { return &StreamRedactor{r: r} }

// StreamRedactor holds back the last few bytes of each write, in case a
// secret continues in the next.
type StreamRedactor struct {
	r     *Redactor
	carry []byte
}

// Write returns what can be written now. Matches that start early enough
// to be whole are masked and written; the rest waits for the next write.
func (s *StreamRedactor) Write(p []byte) []byte {
	m := &s.r.text
	if m.empty() {
		return p
	}
	buf := append(s.carry, p...)
	// A match starting before cut lies wholly in buf: the longest form,
	// or a cut-off prefix of it and "…".
	cut := len(buf) - (m.longest + len(ellipsis) - 1)
	if cut <= 0 {
		s.carry = buf
		return nil
	}
	var spans []span
	if m.mayContain(buf) {
		spans = m.scan(buf, 0, cut, false, nil)
	}
	emit := cut
	if n := len(spans); n > 0 {
		emit = max(emit, spans[n-1].end)
	}
	out := replaceSpans(buf[:emit], s.r.kept(buf, spans))
	s.carry = append(s.carry[:0:0], buf[emit:]...)
	return out
}

// Flush returns what was held back.
func (s *StreamRedactor) Flush() []byte {
	out := s.r.Bytes(s.carry)
	s.carry = nil
	return out
}
