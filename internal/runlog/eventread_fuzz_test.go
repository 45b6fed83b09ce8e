package runlog

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzReadEvents feeds the event reader arbitrary logs, seeded from a real
// run's events.jsonl (the quickstart chart, in internal/export/testdata)
// cut in places: a log is read from disk, and may be cut short,
// hand-edited or another program's. The reader must not panic, must end,
// may report a torn line only at the end, and every event it reads must be
// written again as a line it reads back to the same event, line for line.
func FuzzReadEvents(f *testing.F) {
	real, err := os.ReadFile(filepath.Join("..", "export", "testdata", "events", "quickstart.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{real, real[:len(real)/2], real[:len(real)-1], []byte("not json\n{\"event\":\"x\"}\n\n[1]")} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 24, 20, 0, 0, 5, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewEventReader(bytes.NewReader(data))
		lines := bytes.Count(data, []byte("\n")) + 1
		for n := 0; ; n++ {
			if n > lines {
				t.Fatalf("more than %d events or errors from %d lines", n, lines)
			}
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var le *LineError
			if errors.As(err, &le) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Torn() {
				t.Fatal("a torn line before the end")
			}
			if _, ok := ev.(Unknown); ok {
				continue
			}
			// Written, read back and written again: the same line.
			l := &Log{RunID: "r", redact: NewRedactor(nil), now: func() time.Time { return now }}
			if err := l.Event(ev); err != nil {
				t.Fatalf("write %#v: %v", ev, err)
			}
			first := bytes.Clone(l.unwritten)
			h, err := readHead(first)
			if err != nil {
				t.Fatalf("read back %s: %v", first, err)
			}
			back, err := decodeEvent(h.Event, first)
			if err != nil {
				t.Fatalf("read back %s: %v", first, err)
			}
			if back.Type() != ev.Type() {
				t.Fatalf("read back %s as %s", first, back.Type())
			}
			l.unwritten = l.unwritten[:0]
			if err := l.Event(back); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, l.unwritten) {
				t.Fatalf("written again differently:\n%s%s", first, l.unwritten)
			}
		}
	})
}
