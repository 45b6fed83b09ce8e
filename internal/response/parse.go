package response

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// ParseProcess finds a process node's answer in an agent's reply: the last
// JSON object with "completed" (see [ParseDecision] for the rules).
func ParseProcess(text string) (types.ProcessResponse, error) {
	return parse(text, processSchema)
}

// ParseDecision finds a decision node's answer in an agent's reply.
//
// All three Parse functions follow the same rules. Among the objects that
// [FindObjects] returns, the answer is the last one with the response's key
// ("completed", "answer" or "fully_completed"): agents often echo the
// example from the prompt, or think aloud in JSON, before the real answer.
// If no object has that key, it is a *Error of KindMissingKey: reading
// another object would turn "no answer" into a false one. Keys match ignoring case, '_', '-' and spaces ("fullyCompleted"),
// an exact key winning over a near one.
//
// Values are read leniently, because LLMs get JSON types wrong in ways
// whose meaning is plain: "true", "yes" and 1 are true; "12" and
// "12 seconds" are 12; a lone string is a list of one; null is the zero
// value and never a nil slice; list items that are not strings are kept as
// their JSON text. A value that cannot be read is dropped, except that of
// the response's key, which makes an [*Error] of kind [KindBadValue].
//
// The error is always an [*Error]; its Reason is written to be sent back
// to the agent. Slices in the result are never nil, even with an error.
func ParseDecision(text string) (types.DecisionResponse, error) {
	return parse(text, decisionSchema)
}

// ParseValidation finds the validating agent's verdict in its reply: the
// last JSON object with "fully_completed" (see [ParseDecision] for the
// rules).
func ParseValidation(text string) (types.ValidationResponse, error) {
	return parse(text, validationSchema)
}

// Kind says what was wrong with a reply.
type Kind string

const (
	KindEmpty      Kind = "empty"       // nothing but whitespace
	KindNoJSON     Kind = "no_json"     // no JSON object at all
	KindMissingKey Kind = "missing_key" // objects, but none with the response's key
	KindBadValue   Kind = "bad_value"   // the key's value has no clear meaning
)

// Error is why a reply holds no usable answer. Reason is a sentence for the
// retry critique, e.g. `no JSON object with "answer" in the reply`; Excerpt
// is a short, single-line piece of the reply to show with it: the object at
// fault, or the end of the reply when it has none.
type Error struct {
	Kind    Kind
	Reason  string
	Excerpt string
}

func (e *Error) Error() string {
	if e.Excerpt == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s (reply: %q)", e.Reason, e.Excerpt)
}

// excerptRunes bounds Error.Excerpt.
const excerptRunes = 160

// field is one key of a response type and how to set it.
type field[T any] struct {
	name string // the JSON key
	want string // what a value must be, for errors: "true or false"
	set  func(r *T, raw json.RawMessage) bool
}

// schema is what parse needs to know about a response type. fields[0] is
// the key that marks an object as the answer.
type schema[T any] struct {
	fields []field[T]
	empty  func() T // the zero value, with empty slices
}

func parse[T any](text string, s schema[T]) (T, error) {
	text = StripANSI(text)
	key := s.fields[0].name
	if strings.TrimSpace(text) == "" {
		return s.empty(), &Error{Kind: KindEmpty, Reason: "the reply is empty"}
	}
	objs := FindObjects(text)
	if len(objs) == 0 {
		return s.empty(), &Error{
			Kind:    KindNoJSON,
			Reason:  fmt.Sprintf("no JSON object in the reply; expected one with %q", key),
			Excerpt: tail(text, excerptRunes),
		}
	}
	// The marking key is required: an object without it would read as
	// "completed": false or an empty answer, and the critique sent back
	// to the agent would blame it for something it did not say.
	for i := len(objs) - 1; i >= 0; i-- {
		r, hasKey, _, err := decode(objs[i], s)
		switch {
		case err != nil:
			return s.empty(), err
		case hasKey:
			return r, nil
		}
	}
	return s.empty(), &Error{
		Kind:    KindMissingKey,
		Reason:  fmt.Sprintf("no JSON object with %q in the reply", key),
		Excerpt: head(objs[len(objs)-1], excerptRunes),
	}
}

