// Package runlog writes a run's logs as the run goes (readme/logs.md): one
// directory per run with events.jsonl (an event per line, written at once),
// short.json (rewritten atomically after every node) and long.log (every
// agent call's output, streamed), and a latest link to the newest run.
// Secrets from the environment are replaced by *** in all of them
// (Redactor). Each event has a Go type (events.go), and EventReader reads
// them back (eventread.go): nobody else parses events.jsonl.
package runlog

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dtree-dev/dtree/internal/atomicfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options say what to write.
type Options struct {
	Dir      string // log_dir; the run's directory is created inside it
	RunID    string // NewRunID when empty
	Short    bool   // write short.json
	Long     bool   // write long.log
	Redactor *Redactor
	Now      func() time.Time
	// OpenFile opens the log's files, openOS (os.OpenFile in fewer
	// system calls) when nil: tests give
	// one on a disk that fills up.
	OpenFile func(name string, flag int, perm os.FileMode) (File, error)
	// LongCallMax and LongMax bound long.log: what one agent call's
	// output may take of it, and the whole file (readme/logs.md#longlog);
	// 0 is no bound. A line says where and why the output was cut.
	LongCallMax, LongMax int64
	// Streams says to keep each streaming agent call's raw event stream
	// in streams/ (Log.Stream), each file cut at StreamMax; 0 is no bound.
	Streams   bool
	StreamMax int64
}

// Log is one run's log directory.
type Log struct {
	RunID string
	Dir   string
	opts  Options
	mu    sync.Mutex
	// streamsMade says the streams directory is there (StreamWriter).
	streamsMade atomic.Bool
	events      File
	// eventsSize is how long events.jsonl is: whole lines only.
	eventsSize int64
	// events not yet written (Event, Flush)
	unwritten []byte
	long      File
	// longSize is what long.log holds; longFull says it reached LongMax
	// and takes nothing more.
	longSize int64
	longFull bool
	redact   *Redactor
	now      func() time.Time

	// failed is the first write that failed, of any of the files (Err).
	fmu    sync.Mutex
	failed *WriteError

	// The background writer of QueueShort: pending builds the newest
	// document not yet taken, writing says a writer goroutine is on it,
	// and idle is signalled when it stops.
	smu      sync.Mutex
	idle     *sync.Cond
	pending  func() [][]byte
	writing  bool
	shortErr error
}

// NewRunID returns a run id: the UTC time to the second and a random
// suffix, so two runs started in the same second never share one.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// makeRunDir creates logDir/id and returns id. With no id given it draws
// one with newID, and draws again when that directory already exists: runs
// started in the same second (a CI matrix, a script's loop) share the
// timestamp, and the random suffix alone can collide. A given id that exists
// is an error, since that directory is another run's.
func makeRunDir(logDir, id string, now time.Time, newID func(time.Time) string) (string, error) {
	given := id != ""
	for try := 0; ; try++ {
		if !given {
			id = newID(now)
		}
		err := os.Mkdir(filepath.Join(logDir, id), 0o755)
		if err == nil {
			return id, nil
		}
		if given || !errors.Is(err, fs.ErrExist) || try == 99 {
			return "", fmt.Errorf("create run log directory: %w", err)
		}
	}
}

// Open creates the run's directory and files, and points latest at it.
func Open(o Options) (*Log, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redactor == nil {
		o.Redactor = NewRedactor(nil)
	}
	if o.OpenFile == nil {
		o.OpenFile = openFile
	}
	if err := makeLogDir(o.Dir); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	if err := ownLatest(o.Dir); err != nil {
		return nil, err
	}
	removeLeftovers(o.Dir, o.Now())
	var err error
	if o.RunID, err = makeRunDir(o.Dir, o.RunID, o.Now(), NewRunID); err != nil {
		return nil, err
	}
	dir := filepath.Join(o.Dir, o.RunID)
	l := &Log{RunID: o.RunID, Dir: dir, opts: o, redact: o.Redactor.Except(o.RunID), now: o.Now}
	l.idle = sync.NewCond(&l.smu)
	if l.events, err = o.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, fmt.Errorf("create events log: %w", err)
	}
	holdRun(l.events)
	if o.Long {
		if l.long, err = o.OpenFile(filepath.Join(dir, "long.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			l.events.Close()
			return nil, fmt.Errorf("create long log: %w", err)
		}
	}
	if err := pointLatest(o.Dir, o.RunID); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// gitignore is the .gitignore dtree writes into a log directory it
// creates, as pytest does in its cache: the logs stay out of the user's
// repository (git status, and an agent step's `git add -A`).
const gitignore = "# Created by dtree: run logs are not for version control.\n*\n"

// makeLogDir creates the log directory, with its .gitignore, when it is
// not there; one that is there is left as it is, .gitignore or not.
func makeLogDir(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Without it the run goes on: it is a convenience, and a disk that
	// cannot take 60 bytes fails the run's own files next, with the
	// error that says why.
	_ = os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(gitignore), 0o644)
	return nil
}

