package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/types"
)

// Recorder collects what each agent replied during a run, so the run's
// answers.yaml can replay it (`dtree run CHART --answers answers.yaml`).
// It keeps each call as it came, with its node and visit, and works out
// its reply only when the file is written: recording is on the path
// between one agent and the next, and should not parse the answer a
// second time there.
type Recorder struct {
	order []string
	nodes map[string]*recorded
}

type recorded struct {
	text  string
	calls []call
}

// call is one recorded agent call of a visit, and the arguments of
// ReplyFor.
type call struct {
	visit                int
	decision, validation bool
	answer               string
	err                  error
	labels               []string
}

// Add records one agent call of a visit of node id: its answer text, or
// the error the call ended with. labels are a decision's allowed answers.
func (r *Recorder) Add(id string, visit int, text string, decision, validation bool, answer string, callErr error, labels []string) {
	if r.nodes == nil {
		r.nodes = map[string]*recorded{}
	}
	n := r.nodes[id]
	if n == nil {
		n = &recorded{text: text}
		r.nodes[id] = n
		r.order = append(r.order, id)
	}
	// A node in a loop is often answered alike: its calls share the text
	// and labels of a recent call's, so that a run of 100,000 steps keeps
	// one copy of them, not one a call.
	for i := len(n.calls) - 1; i >= max(len(n.calls)-2, 0); i-- {
		if c := &n.calls[i]; c.answer == answer {
			answer = c.answer
		}
		if c := &n.calls[i]; slices.Equal(c.labels, labels) {
			labels = c.labels
		}
	}
	n.calls = append(n.calls, call{visit: visit, decision: decision, validation: validation, answer: answer, err: callErr, labels: labels})
}

// Len is the number of calls recorded.
func (r *Recorder) Len() int {
	n := 0
	for _, rec := range r.nodes {
		n += len(rec.calls)
	}
	return n
}

// ReplyFor is the reply that makes the replay agent answer as the agent
// did: a shorthand where one says the same, a decision's label, the parsed
// JSON, or, when the answer did not parse, "raw: " and the answer as it
// was, printed exactly on replay, so the replay fails the same way (a bare
// "Yes" would be read as a decision's label, a bare "OK" as "ok").
func ReplyFor(decision, validation bool, answer string, callErr error, labels []string) string {
	if callErr != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(callErr.Error()), "\n")
		return "error: " + line
	}
	switch {
	case validation:
		v, err := response.ParseValidation(answer)
		if err != nil {
			return "raw: " + answer
		}
		if v.FullyCompleted && !v.PartiallyCompleted && !v.ShouldRetry && len(v.Warnings) == 0 {
			return "ok"
		}
		if !v.FullyCompleted && !v.PartiallyCompleted && v.ShouldRetry && len(v.Warnings) == 1 && oneLine(v.Warnings[0]) {
			return "fail: " + v.Warnings[0]
		}
		return compact(struct {
			FullyCompleted     bool     `json:"fully_completed"`
			PartiallyCompleted bool     `json:"partially_completed,omitempty"`
			ShouldRetry        bool     `json:"should_retry,omitempty"`
			Warnings           []string `json:"warnings,omitempty"`
		}{v.FullyCompleted, v.PartiallyCompleted, v.ShouldRetry, v.Warnings})
	case decision:
		d, err := response.ParseDecision(answer)
		if err != nil {
			return "raw: " + answer
		}
		if label, ok := response.MatchLabel(d.Answer, labels); ok && plainAnswer(label) {
			return label
		}
		if plainAnswer(d.Answer) {
			return d.Answer
		}
		return compact(map[string]string{"answer": d.Answer})
	}
	p, err := response.ParseProcess(answer)
	if err != nil {
		return "raw: " + answer
	}
	if p.SecsTaken == 0 && p.TokensUsed == 0 {
		switch {
		case p.Completed && len(p.Comments) == 0:
			return "ok"
		case !p.Completed && len(p.Comments) == 1 && oneLine(p.Comments[0]):
			return "fail: " + p.Comments[0]
		}
	}
	return compact(struct {
		Completed  bool     `json:"completed"`
		SecsTaken  float64  `json:"secs_taken,omitempty"`
		TokensUsed int64    `json:"tokens_used,omitempty"`
		Comments   []string `json:"comments,omitempty"`
	}{p.Completed, p.SecsTaken, p.TokensUsed, p.Comments})
}

