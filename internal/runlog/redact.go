package runlog

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// minSecret is the shortest value treated as a secret: replacing "1" or
// "on" everywhere would wreck the logs and hide nothing.
const minSecret = 4

// Redactor replaces secret values with ***. The secrets are the values of
// environment variables whose names end in _KEY, _TOKEN or _SECRET
// (SPEC §6), also as they appear inside JSON strings.
type Redactor struct {
	secrets [][]byte // longest first, so a secret containing another goes whole
	longest int
}

// NewRedactor finds the secrets in env ("NAME=value" entries).
func NewRedactor(env []string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	add := func(v string) {
		if len(v) >= minSecret && !seen[v] {
			seen[v] = true
			r.secrets = append(r.secrets, []byte(v))
			r.longest = max(r.longest, len(v))
		}
	}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !isSecretName(name) {
			continue
		}
		add(value)
		if q, err := json.Marshal(value); err == nil {
			add(string(q[1 : len(q)-1]))
		}
	}
	slices.SortFunc(r.secrets, func(a, b []byte) int { return len(b) - len(a) })
	return r
}

func isSecretName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_KEY") || strings.HasSuffix(n, "_TOKEN") || strings.HasSuffix(n, "_SECRET")
}

var mask = []byte("***")

// Bytes returns b with every secret replaced.
func (r *Redactor) Bytes(b []byte) []byte {
	for _, s := range r.secrets {
		if bytes.Contains(b, s) {
			b = bytes.ReplaceAll(b, s, mask)
		}
	}
	return b
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	return string(r.Bytes([]byte(s)))
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

// Write returns what can be written now.
func (s *StreamRedactor) Write(p []byte) []byte {
	if len(s.r.secrets) == 0 {
		return p
	}
	buf := append(s.carry, p...)
	buf = s.r.Bytes(buf)
	keep := min(s.r.longest-1, len(buf))
	s.carry = append(s.carry[:0:0], buf[len(buf)-keep:]...)
	return buf[:len(buf)-keep]
}

// Flush returns what was held back.
func (s *StreamRedactor) Flush() []byte {
	out := s.r.Bytes(s.carry)
	s.carry = nil
	return out
}