// leftoverAge is how old short.json's temporary file must be to count as
// left by a killed run where dtree cannot tell whether that run still
// goes (no flock): writing it takes milliseconds, and a run still going in
// the same log directory may be writing its own.
const leftoverAge = time.Minute

// removeLeftovers removes the ".short.json.tmp" that the previous run in
// logDir (the one latest points at) left when it was killed while writing
// short.json: at once when that run's dtree is gone (holdRun), else once
// the file is leftoverAge old. Only that run's, so that a start costs the
// same however many runs the directory holds; each run removes its
// predecessor's.
func removeLeftovers(logDir string, now time.Time) {
	prev, err := os.Readlink(filepath.Join(logDir, "latest"))
	if err != nil || strings.ContainsAny(prev, `/\`) {
		return
	}
	f := filepath.Join(logDir, prev, ".short.json.tmp")
	st, err := os.Lstat(f)
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	ended, known := runEnded(filepath.Join(logDir, prev, "events.jsonl"))
	if ended || !known && now.Sub(st.ModTime()) > leftoverAge {
		_ = os.Remove(f)
	}
}

// ownLatest refuses a log directory whose latest is not a link, which
// pointLatest would replace: log_dir may come from a checkout's
// dtree.yaml, and may not make dtree replace a file of the user's that
// happens to be called latest (readme/settings.md#trust).
func ownLatest(logDir string) error {
	p := filepath.Join(logDir, "latest")
	if st, err := os.Lstat(p); err == nil && st.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("%s is not dtree's link to the latest run, and dtree replaces only its own: move it, or use another log directory", p)
	}
	return nil
}

// pointLatest makes log_dir/latest a link to the run's directory, replacing
// any older link in one rename so readers never see it missing.
func pointLatest(logDir, runID string) error {
	tmp := filepath.Join(logDir, ".latest-"+runID)
	if err := os.Symlink(runID, tmp); err != nil {
		return fmt.Errorf("link latest run: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(logDir, "latest")); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("link latest run: %w", err)
	}
	return nil
}

// Redactor is the run's secret masking, for what the run writes beside
// the logs (answers.yaml, graph.svg, the --json summary, stderr): the
// environment's secrets, except inside the run's id.
func (l *Log) Redactor() *Redactor { return l.redact }

// Event adds one event to events.jsonl: {"time", "event", then the
// event's fields}, with the log's run id as its RunID. Events are kept
// until Flush, which the run calls before it starts an agent, waits or
// ends: whatever may take long starts with every event before it on disk,
// and the few events between two agent calls cost one write, not one each.
// Secrets are masked in the fields' string values; the time and the
// event's name are dtree's own.
func (l *Log) Event(ev Event) error { return l.EventOn("", ev) }

// EventOn is Event for an event of a fork's branch (readme/parallel.md):
// its id follows the event's name as "branch", masked as every value is;
// "" is the run's own branch, whose events have none.
func (l *Log) EventOn(branch string, ev Event) error {
	if u, ok := ev.(Unknown); ok {
		return fmt.Errorf("write %s event: not an event of this dtree", u.Name)
	}
	ev = ev.withRunID(l.RunID)
	rest, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", ev.Type(), err)
	}
	if len(rest) > 2 {
		rest = l.redact.JSON(rest)
	}
	now := l.now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	// The head is written by hand: the time in RFC 3339 and the event's
	// name (a constant of events.go) need no escaping.
	b := append(l.unwritten, `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(append(append(b, `","event":"`...), ev.Type()...), '"')
	if branch != "" {
		id, _ := json.Marshal(branch) // a string always encodes
		b = append(append(b, `,"branch":`...), l.redact.JSON(id)...)
	}
	if len(rest) > 2 {
		b = append(append(b, ','), rest[1:]...)
	} else {
		b = append(b, '}')
	}
	l.unwritten = append(b, '\n')
	return nil
}

// Flush writes the events added since the last Flush to events.jsonl. It
// writes whole lines or none: when the disk takes only part of the write,
// the file is cut back to the last whole line, and the events left out are
// kept for the next Flush. The error is a *WriteError.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flush()
}