// plainAnswer says a decision answer replays as itself: not empty, and not
// read as JSON or an error by Render.
func plainAnswer(s string) bool {
	t := strings.ToLower(s)
	return s != "" && s == strings.TrimSpace(s) && !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "error:") && !strings.HasPrefix(t, "raw:")
}

func oneLine(s string) bool {
	return s != "" && s == strings.TrimSpace(s) && !strings.ContainsAny(s, "\r\n")
}

func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// YAML is the recorded answers file: one entry per node in the order the
// run first reached it, keyed by id with the node's text as a comment. A
// node's replies are one list, in visit order, when its visits came one
// after the other, as they do on one path; else per visit ("visit 2":
// …), so that a replay answers each visit its own, whichever comes first.
// mask, when not nil, masks secrets in every text before it is encoded
// (YAML quotes, escapes and folds them; masking the file after would miss
// those forms and could break its syntax). It is encoded yamlChunk replies
// at a time, so that a run of 100,000 calls does not build a YAML tree of
// them all; the file is the same.
func (r *Recorder) YAML(header string, mask func(string) string) ([]byte, error) {
	if mask == nil {
		mask = func(s string) string { return s }
	}
	header = mask(header)
	if len(r.order) == 0 {
		// An empty mapping prints as "{}"; say why it is empty.
		return []byte(commentLines(header) + "# no agent was called\n{}\n"), nil
	}
	var b bytes.Buffer
	for i, id := range r.order {
		n := r.nodes[id]
		perVisit := n.byVisit()
		replies := map[int]string{} // of the node's last calls, for reply
		for from := 0; from < len(n.calls); {
			to := min(from+yamlChunk, len(n.calls))
			newVisit := perVisit && (from == 0 || n.calls[from-1].visit != n.calls[from].visit)
			if perVisit { // a chunk of one visit's replies
				for j := from + 1; j < to; j++ {
					if n.calls[j].visit != n.calls[from].visit {
						to = j
						break
					}
				}
			}
			list := &yaml.Node{Kind: yaml.SequenceNode}
			for i := from; i < to; i++ {
				list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: n.reply(i, replies, mask)})
			}
			part, indent := list, "  " // more of a list: a list of its own, indented as its first part
			if perVisit {
				indent = "    "
			}
			if newVisit {
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprintf("visit %d", n.calls[from].visit)}
				part, indent = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{key, list}}, "  "
			}
			first := from == 0
			from = to
			if !first {
				out, err := encodeYAML(part)
				if err != nil {
					return nil, err
				}
				for line := range bytes.Lines(out) {
					if len(line) > 1 { // an empty line, of a block scalar, stays empty
						b.WriteString(indent)
					}
					b.Write(line)
				}
				continue
			}
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: mask(id), Style: yaml.DoubleQuotedStyle,
				LineComment: types.Excerpt(mask(strings.TrimSpace(n.text)), 70)}
			doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{key, part}}}}
			if i == 0 {
				doc.HeadComment = header
			}
			out, err := encodeYAML(doc)
			if err != nil {
				return nil, err
			}
			b.Write(out)
		}
	}
	return b.Bytes(), nil
}

// byVisit puts the node's calls in visit order, each visit's in the
// order they came, and says whether that moved any: a visit that began
// before an earlier one ended, on another branch. On one path it moves
// none.
func (n *recorded) byVisit() bool {
	byVisit := func(a, b call) int { return a.visit - b.visit }
	if slices.IsSortedFunc(n.calls, byVisit) {
		return false
	}
	slices.SortStableFunc(n.calls, byVisit)
	return true
}

// reply is the reply of the node's i-th call, masked; replies holds those
// of the calls before it, and gets this one's. A call answered as one of
// the two before it has its reply: in a loop most calls are (Add shares
// their text), and each is worked out once.
func (n *recorded) reply(i int, replies map[int]string, mask func(string) string) string {
	c := &n.calls[i]
	delete(replies, i-3)
	for j := i - 1; j >= max(i-2, 0); j-- {
		if p := &n.calls[j]; p.answer == c.answer && p.err == nil && c.err == nil &&
			p.decision == c.decision && p.validation == c.validation && slices.Equal(p.labels, c.labels) {
			replies[i] = replies[j]
			return replies[i]
		}
	}
	replies[i] = mask(ReplyFor(c.decision, c.validation, c.answer, c.err, c.labels))
	return replies[i]
}

// yamlChunk is how many replies YAML encodes at once.
const yamlChunk = 256

func encodeYAML(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("encode answers: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode answers: %w", err)
	}
	return b.Bytes(), nil
}

func commentLines(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("# " + l + "\n")
	}
	return b.String()
}
