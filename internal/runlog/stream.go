package runlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StreamsDir is the run directory's folder of agent calls' event streams
// (readme/logs.md#streams).
const StreamsDir = "streams"

// Stream returns the writer an agent call's raw event stream (its stdout)
// goes to as it arrives: streams/NODE.vVISIT.aATTEMPT.PURPOSE.jsonl in the
// run's directory, masked as every log, cut at StreamMax (a line says so).
// The file is made at the first byte, so a call that prints nothing makes
// none; a second call of the same name (a validation called again, a
// fallback CLI in the same attempt) gets "-2", "-3"… before ".jsonl".
// Close ends it and returns the file's path, "" when none was made, by
// Path. A write that fails is a *WriteError, also from Err, as long.log's.
// nil when the log keeps no streams (Options.Streams).
func (l *Log) Stream(node string, visit, attempt int, purpose string) *StreamWriter {
	if !l.opts.Streams {
		return nil
	}
	name := fmt.Sprintf("%s.v%d.a%d.%s", fileSafe(node), visit, attempt, fileSafe(purpose))
	w := &StreamWriter{l: l, name: name, r: l.redact.Stream(), max: l.opts.StreamMax, made: make(chan struct{})}
	// The file is made while the agent starts: making a file took about
	// 0.2 ms on this machine's ext4 (readme/performance.md), which the
	// agent's first output would otherwise wait for, at every call.
	go func() {
		w.err = w.create()
		close(w.made)
	}()
	return w
}

// StreamWriter is one call's stream file (Log.Stream).
type StreamWriter struct {
	l    *Log
	name string
	r    *StreamRedactor
	max  int64
	f    File
	path string
	err  error
	// made is closed once create has run (its error is err).
	made chan struct{}
	size int64
	cut  bool
	// open says the last byte written was not a line break.
	open bool
}

// Write masks p and adds it to the file, within StreamMax. It fails only
// when the disk does; what is cut is not an error.
func (w *StreamWriter) Write(p []byte) (int, error) {
	if err := w.write(w.r.Write(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *StreamWriter) write(out []byte) error {
	<-w.made
	if w.err != nil || w.cut || len(out) == 0 {
		return w.err
	}
	if w.max > 0 && w.size+int64(len(out)) > w.max {
		out = out[:w.max-w.size]
		// At a line's end when the part kept has one: the file stays
		// whole lines of the stream.
		if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
			out = out[:i+1]
		}
		w.cut = true
		nl := ""
		if len(out) > 0 && out[len(out)-1] != '\n' || len(out) == 0 && w.open {
			nl = "\n"
		}
		mark := fmt.Sprintf(`%s{"dtree":"cut here: this call's stream passed %s (stream_log_max); the rest is not kept, agent_call's stdout_bytes says how much there was"}`+"\n", nl, Size(w.max))
		out = append(out[:len(out):len(out)], mark...)
	}
	n, err := w.f.Write(out)
	w.size += int64(n)
	if n > 0 {
		w.open = out[n-1] != '\n'
	}
	if err != nil {
		w.err = w.l.fail(w.path, err)
	}
	return w.err
}

// create makes the file, under a name no other call of the run has.
func (w *StreamWriter) create() error {
	dir := w.l.path(StreamsDir)
	if !w.l.streamsMade.Load() {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return w.l.fail(dir, err)
		}
		w.l.streamsMade.Store(true) // made once, not asked again at every call
	}
	for i := 1; ; i++ {
		name := w.name
		if i > 1 {
			name += "-" + strconv.Itoa(i)
		}
		w.path = filepath.Join(dir, name+".jsonl")
		f, err := w.l.opts.OpenFile(w.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			w.f = f
			return nil
		}
		if !errors.Is(err, fs.ErrExist) || i == 1000 {
			return w.l.fail(w.path, err)
		}
	}
}

// Close writes what the masking held back and closes the file; a file
// the call wrote nothing to is removed.
func (w *StreamWriter) Close() error {
	err := w.write(w.r.Flush())
	if w.f != nil {
		if cerr := w.f.Close(); cerr != nil && err == nil {
			err = w.l.fail(w.path, cerr)
		}
		if w.size == 0 && err == nil {
			_ = os.Remove(w.path)
			w.f = nil
		}
	}
	return err
}

// Path is the stream file's path, "" when the call printed nothing.
func (w *StreamWriter) Path() string {
	<-w.made
	if w.f == nil {
		return ""
	}
	return w.path
}

var _ io.WriteCloser = (*StreamWriter)(nil)

// fileSafe is s as a part of a file name: letters, digits, "-", "_" and
// "." kept, any other character "_", at most 64 bytes, and never "" or
// starting with a dot.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 64 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || out[0] == '.' {
		out = "_" + out
	}
	return out
}