func (l *Log) flush() error {
	if len(l.unwritten) == 0 {
		return nil
	}
	n, err := l.events.Write(l.unwritten)
	if err == nil {
		l.eventsSize += int64(n)
		l.unwritten = l.unwritten[:0]
		return nil
	}
	n = max(0, min(n, len(l.unwritten)))
	whole := bytes.LastIndexByte(l.unwritten[:n], '\n') + 1
	if n > whole {
		if terr := l.events.Truncate(l.eventsSize + int64(whole)); terr != nil {
			err = fmt.Errorf("%w; and its last line, cut short, could not be removed: %w", err, terr)
		}
	}
	l.eventsSize += int64(whole)
	l.unwritten = l.unwritten[:copy(l.unwritten, l.unwritten[whole:])]
	return l.fail(l.path("events.jsonl"), err)
}

func (l *Log) path(name string) string { return filepath.Join(l.Dir, name) }

// ShortJSON rewrites short.json with an encoded document, given as parts
// written one after the other, after any write QueueShort started, and
// atomically: a reader, or a run killed mid-write, sees the old file or
// the new one, never half of one. It returns the first error of those
// writes or its own. The parts come masked (Redactor().JSON of each):
// the caller masks each node's entry once, as it is encoded, where
// masking the whole document at every rewrite cost a long run more and
// more (readme/performance.md).
func (l *Log) ShortJSON(parts ...[]byte) error {
	if !l.opts.Short {
		return nil
	}
	err := l.waitShort()
	if werr := l.writeShort(parts); err == nil {
		err = werr
	}
	return err
}

// QueueShort rewrites short.json with the document made of parts in the
// background and returns at once, so the next agent starts without
// waiting for the file system: the run goes on while the last node's state
// is written. The parts come masked, as ShortJSON's. The parts must not change afterwards. A
// document queued while another is being written replaces any still
// waiting, so the file only ever moves forward. ShortJSON and Close wait
// for the queue; errors come back from them.
func (l *Log) QueueShort(parts ...[]byte) {
	l.QueueShortFunc(func() [][]byte { return parts })
}

// QueueShortFunc is QueueShort with the document built by build, in the
// background when it is written: a document replaced before it is written
// is never built. build must read only what does not change afterwards.
func (l *Log) QueueShortFunc(build func() [][]byte) {
	if !l.opts.Short {
		return
	}
	l.smu.Lock()
	defer l.smu.Unlock()
	l.pending = build
	if !l.writing {
		l.writing = true
		go l.drainShort()
	}
}

func (l *Log) drainShort() {
	l.smu.Lock()
	defer l.smu.Unlock()
	for l.pending != nil {
		build := l.pending
		l.pending = nil
		l.smu.Unlock()
		err := l.writeShort(build())
		l.smu.Lock()
		if err != nil && l.shortErr == nil {
			l.shortErr = err
		}
	}
	l.writing = false
	l.idle.Broadcast()
}

// waitShort waits until queued short.json writes are done and returns
// (and forgets) the first error among them.
func (l *Log) waitShort() error {
	l.smu.Lock()
	defer l.smu.Unlock()
	for l.writing {
		l.idle.Wait()
	}
	err := l.shortErr
	l.shortErr = nil
	return err
}

// writeShort replaces short.json; when the disk is full, the old one stays
// (WriteAtomic) and the error is a *WriteError.
func (l *Log) writeShort(parts [][]byte) error {
	path := l.path("short.json")
	// Each version is written into the file the one before replaced, when
	// no reader has that open (atomicfile's Reuse), not into a new file:
	// making a file a node cost more than the node where the file system
	// steps over recently deleted inodes (readme/performance.md#running-a-chart).
	// Close removes it.
	err := atomicfile.WriteParts(path, parts, 0o644, atomicfile.Options{Rewrite: true, Reuse: true,
		Open: func(name string, flag int, perm os.FileMode) (atomicfile.File, error) {
			return l.opts.OpenFile(name, flag, perm)
		}})
	if err != nil {
		return l.fail(path, err)
	}
	return nil
}

// WriteAtomic replaces path with data in one step (atomicfile): a
// reader, or a run killed mid-write, sees the old file or the new one.
func WriteAtomic(path string, data []byte, mode os.FileMode) error {
	return writeAtomic(openFile, path, data, mode)
}

