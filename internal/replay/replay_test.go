package replay

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/types"
	"go.yaml.in/yaml/v3"
)

func TestParseAnswers(t *testing.T) {
	t.Parallel()
	src := `# a comment
"2": [ok, "fail: no test for it"]
Did the tests pass?:
  - No
  - "Yes"
4: ok
"5":
  - {completed: true, comments: [done, "with \"quotes\""]}
`
	a, err := Parse("answers.yaml", []byte(src))
	require.NoError(t, err)
	require.Len(t, a.Entries, 4)
	assert.Equal(t, Entry{Key: "2", Line: 2, Replies: []Reply{{"ok", 2}, {"fail: no test for it", 2}}}, a.Entries[0])
	assert.Equal(t, "Did the tests pass?", a.Entries[1].Key)
	assert.Equal(t, []Reply{{"No", 4}, {"Yes", 5}}, a.Entries[1].Replies)
	assert.Equal(t, []Reply{{"ok", 6}}, a.Entries[2].Replies, "a single reply needs no list")
	assert.JSONEq(t, `{"completed": true, "comments": ["done", "with \"quotes\""]}`, a.Entries[3].Replies[0].Text)
}

func TestParseAnswersErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"not a mapping", "- ok\n- ok\n", "answers.yaml:1: an answers file is a mapping"},
		{"twice", "a: ok\nb: ok\na: [ok]\n", "answers.yaml:3: node \"a\" is listed twice (also line 1)"},
		{"empty reply", "a:\n  - ok\n  -\n", "answers.yaml:3: an empty reply"},
		{"nested list", "a:\n  - [ok]\n", "answers.yaml:2: a reply is a text or a mapping, not a list"},
		{"bad yaml", "a: ok\nb: [ok\nc: ok\n", "answers.yaml:2: not YAML: did not find expected ',' or ']'"},
		{"tab", "a:\n\t- ok\n", "answers.yaml:2: not YAML: found character that cannot start any token"},
		{"shorthand with a list", "a:\n  - fail: [x]\n", `answers.yaml:2: fail: takes a text, not a list; quote the whole reply: "fail: …"`},
		{"alias of a list reply", "x: &l [ok]\na:\n  - *l\n", "answers.yaml:1: a reply is a text or a mapping, not a list"},
		{"empty key", "\"\": ok\n", "answers.yaml:1: a key must be a node's id or text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("answers.yaml", []byte(tt.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// Unquoted in a list, "- fail: why" is a YAML mapping of one key; it is
// read as the shorthand it looks like, as is an alias of a reply.
func TestParseAnswersUnquotedShorthands(t *testing.T) {
	t.Parallel()
	src := "a:\n  - fail: no network\n  - error: boom\n  - ok:\n  - FAIL:\n  - raw: Yes\n  - &r {completed: true}\nb: [*r, {fail: x, other: y}]\n"
	a, err := Parse("answers.yaml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, []Reply{{"fail: no network", 2}, {"error: boom", 3}, {"ok", 4}, {"fail:", 5}, {"raw: Yes", 6}, {`{"completed":true}`, 7}}, a.Entries[0].Replies)
	require.Len(t, a.Entries[1].Replies, 2)
	assert.JSONEq(t, `{"completed": true}`, a.Entries[1].Replies[0].Text)
	assert.JSONEq(t, `{"fail": "x", "other": "y"}`, a.Entries[1].Replies[1].Text, "two keys are a JSON reply")
}

func TestResolveReportsEveryUnknownKey(t *testing.T) {
	t.Parallel()
	a, err := Parse("a.yaml", []byte("Run tests: ok\nnope: ok\ntwin: ok\n\"7\": ok\nStart: ok\n"))
	require.NoError(t, err)
	find := func(key string) []string {
		switch key {
		case "Run tests", "7":
			return []string{"7"}
		case "twin":
			return []string{"8", "9"}
		case "Start":
			return []string{"1"}
		}
		return nil
	}
	info := func(id string) (string, string) {
		if id == "1" {
			return "Start", types.RoleTerminator
		}
		return "Run tests", types.RoleProcess
	}
	near := func(key string) string {
		if key == "nope" {
			return "; did you mean note?"
		}
		return ""
	}
	_, err = a.Resolve(find, info, near)
	require.Error(t, err)
	for _, want := range []string{
		`a.yaml:2: no node has the id or text "nope"; did you mean note? ('dtree inspect CHART' lists them)`,
		`a.yaml:3: nodes 8, 9 all have the text "twin"; key them by id`,
		`a.yaml:4: node 7 already has replies at line 1`,
		`a.yaml:5: node 1 "Start" is a terminator: it never reaches an agent, so it takes no replies`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reply                string
		decision, validation bool
		out, errText         string
	}{
		{"ok", false, false, `{"completed": true}`, ""},
		{"OK", false, true, `{"fully_completed": true}`, ""},
		{"fail: no tests", false, false, `{"comments":["no tests"],"completed":false}`, ""},
		{"fail: flaky", false, true, `{"fully_completed":false,"should_retry":true,"warnings":["flaky"]}`, ""},
		{"error: rate limited", false, false, "", "rate limited"},
		{"error: rate limited", true, false, "", "rate limited"},
		{`{"completed": false}`, false, false, `{"completed": false}`, ""},
		{"Yes", true, false, `{"answer":"Yes"}`, ""},
		{"ok", true, false, `{"answer":"ok"}`, ""},
		{`say "hi" $(touch X)`, true, false, `{"answer":"say \"hi\" $(touch X)"}`, ""},
		{"All done.\nno JSON here", false, false, "All done.\nno JSON here", ""},
		{"raw: Yes", true, false, "Yes", ""},
		{"RAW: OK", false, true, "OK", ""},
		{"raw: error: x", false, false, "error: x", ""},
		{"raw: {\"completed\": true", false, false, `{"completed": true`, ""},
		{"raw:", false, false, "", ""},
	}
	for _, tt := range tests {
		out, errText := Render(tt.reply, tt.decision, tt.validation)
		assert.Equal(t, tt.out, out, "Render(%q, %v, %v)", tt.reply, tt.decision, tt.validation)
		assert.Equal(t, tt.errText, errText, "Render(%q, %v, %v)", tt.reply, tt.decision, tt.validation)
	}
}

// What an agent answered, recorded and rendered again, parses to the same
// response: a replayed run takes the same path.
func TestRecordedRepliesRenderTheSameResponse(t *testing.T) {
	t.Parallel()
	labels := []string{"Yes", "No", "Maybe later"}
	tests := []struct {
		name                 string
		decision, validation bool
		answer               string
		want                 string // the recorded reply
	}{
		{"process ok", false, false, "Done.\n```json\n{\"completed\": true}\n```", "ok"},
		{"process fail", false, false, `{"completed": false, "comments": ["the build is red"]}`, "fail: the build is red"},
		{"process full", false, false, `{"completed": true, "secs_taken": 3.5, "comments": ["a", "b"]}`, `{"completed":true,"secs_taken":3.5,"comments":["a","b"]}`},
		{"process unparseable", false, false, "I could not do it", "raw: I could not do it"},
		// Text that did not parse is recorded raw, even when it reads as
		// a shorthand or a label: replayed bare, it would parse.
		{"process bare OK", false, false, "OK", "raw: OK"},
		{"process shorthand-looking", false, false, "fail: nothing to do", "raw: fail: nothing to do"},
		{"validation prose", false, true, "Looks good to me.", "raw: Looks good to me."},
		{"decision bare label", true, false, "Yes", "raw: Yes"},
		{"decision error-looking prose", true, false, "error: x", "raw: error: x"},
		{"validation ok", false, true, `{"fully_completed": true}`, "ok"},
		{"validation fail", false, true, `{"fully_completed": false, "should_retry": true, "warnings": ["no test"]}`, "fail: no test"},
		{"validation partial", false, true, `{"fully_completed": false, "partially_completed": true, "warnings": ["x"]}`, `{"fully_completed":false,"partially_completed":true,"warnings":["x"]}`},
		{"decision label", true, false, `{"answer": "Yes — because the tests pass"}`, "Yes"},
		{"decision no match", true, false, `{"answer": "Perhaps"}`, "Perhaps"},
		{"decision JSON-looking", true, false, `{"answer": "{not json"}`, `{"answer":"{not json"}`},
		{"decision error-looking", true, false, `{"answer": "error: x"}`, `{"answer":"error: x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ReplyFor(tt.decision, tt.validation, tt.answer, nil, labels)
			assert.Equal(t, tt.want, got)
			replayed, errText := Render(got, tt.decision, tt.validation)
			require.Empty(t, errText)
			switch {
			case tt.validation:
				assertSame(t, response.ParseValidation, tt.answer, replayed)
			case tt.decision:
				d1, err1 := response.ParseDecision(tt.answer)
				d2, err2 := response.ParseDecision(replayed)
				require.Equal(t, err1 == nil, err2 == nil)
				l1, ok1 := response.MatchLabel(d1.Answer, labels)
				l2, ok2 := response.MatchLabel(d2.Answer, labels)
				assert.Equal(t, ok1, ok2)
				assert.Equal(t, l1, l2)
			default:
				assertSame(t, response.ParseProcess, tt.answer, replayed)
			}
		})
	}
	assert.Equal(t, "error: claude timed out after 10m", ReplyFor(false, false, "", errors.New("claude timed out after 10m\nmore"), nil))
}

func assertSame[T any](t *testing.T, parse func(string) (T, error), a, b string) {
	t.Helper()
	r1, err1 := parse(a)
	r2, err2 := parse(b)
	assert.Equal(t, err1 == nil, err2 == nil, "both parse or neither")
	assert.Equal(t, r1, r2)
}

func TestRecorderYAMLParsesBack(t *testing.T) {
	t.Parallel()
	var r Recorder
	r.Add("2", 1, "Run the tests\nall of them", false, false, `{"completed": true}`, nil, nil)
	r.Add("3", 1, "Did they pass?", true, false, `{"answer": "No"}`, nil, []string{"Yes", "No"})
	r.Add("2", 1, "Run the tests\nall of them", false, true, `{"fully_completed": true}`, nil, nil)
	r.Add("3", 1, "Did they pass?", true, false, `{"answer": "yes"}`, nil, []string{"Yes", "No"})
	r.Add("4", 1, "Odd: text # with hash", false, false, "line one\n  line two: \"quoted\"", nil, nil)
	b, err := r.YAML("Recorded by a test.\nSecond line.", nil)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "# Recorded by a test.\n# Second line.\n"), string(b))
	assert.Contains(t, string(b), `"2": # Run the tests…`)
	a, err := Parse("answers.yaml", b)
	require.NoError(t, err, string(b))
	var got [][]string
	for _, e := range a.Entries {
		var rs []string
		for _, r := range e.Replies {
			rs = append(rs, r.Text)
		}
		got = append(got, append([]string{e.Key}, rs...))
	}
	assert.Equal(t, [][]string{{"2", "ok", "ok"}, {"3", "No", "Yes"}, {"4", "raw: line one\n  line two: \"quoted\""}}, got)
	assert.Equal(t, 5, r.Len())

	empty, err := (&Recorder{}).YAML("nothing", nil)
	require.NoError(t, err)
	a, err = Parse("answers.yaml", empty)
	require.NoError(t, err)
	assert.Empty(t, a.Entries)
}

// treeYAML is the answers file encoded whole, as one YAML tree: what YAML
// wrote before it encoded a chunk of replies at a time.
func treeYAML(t *testing.T, r *Recorder, header string) []byte {
	t.Helper()
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, id := range r.order {
		n := r.nodes[id]
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id, Style: yaml.DoubleQuotedStyle,
			LineComment: types.Excerpt(strings.TrimSpace(n.text), 70)}
		list := &yaml.Node{Kind: yaml.SequenceNode}
		for _, c := range n.calls {
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str",
				Value: ReplyFor(c.decision, c.validation, c.answer, c.err, c.labels)})
		}
		root.Content = append(root.Content, key, list)
	}
	out, err := encodeYAML(&yaml.Node{Kind: yaml.DocumentNode, HeadComment: header, Content: []*yaml.Node{root}})
	require.NoError(t, err)
	return out
}

// A long run's answers file, written a chunk of replies at a time, is the
// file the whole tree gives, byte for byte, whatever the replies hold.
func TestRecorderYAMLInChunksIsTheWholeFile(t *testing.T) {
	t.Parallel()
	answers := []string{
		`{"completed": true}`, "line one\n  line two: \"quoted\"", "  leading spaces\nand # a hash: here\n",
		`{"completed": false, "comments": ["why: it failed\nsecond line"]}`, "- a list?\n- no", "tab\there", "ünïcödé … ✓",
		strings.Repeat("long line ", 30), "trailing newline\n\n", "'single' and \"double\"", "", "null",
	}
	var r Recorder
	for i := range 3*yamlChunk + 17 {
		id := fmt.Sprint(i % 3)
		if i%7 == 0 {
			r.Add(id, 1, "Decide\nsecond line", true, false, `{"answer": "Maybe: `+fmt.Sprint(i)+`"}`, nil, []string{"Yes", "No"})
			continue
		}
		r.Add(id, 1, "Step "+id, false, i%5 == 0, answers[i%len(answers)], nil, nil)
	}
	// A loop: the same answers again and again, as work and as its
	// validation, and a decision's same answer under other labels.
	for i := range 2*yamlChunk + 3 {
		r.Add("loop", 1, "Loop", false, i%2 == 1, `{"completed": true, "fully_completed": false}`, nil, nil)
		labels := []string{"Yes", "No"}
		if i%3 == 0 {
			labels = []string{"yes", "Maybe"}
		}
		r.Add("ask", 1, "Ask", true, false, `{"answer": "yes"}`, nil, labels)
		if i%50 == 0 {
			r.Add("ask", 1, "Ask", true, false, `{"answer": "yes"}`, errors.New("exit 3"), labels)
		}
	}
	header := "Recorded by a test.\nSecond line."
	got, err := r.YAML(header, nil)
	require.NoError(t, err)
	assert.Equal(t, string(treeYAML(t, &r, header)), string(got))
	_, err = Parse("answers.yaml", got)
	require.NoError(t, err)
}
