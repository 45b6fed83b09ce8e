package agent

import (
	"bytes"
	"errors"
	"github.com/dtree-dev/dtree/internal/response"
	"regexp"
	"strings"
)

// waitingRules recognize a CLI that is waiting for a human, by codename:
// a line it prints on stdout before its first JSON event that asks for
// something only a person can give (a login code). Nobody will answer, so
// waiting for the node's timeout (40 minutes with the defaults, over its
// attempts) is no use: Run stops the CLI at once, as it stops one that
// outstays its final event, and fails the call with the rule's kind and
// hint — a failure no retry can mend.
var waitingRules = map[string][]permanentRule{
	// Without a login amp prints a login URL on stdout and waits for a
	// code (readme/clis.md#amp). Its
	// stream-json prints nothing else before its first event.
	"amp": {{pattern: ampWaiting, kind: PermanentLogin, hint: ampLoginHint}},
}

// ampWaiting is amp's login prompt in any of its wordings: its auth URL,
// advice to run amp login, or a request to log in or paste a code.
var ampWaiting = regexp.MustCompile(`(?i)ampcode\.com/auth|\bamp login\b|\blog ?in\b|\bsign ?in\b|\bauthenticat|\b(?:paste|enter)\b.*\bcode\b`)

// errWaiting ends an agent that is waiting for a human.
var errWaiting = errors.New("waiting for a human")

// waitWatch reads stdout until the CLI's first JSON event, looking for a
// line that says it is waiting for a human (waitingRules). Once a line
// starts with '{' or '[' the CLI is at work and the watch ends. A line in
// progress is checked too: a prompt such as "Paste the code: " has no
// newline until someone answers it.
type waitWatch struct {
	rules []permanentRule
	stop  func() // called once, on a match
	buf   []byte // the line in progress
	done  bool   // a JSON event came, or a rule matched
	match *permanentRule
	line  string // the line that matched
}

// maxWaitLine bounds the line in progress; a longer one is not a prompt.
const maxWaitLine = 4 << 10

func (w *waitWatch) write(p []byte) {
	for !w.done && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p[:min(len(p), maxWaitLine-len(w.buf))]...)
			w.check(false)
			return
		}
		w.buf = append(w.buf, p[:min(i, maxWaitLine-len(w.buf))]...)
		w.check(true)
		w.buf, p = w.buf[:0], p[i+1:]
	}
}

// check looks at the line in progress; whole says it has ended.
func (w *waitWatch) check(whole bool) {
	line := strings.TrimSpace(response.StripANSI(string(w.buf)))
	if line == "" {
		return
	}
	if line[0] == '{' || line[0] == '[' {
		w.done = true
		return
	}
	for i := range w.rules {
		if w.rules[i].pattern.MatchString(line) {
			w.done, w.match, w.line = true, &w.rules[i], clip(line)
			w.stop()
			return
		}
	}
	if !whole && len(w.buf) >= maxWaitLine {
		w.done = true
	}
}