// writeAtomic is WriteAtomic through open: ".NAME.tmp" is the temporary
// file (each file has one writer), and one left over from a crash is
// replaced.
func writeAtomic(open func(string, int, os.FileMode) (File, error), path string, data []byte, mode os.FileMode) error {
	return atomicfile.WriteBytes(path, data, mode, atomicfile.Options{Rewrite: true,
		Open: func(name string, flag int, perm os.FileMode) (atomicfile.File, error) { return open(name, flag, perm) }})
}

// WriteFile writes a file of the run's directory atomically, its secrets
// masked as text. The caller masks an encoded file's values before
// encoding them (Redactor.String), since text masking sees neither their
// encoded forms nor the format's syntax; this is the last net.
func (l *Log) WriteFile(name string, b []byte) error {
	return WriteAtomic(filepath.Join(l.Dir, name), l.redact.Bytes(b), 0o644)
}

// Call starts one agent call's section of long.log and returns the writer
// its stdout and stderr go to as they arrive; Close ends the section. With
// long logs off it discards. A write that fails, the header's included,
// is a *WriteError, also from Err: the caller stops the run, but goes on
// reading the agent's output, whose answer is not lost with the log. The
// call's output is cut at LongCallMax, and the file at LongMax, each time
// with a line that says so; the caller sees no error for what is cut.
func (l *Log) Call(node, cli string, attempt int, purpose string) io.WriteCloser {
	if l.long == nil {
		return nopCloser{io.Discard}
	}
	header := fmt.Sprintf("\n===== node %s · %s · attempt %d · %s · %s =====\n",
		l.redact.String(node), purpose, attempt, l.redact.String(cli), l.now().UTC().Format(time.RFC3339))
	w := &callWriter{l: l, r: l.redact.Stream()}
	_ = w.write([]byte(header), false)
	return w
}

type callWriter struct {
	l   *Log
	r   *StreamRedactor
	err error // the first write that failed; nothing is written after it
	// size is what the call's output took of long.log; cut says it reached
	// LongCallMax, or the file LongMax, and nothing more of it is written.
	size int64
	cut  bool
}

func (w *callWriter) Write(p []byte) (int, error) {
	if err := w.write(w.r.Write(p), true); err != nil {
		return 0, err
	}
	return len(p), nil
}

// write adds out to long.log, output of the call when output is set (the
// header is not), within the bounds.
func (w *callWriter) write(out []byte, output bool) error {
	if w.err != nil || w.cut || len(out) == 0 {
		return w.err
	}
	l := w.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.longFull {
		w.cut = true
		return nil
	}
	var mark string
	if c := l.opts.LongCallMax; output && c > 0 && w.size+int64(len(out)) > c {
		out = out[:c-w.size]
		mark = fmt.Sprintf("\n----- long.log: cut here: this call printed more than %s (long_log_call_max); the rest of its output is not kept, agent_call's stdout_bytes and stderr_bytes say how much there was -----\n", Size(c))
	}
	if m := l.opts.LongMax; m > 0 && l.longSize+int64(len(out)) > m {
		out = out[:max(m-l.longSize, 0)]
		mark = fmt.Sprintf("\n----- long.log: cut here: the run's long.log reached %s (long_log_max); no more output of this call or of later calls is kept -----\n", Size(m))
		l.longFull = true
	}
	if mark != "" {
		w.cut = true
		out = append(out[:len(out):len(out)], mark...)
	}
	n, err := l.long.Write(out)
	l.longSize += int64(n)
	if output {
		w.size += int64(n)
	}
	if err != nil {
		w.err = l.fail(l.path("long.log"), err)
	}
	return w.err
}

func (w *callWriter) Close() error { return w.write(w.r.Flush(), true) }

// Size says a number of bytes as long_log_call_max and long_log_max take
// it: in GiB, MiB or KiB when it is a whole number of them.
func Size(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Close writes the events not yet written, waits for queued short.json
// writes and closes the log's files. Its error is the first of those, or
// else Err.
func (l *Log) Close() error {
	first := l.waitShort()
	if first == nil {
		first = l.Err()
	}
	_ = os.Remove(atomicfile.TempOf(l.path("short.json"))) // the version before the last (writeShort)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.flush(); err != nil && first == nil {
		first = err
	}
	for _, f := range []File{l.events, l.long} {
		if f != nil {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Carry adds a line of another run's events.jsonl to this one as it
// was written, its time and run id kept: a resumed run carries the steps
// it took from the run before it (readme/resume.md). Its secrets were
// masked when it was first written; they are masked again, as the
// secrets of this run may differ.
func (l *Log) Carry(line []byte) {
	line = l.redact.JSON(bytes.TrimRight(line, "\n"))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unwritten = append(append(l.unwritten, line...), '\n')
}
