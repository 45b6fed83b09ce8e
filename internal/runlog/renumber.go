package runlog

import (
	"encoding/json"
	"slices"
)

// Renumber returns an event's line with the node ids in it renamed by ids
// (old id → new id), for a resumed run whose chart was exported again
// with new ids (readme/resume.md#a-chart-exported-again): the lines it
// carries over then name the nodes of the chart it walks. The time, the
// name and the run id are kept. An id ids does not have, a line that is
// not a known event, and the text of a VarUnset's ref are left as they
// are.
func Renumber(line []byte, ids map[string]string) []byte {
	h, err := readHead(line)
	if err != nil {
		return line
	}
	ev, err := decodeEvent(h.Event, line)
	if err != nil {
		return line
	}
	re := func(id *string) {
		if n, ok := ids[*id]; ok {
			*id = n
		}
	}
	switch e := ev.(type) {
	case NodeStart:
		re(&e.Node)
		ev = e
	case AgentCall:
		re(&e.Node)
		ev = e
	case Decision:
		re(&e.Node)
		re(&e.Next)
		ev = e
	case Validation:
		re(&e.Node)
		ev = e
	case ValidationFailed:
		re(&e.Node)
		ev = e
	case Retry:
		re(&e.Node)
		ev = e
	case Rollback:
		re(&e.Node)
		ev = e
	case OutOfScope:
		re(&e.Node)
		ev = e
	case TreeRestored:
		re(&e.Node)
		ev = e
	case ApprovalAsked:
		re(&e.Node)
		ev = e
	case BranchStart: // its branch's id, FORK/NAME, stays: the lines of its steps name it
		re(&e.Fork)
		re(&e.First)
		ev = e
	case BranchEnd:
		e.Path = slices.Clone(e.Path)
		for i := range e.Path {
			re(&e.Path[i])
		}
		ev = e
	case Join:
		re(&e.Node)
		re(&e.Fork)
		ev = e
	case ApprovalGiven:
		re(&e.Node)
		re(&e.Next)
		ev = e
	case NodeEnd:
		re(&e.Node)
		re(&e.Next)
		ev = e
	case End:
		re(&e.Node)
		ev = e
	case VarUnset:
		re(&e.Node)
		ev = e
	case Fallback:
		re(&e.Node)
		ev = e
	case ToolCall:
		re(&e.Node)
		ev = e
	case ToolCallsLeftOut:
		re(&e.Node)
		ev = e
	default:
		return line
	}
	rest, err := json.Marshal(ev)
	if err != nil || len(rest) < 2 {
		return line
	}
	b := append([]byte(`{"time":`), quote(h.Time)...)
	b = append(append(b, `,"event":`...), quote([]byte(h.Event))...)
	if h.Branch != nil && h.Event != EventWorkspace { // a fork branch's event stays its
		b = append(append(b, `,"branch":`...), quote(h.Branch)...)
	}
	if len(rest) > 2 {
		b = append(append(b, ','), rest[1:]...)
	} else {
		b = append(b, '}')
	}
	return b
}

func quote(s []byte) []byte {
	b, _ := json.Marshal(string(s))
	return b
}
