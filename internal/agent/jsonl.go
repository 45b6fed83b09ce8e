package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/dtree-dev/dtree/internal/response"
	"math"
	"strconv"
	"strings"
)

// maxLine is the longest stdout line a decoder is given; a longer one is
// skipped whole (it would not fit the answer either: MaxStdoutTail).
const maxLine = MaxStdoutTail

// lines splits a stream into lines for a decoder as it arrives, holding
// only the line in progress.
type lines struct {
	fn   func([]byte)
	buf  []byte
	skip bool // the line in progress outgrew maxLine: drop it to its end
}

func (l *lines) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.add(p)
			return
		}
		l.add(p[:i])
		l.flush()
		p = p[i+1:]
	}
}

func (l *lines) add(p []byte) {
	switch {
	case l.skip:
	case len(l.buf)+len(p) > maxLine:
		l.skip, l.buf = true, l.buf[:0]
	default:
		l.buf = append(l.buf, p...)
	}
}

func (l *lines) flush() {
	if !l.skip && len(l.buf) > 0 {
		l.fn(bytes.TrimSuffix(l.buf, []byte("\r")))
	}
	l.buf, l.skip = l.buf[:0], false
}

// close hands over the last line when stdout did not end with a newline.
func (l *lines) close() { l.flush() }

// objects splits a stream into its top-level JSON objects as they arrive,
// for formats whose envelope is one object (claude's json, gemini's):
// bytes between objects (escape codes, prose) are skipped, and braces in
// strings do not count. It holds only the object in progress; one that
// outgrows maxLine is dropped.
type objects struct {
	fn    func([]byte)
	buf   []byte
	depth int
	str   bool // in a string
	esc   bool // after a backslash in a string
	skip  bool // the object in progress outgrew maxLine
}

func (o *objects) write(p []byte) {
	for len(p) > 0 {
		if o.depth == 0 {
			i := bytes.IndexByte(p, '{')
			if i < 0 {
				return
			}
			p = p[i:]
		}
		n := o.scan(p)
		switch {
		case o.skip:
		case len(o.buf)+n > maxLine:
			o.skip, o.buf = true, o.buf[:0]
		default:
			o.buf = append(o.buf, p[:n]...)
		}
		p = p[n:]
		if o.depth == 0 {
			if !o.skip {
				o.fn(o.buf)
			}
			o.buf, o.skip = o.buf[:0], false
		}
	}
}

// scan follows p from inside an object (or at its '{') and returns how
// many bytes of it belong to the object: all, or up to its closing '}'.
func (o *objects) scan(p []byte) int {
	for i, c := range p {
		switch {
		case o.esc:
			o.esc = false
		case o.str:
			o.esc, o.str = c == '\\', c != '"'
		case c == '"':
			o.str = true
		case c == '{':
			o.depth++
		case c == '}':
			if o.depth--; o.depth == 0 {
				return i + 1
			}
		}
	}
	return len(p)
}

// close drops an object left open: the output was cut off.
func (o *objects) close() { o.buf, o.depth, o.str, o.esc, o.skip = o.buf[:0], 0, false, false, false }

// events reads the JSON objects of a JSON-lines stream. Lines that are not
// JSON (progress text) are skipped; cut remembers whether the last line
// looked like JSON but did not parse, which at the end of the stream means
// the output was cut off.
type events struct {
	cut  bool
	seen bool // at least one event was read
	fin  bool // the event that ends the stream was read
}

func (e *events) final() bool { return e.fin }

// decode unmarshals one line into v and reports whether it was an event.
// A field of an unexpected type is left unset rather than losing the line.
func (e *events) decode(b []byte, v any) bool {
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = []byte(response.StripANSI(string(b)))
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		e.cut = false
		return false
	}
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &te) {
		e.cut = true
		return false
	}
	e.cut, e.seen = false, true
	return true
}

// check is the stream's own error at the end: none read, or cut off.
func (e *events) check(o output, what string) error {
	switch {
	case e.cut:
		return errors.New("stdout ends in the middle of an event: the output was cut off" + keptNote(o))
	case !e.seen:
		if line := firstLine(response.StripANSI(o.stdout)); line != "" {
			return errors.New("printed no " + what + " events; stdout: " + line)
		}
		return errors.New("printed no " + what + " events")
	}
	return nil
}

func keptNote(o output) string {
	if o.truncated {
		return " (only the last " + strconv.Itoa(len(o.stdout)) + " of " + strconv.FormatInt(o.total, 10) + " bytes were kept)"
	}
	return ""
}

// number is a JSON number that may also be absent or null (unknown), or
// a string or anything else: a figure that is not a number, which
// CheckUsage warns of.
type number struct {
	set bool
	v   float64
}

func (n *number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !math.IsInf(f, 0) {
		f = math.NaN()
	}
	n.set, n.v = true, f
	return nil
}

func (n number) count() *int64 {
	if !n.set {
		return nil
	}
	return countOf(n.v)
}

func (n number) money() *float64 {
	if !n.set {
		return nil
	}
	return costOf(n.v)
}

// text is a JSON string that may also be anything else (left empty).
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = text(s)
	}
	return nil
}

// message is an error as CLIs write it: a string, or an object with a
// message (perhaps under data) or a name.
type message string

func (m *message) UnmarshalJSON(b []byte) error {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	failed, msg := errorValue(v)
	if obj, ok := v.(map[string]any); ok {
		if data, ok := obj["data"].(map[string]any); ok {
			if _, dmsg := errorValue(data); dmsg != "" {
				msg = dmsg
			}
		}
	}
	if failed && msg == "" {
		msg = "(no message)"
	}
	*m = message(msg)
	return nil
}

func orNone(msg string) string {
	if strings.TrimSpace(msg) == "" {
		return "(no message)"
	}
	return firstLine(msg)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}