// decode reads obj into a response. hasKey is whether obj has the marking
// key, and known how many of the type's keys it set. err is non-nil only
// when the marking key's value cannot be read.
func decode[T any](obj string, s schema[T]) (r T, hasKey bool, known int, err *Error) {
	r = s.empty()
	vals := make([]json.RawMessage, len(s.fields))
	exact := make([]bool, len(s.fields))
	for _, m := range members(obj) {
		nk := normKey(m.key)
		for i, f := range s.fields {
			if nk != normKey(f.name) {
				continue
			}
			// The later of two near keys wins, as in encoding/json, but
			// never over the exact one.
			if is := m.key == f.name; is || !exact[i] {
				vals[i], exact[i] = m.val, is
			}
		}
	}
	for i, f := range s.fields {
		if vals[i] == nil {
			continue
		}
		if f.set(&r, vals[i]) {
			known++
		} else if i == 0 {
			return s.empty(), true, 0, &Error{
				Kind:    KindBadValue,
				Reason:  fmt.Sprintf("%q is %s, not %s", f.name, head(string(vals[i]), 40), f.want),
				Excerpt: head(obj, excerptRunes),
			}
		}
	}
	return r, vals[0] != nil, known, nil
}

// member is one key and value of a JSON object, in the order written.
type member struct {
	key string
	val json.RawMessage
}

// members lists obj's keys and values; obj is a valid JSON object.
func members(obj string) []member {
	dec := json.NewDecoder(strings.NewReader(obj))
	if _, err := dec.Token(); err != nil { // '{'
		return nil
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ms
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return ms
		}
		ms = append(ms, member{key, val})
	}
	return ms
}

// normKey folds the spellings of a key that LLMs use for the same thing:
// "fully_completed", "fullyCompleted", "Fully-Completed".
func normKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ':
			return -1
		}
		return r
	}, strings.ToLower(k))
}

var processSchema = schema[types.ProcessResponse]{
	fields: []field[types.ProcessResponse]{
		{"completed", "true or false", func(r *types.ProcessResponse, v json.RawMessage) (ok bool) {
			r.Completed, ok = toBool(v)
			return ok
		}},
		{"secs_taken", "a number", func(r *types.ProcessResponse, v json.RawMessage) (ok bool) {
			r.SecsTaken, ok = toFloat(v)
			return ok
		}},
		{"tokens_used", "a whole number", func(r *types.ProcessResponse, v json.RawMessage) (ok bool) {
			r.TokensUsed, ok = toInt(v)
			return ok
		}},
		{"comments", "a list of strings", func(r *types.ProcessResponse, v json.RawMessage) (ok bool) {
			r.Comments, ok = toStrings(v)
			return ok
		}},
	},
	empty: func() types.ProcessResponse { return types.ProcessResponse{Comments: []string{}} },
}

var decisionSchema = schema[types.DecisionResponse]{
	fields: []field[types.DecisionResponse]{
		{"answer", "a string", func(r *types.DecisionResponse, v json.RawMessage) (ok bool) {
			r.Answer, ok = toString(v)
			return ok
		}},
		{"choices", "a list of strings", func(r *types.DecisionResponse, v json.RawMessage) (ok bool) {
			r.Choices, ok = toStrings(v)
			return ok
		}},
		{"reasons", "a list of strings", func(r *types.DecisionResponse, v json.RawMessage) (ok bool) {
			r.Reasons, ok = toStrings(v)
			return ok
		}},
	},
	empty: func() types.DecisionResponse {
		return types.DecisionResponse{Choices: []string{}, Reasons: []string{}}
	},
}

var validationSchema = schema[types.ValidationResponse]{
	fields: []field[types.ValidationResponse]{
		{"fully_completed", "true or false", func(r *types.ValidationResponse, v json.RawMessage) (ok bool) {
			r.FullyCompleted, ok = toBool(v)
			return ok
		}},
		{"partially_completed", "true or false", func(r *types.ValidationResponse, v json.RawMessage) (ok bool) {
			r.PartiallyCompleted, ok = toBool(v)
			return ok
		}},
		{"should_retry", "true or false", func(r *types.ValidationResponse, v json.RawMessage) (ok bool) {
			r.ShouldRetry, ok = toBool(v)
			return ok
		}},
		{"warnings", "a list of strings", func(r *types.ValidationResponse, v json.RawMessage) (ok bool) {
			r.Warnings, ok = toStrings(v)
			return ok
		}},
	},
	empty: func() types.ValidationResponse { return types.ValidationResponse{Warnings: []string{}} },
}
