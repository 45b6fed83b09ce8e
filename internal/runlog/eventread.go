package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// MaxEventLine bounds the line an EventReader reads. The longest lines
// dtree writes are agent calls, a few KiB (stderr_tail is at most 8 KiB);
// a longer line is a LineError, and reading goes on after it.
const MaxEventLine = 16 << 20

// LineError is a line of events.jsonl that is not an event: not a JSON
// object, without an "event" name, too long, or with a field of the wrong
// type. Reading can go on after it.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("events.jsonl line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// EventReader reads events.jsonl one line at a time, so its memory is one
// line whatever the log's size (MaxEventLine at most). What it does with
// lines that are not a known event:
//
//   - A last line without its newline that is not whole JSON is the line
//     a run killed mid-write left: it is skipped, and Torn says so.
//     (dtree writes whole lines only, but a kill can still cut a write.)
//   - An event whose name this version does not know, written by a newer
//     dtree, is returned as an Unknown with its line: consumers that
//     switch on the event's type pass over it.
//   - Any other line that is not an event is a *LineError from Next;
//     calling Next again goes on with the next line.
//   - Blank lines are skipped.
type EventReader struct {
	br   *bufio.Reader
	buf  []byte
	line int
	time []byte // the time of the last event, parsed by Time
	raw  []byte // the last event's line
	// branch is the fork branch of the last event (its "branch"), ""
	// on the run's own.
	branch string
	torn   bool
	only   map[EventType]bool
}

// NewEventReader reads events from r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Only makes Next return the events of these types and skip the others
// after reading their name, without decoding the rest of their line: a
// reader of the run's path need not decode its agent calls, the bulk of a
// log. Unknown events are skipped too.
func (r *EventReader) Only(types ...EventType) *EventReader {
	r.only = make(map[EventType]bool, len(types))
	for _, t := range types {
		r.only[t] = true
	}
	return r
}

// Next returns the next event, or io.EOF after the last one; an error
// other than io.EOF or a *LineError is the reader's.
func (r *EventReader) Next() (Event, error) {
	for {
		line, last, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if last && !json.Valid(line) {
			r.torn = true // also when Only would have skipped it
			return nil, io.EOF
		}
		h, err := readHead(line)
		if err == nil && r.only != nil && !r.only[h.Event] {
			continue
		}
		var ev Event
		if err == nil {
			ev, err = decodeEvent(h.Event, line)
		}
		if err != nil {
			return nil, &LineError{Line: r.line, Err: err}
		}
		r.time = append(r.time[:0], h.Time...)
		r.raw = line
		r.branch = ""
		if h.Branch != nil && h.Event != EventWorkspace { // its own branch is --worktree's

			r.branch = string(h.Branch)
		}
		return ev, nil
	}
}

// NextEvent is Next, with the lines that are not events passed over: for
// readers that take what can be read (a run's picture, a resume).
func (r *EventReader) NextEvent() (Event, error) {
	for {
		ev, err := r.Next()
		var le *LineError
		if !errors.As(err, &le) {
			return ev, err
		}
	}
}

// Raw is the line of the event Next returned last, without its newline;
// it is valid until the next call of Next.
func (r *EventReader) Raw() []byte { return r.raw }

// Line is the line number, 1-based, of the event Next returned last, or
// of the line of its *LineError.
func (r *EventReader) Line() int { return r.line }

// Time is the time of the event Next returned last: when it was logged,
// zero when its line has no readable time.
func (r *EventReader) Time() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, string(r.time))
	return t
}

// Branch is the fork branch of the event Next returned last: its
// "branch", FORK/NAME (readme/parallel.md), "" for an event of the run's
// own branch. A workspace event's "branch" is --worktree's git branch, not
// a fork's: its Branch is "".
func (r *EventReader) Branch() string { return r.branch }

// Torn says whether the log ended in a line cut short, which Next skipped.
func (r *EventReader) Torn() bool { return r.torn }

// errLong is a line longer than MaxEventLine.
var errLong = fmt.Errorf("line longer than %d bytes", MaxEventLine)

