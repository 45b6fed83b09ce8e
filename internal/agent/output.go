package agent

import (
	"io"
	"sync"
)

// sink is Call.Output shared by stdout and stderr: one write at a time,
// and the first error remembered rather than returned, so the child's
// output is still drained.
type sink struct {
	mu  sync.Mutex
	out io.Writer
	err error
	// last is the stream written last and eol whether its output ended a
	// line: when the other stream starts writing, a marker line says so.
	last *stream
	eol  bool
}

// note writes a line of dtree's own into the output, marked as the
// stream switches are.
func (k *sink) note(text string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.out == nil || k.err != nil {
		return
	}
	line := "----- " + text + " -----\n"
	if k.last != nil && !k.eol {
		line = "\n" + line
	}
	if _, err := io.WriteString(k.out, line); err != nil {
		k.err = err
	}
	k.eol = true
}

// stream is one of the child's output streams.
type stream struct {
	sink *sink
	tail tail
	name string // "stdout" or "stderr", for the marker lines
	// split gets stdout in pieces for formats read as they arrive, and
	// seen is called after each write to it.
	split splitter
	seen  func()
	// watch, when set, gets stdout as it arrives to see whether the CLI
	// waits for a human.
	watch *waitWatch
	// raw, when set, gets stdout as it arrives (Call.Stream).
	raw io.Writer
}

// copyBufs are the buffers ReadFrom reads the child's output through.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadFrom is how os/exec's io.Copy hands s the child's output: through a
// buffer that calls share, where io.Copy would make 32 KiB for each stream
// of each call, garbage that the collector then sweeps while the next
// agent runs.
func (s *stream) ReadFrom(r io.Reader) (n int64, err error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	for {
		m, rerr := r.Read(*bp)
		if m > 0 {
			_, _ = s.Write((*bp)[:m]) // never fails: the sink keeps its error
			n += int64(m)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

func (s *stream) Write(p []byte) (int, error) {
	k := s.sink
	k.mu.Lock()
	defer k.mu.Unlock()
	s.tail.add(p)
	if s.watch != nil {
		s.watch.write(p)
	}
	if s.raw != nil && k.err == nil {
		if _, err := s.raw.Write(p); err != nil {
			k.err = err
		}
	}
	if s.split != nil {
		s.split.write(p)
		s.seen()
	}
	if k.out == nil || k.err != nil || len(p) == 0 {
		return len(p), nil
	}
	// Output starts as stdout; a switch of stream is marked on a line of
	// its own, so long.log says which lines were stderr.
	if k.last != s && (k.last != nil || s.name != "stdout") {
		marker := "----- " + s.name + " -----\n"
		if k.last != nil && !k.eol {
			marker = "\n" + marker
		}
		if _, err := io.WriteString(k.out, marker); err != nil {
			k.err = err
			return len(p), nil
		}
	}
	k.last, k.eol = s, p[len(p)-1] == '\n'
	if _, err := k.out.Write(p); err != nil {
		k.err = err
	}
	return len(p), nil
}

// tail keeps the last max bytes written to it, in a ring, and counts all.
type tail struct {
	max int
	buf []byte // grows to max, then wraps at pos
	pos int
	n   int64
}

func (t *tail) add(p []byte) {
	t.n += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.pos = 0
		return
	}
	if room := t.max - len(t.buf); room > 0 {
		k := min(room, len(p))
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(t.buf[t.pos:], p)
		p = p[k:]
		t.pos = (t.pos + k) % t.max
	}
}

func (t *tail) truncated() bool { return t.n > int64(len(t.buf)) }

// String returns the kept bytes in order, without a partial UTF-8
// character at the start when the beginning was cut off.
func (t *tail) String() string {
	s := string(t.buf[t.pos:]) + string(t.buf[:t.pos])
	if t.truncated() {
		for i := 0; i < 3 && len(s) > 0 && s[0]&0xC0 == 0x80; i++ {
			s = s[1:]
		}
	}
	return s
}