// readLine returns the next line without its newline, and whether it is
// the last one and had none. A line past MaxEventLine is read to its end
// and dropped, as a *LineError.
func (r *EventReader) readLine() (line []byte, last bool, err error) {
	r.buf = r.buf[:0]
	long := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !long {
			if len(r.buf)+len(chunk) > MaxEventLine+1 {
				long, r.buf = true, r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		eof := err != nil
		if eof && len(r.buf) == 0 && !long {
			return nil, false, io.EOF
		}
		r.line++
		if long {
			return nil, false, &LineError{Line: r.line, Err: errLong}
		}
		if eof {
			return r.buf, true, nil
		}
		return r.buf[:len(r.buf)-1], false, nil
	}
}

// head is how every line starts: when, and which event.
type head struct {
	Time  []byte
	Event EventType
	// Branch is the event's "branch", nil when it has none: Log.EventOn
	// writes it right after the name.
	Branch []byte
}

// jsonHead is a head decoded as JSON.
type jsonHead struct {
	Time   string    `json:"time"`
	Event  EventType `json:"event"`
	Branch string    `json:"branch"`
}

// readHead reads a line's head. A line as Log.Event writes it starts
// {"time":"…","event":"name", and is read without a scan of the rest (the
// rest is decoded only for the events wanted); any other line is decoded
// as JSON.
func readHead(line []byte) (head, error) {
	if h, ok := quickHead(line); ok {
		return h, nil
	}
	var h jsonHead
	if err := json.Unmarshal(line, &h); err != nil {
		return head{}, err
	}
	if h.Event == "" {
		return head{}, errors.New(`no "event" name`)
	}
	hd := head{Time: []byte(h.Time), Event: h.Event}
	if h.Branch != "" {
		hd.Branch = []byte(h.Branch)
	}
	return hd, nil
}

// quickHead reads the head Log.Event writes: the time, then the name, a
// constant of [a-z_] (any other name is left to encoding/json).
func quickHead(line []byte) (head, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"time":"`))
	if !ok {
		return head{}, false
	}
	t, rest, ok := bytes.Cut(rest, []byte(`","event":"`))
	if !ok || bytes.ContainsAny(t, `"\`) {
		return head{}, false
	}
	name, rest, ok := bytes.Cut(rest, []byte(`"`))
	if !ok || len(name) == 0 || len(rest) == 0 || (rest[0] != ',' && rest[0] != '}') {
		return head{}, false
	}
	for _, c := range name {
		if (c < 'a' || c > 'z') && c != '_' {
			return head{}, false
		}
	}
	h := head{Time: t, Event: eventType(name)}
	if b, ok := bytes.CutPrefix(rest, []byte(`,"branch":"`)); ok {
		id, _, ok := bytes.Cut(b, []byte(`"`))
		if !ok || bytes.IndexByte(id, '\\') >= 0 {
			return head{}, false // an escaped id: left to encoding/json
		}
		h.Branch = id
	}
	return h, true
}

// eventType is name as an EventType, without a copy for the known ones.
func eventType(name []byte) EventType {
	switch string(name) {
	case string(EventRunStart):
		return EventRunStart
	case string(EventNodeStart):
		return EventNodeStart
	case string(EventAgentCall):
		return EventAgentCall
	case string(EventDecision):
		return EventDecision
	case string(EventValidation):
		return EventValidation
	case string(EventValidationFailed):
		return EventValidationFailed
	case string(EventRetry):
		return EventRetry
	case string(EventNodeEnd):
		return EventNodeEnd
	case string(EventEnd):
		return EventEnd
	case string(EventRunEnd):
		return EventRunEnd
	case string(EventVarUnset):
		return EventVarUnset
	case string(EventVarNUL):
		return EventVarNUL
	case string(EventFallback):
		return EventFallback
	case string(EventToolCall):
		return EventToolCall
	case string(EventToolCallsLeftOut):
		return EventToolCallsLeftOut
	case string(EventWorkspace):
		return EventWorkspace
	case string(EventRollback):
		return EventRollback
	case string(EventOutOfScope):
		return EventOutOfScope
	case string(EventTreeRestored):
		return EventTreeRestored
	case string(EventApprovalAsked):
		return EventApprovalAsked
	case string(EventApprovalGiven):
		return EventApprovalGiven
	}
	return EventType(name)
}

// decodeEvent decodes a line of a known event into its struct, and one of
// an unknown event into an Unknown.
func decodeEvent(t EventType, line []byte) (Event, error) {
	switch t {
	case EventRunStart:
		return decode[RunStart](line)
	case EventNodeStart:
		return decode[NodeStart](line)
	case EventAgentCall:
		return decode[AgentCall](line)
	case EventDecision:
		return decode[Decision](line)
	case EventValidation:
		return decode[Validation](line)
	case EventValidationFailed:
		return decode[ValidationFailed](line)
	case EventRetry:
		return decode[Retry](line)
	case EventNodeEnd:
		return decode[NodeEnd](line)
	case EventEnd:
		return decode[End](line)
	case EventRunEnd:
		return decode[RunEnd](line)
	case EventVarUnset:
		return decode[VarUnset](line)
	case EventVarNUL:
		return decode[VarNUL](line)
	case EventFallback:
		return decode[Fallback](line)
	case EventToolCall:
		return decode[ToolCall](line)
	case EventToolCallsLeftOut:
		return decode[ToolCallsLeftOut](line)
	case EventWorkspace:
		return decode[Workspace](line)
	case EventRollback:
		return decode[Rollback](line)
	case EventOutOfScope:
		return decode[OutOfScope](line)
	case EventTreeRestored:
		return decode[TreeRestored](line)
	case EventApprovalAsked:
		return decode[ApprovalAsked](line)
	case EventApprovalGiven:
		return decode[ApprovalGiven](line)
	case EventBranchStart:
		return decode[BranchStart](line)
	case EventBranchEnd:
		return decode[BranchEnd](line)
	case EventJoin:
		return decode[Join](line)
	}
	return Unknown{Name: t, Line: bytes.Clone(line)}, nil
}

func decode[E Event](line []byte) (Event, error) {
	var e E
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, err
	}
	return e, nil
}

// All reads the events left, up to the end or the first error, which it
// returns with the events read before it.
func (r *EventReader) All() ([]Event, error) {
	var evs []Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// ReadEvents reads every event of the run whose log directory is dir, for
// logs small enough to hold (tests, a run's own): as an EventReader, it
// skips a torn last line and returns Unknown events, and it stops at the
// first *LineError.
func ReadEvents(dir string) ([]Event, error) {
	f, err := OpenLog(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	evs, err := NewEventReader(f).All()
	if err != nil {
		return evs, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return evs, nil
}
