package replay

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// plan parses and resolves an answers file whose keys are node ids;
// decisions are the ids of decisions.
func plan(t *testing.T, path string, b []byte, decisions ...string) *Plan {
	t.Helper()
	a, err := Parse(path, b)
	require.NoError(t, err)
	nodes, err := a.Resolve(func(k string) []string { return []string{k} }, func(id string) (string, string) {
		for _, d := range decisions {
			if d == id {
				return "Node " + id, types.RoleDecision
			}
		}
		return "Node " + id, types.RoleProcess
	}, func(string) string { return "" })
	require.NoError(t, err)
	return &Plan{Answers: path, Nodes: nodes, Recorded: a.Recorded}
}

// answer makes one call of the visit of the node and returns its answer,
// or its error's text.
func answer(t *testing.T, r *Runner, node string, visit int, purpose string) string {
	t.Helper()
	res, err := r.Call(t.Context(), agent.Call{Def: replayDef(),
		Request: agent.Request{Node: node, Purpose: purpose, Attempt: 1, Visit: visit}})
	if err != nil {
		return err.Error()
	}
	return res.Answer
}

// A node's replies given per visit answer each visit its own, whichever
// visit calls first: a replay does not depend on the order of the calls.
func TestRepliesPerVisit(t *testing.T) {
	t.Parallel()
	const file = `"2":
  visit 1: [ok, "fail: red"]
  Visit 2:
    - ok
    - ok
"3": {visit 1: No, visit 3: [Yes]}
`
	const run, validate = agent.PurposeRun, agent.PurposeValidate
	for _, order := range [][]int{{1, 2}, {2, 1}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			t.Parallel()
			r := NewRunner(plan(t, "answers.yaml", []byte(file), "3"))
			got := map[int][]string{}
			for _, v := range order {
				got[v] = append(got[v], answer(t, r, "2", v, run), answer(t, r, "2", v, validate))
			}
			assert.Equal(t, []string{`{"completed": true}`, `{"fully_completed":false,"should_retry":true,"warnings":["red"]}`}, got[1])
			assert.Equal(t, []string{`{"completed": true}`, `{"fully_completed": true}`}, got[2])
			assert.Equal(t, `replay: node 2 "Node 2" has no reply left for visit 2 in answers.yaml: its 2 replies (line 3) are used; add one for this run call`,
				answer(t, r, "2", 2, run))
			assert.Equal(t, `{"answer":"Yes"}`, answer(t, r, "3", 3, run))
			assert.Equal(t, `replay: node 3 "Node 3" has no replies for visit 2 in answers.yaml; add "visit 2" under "3" (line 6)`,
				answer(t, r, "3", 2, run))
			assert.Equal(t, []Leftover{{ID: "3", Text: "Node 3", Line: 6, Left: 1}}, r.Unused())
			g, err := r.Gate("3", 1)
			assert.NoError(t, err)
			assert.Equal(t, "No", g)
			_, err = r.Gate("3", 1)
			assert.EqualError(t, err, `replay: node 3 "Node 3" has no reply left for visit 1 in answers.yaml: its one reply (line 6) is used; add one for this run call; a gate's reply is [approved] or [rejected] (a replay is not resumed, so it cannot wait at the gate)`)
		})
	}
}

// A file of lists, as every answers file before replies per visit,
// answers each node's calls in call order, whatever their visit: the
// quickstart's file, written by hand, takes its path as before.
func TestListsAnswerInCallOrder(t *testing.T) {
	t.Parallel()
	const path = "../../testdata/quickstart/update-deps.answers.yaml"
	a, err := Load(path)
	require.NoError(t, err)
	for _, e := range a.Entries {
		assert.Nil(t, e.Visits, e.Key)
	}
	r := NewRunner(plan(t, path, mustRead(t, path), "Did every test pass?"))
	assert.Equal(t, `{"answer":"No"}`, answer(t, r, "Did every test pass?", 1, agent.PurposeRun))
	assert.Equal(t, `{"answer":"Yes"}`, answer(t, r, "Did every test pass?", 2, agent.PurposeRun))
	assert.Equal(t, "{\"completed\": true}", answer(t, r, "6", 1, agent.PurposeRun))
	assert.Contains(t, answer(t, r, "6", 1, agent.PurposeValidate), "go.sum was not updated")
}

// The recording of a node whose visits overlapped (a visit began before
// an earlier one ended, as on two branches) gives its replies per visit,
// and replays each visit its own; a node visited one visit after the
// other keeps its list.
func TestRecorderOverlappingVisits(t *testing.T) {
	t.Parallel()
	var r Recorder
	done := `{"completed": true}`
	r.Add("1", 1, "Plan", false, false, done, nil, nil)
	r.Add("1", 2, "Plan", false, false, done, nil, nil)
	r.Add("2", 2, "Work", false, false, `{"completed": false, "comments": ["second"]}`, nil, nil)
	r.Add("2", 1, "Work", false, false, done, nil, nil)
	r.Add("2", 2, "Work", false, false, done, nil, nil)
	for range yamlChunk + 1 { // more than a chunk of one visit
		r.Add("2", 1, "Work", false, true, `{"fully_completed": true}`, nil, nil)
	}
	b, err := r.YAML("Recorded by a test.", nil)
	require.NoError(t, err)
	s := string(b)
	assert.True(t, strings.HasPrefix(s, "# Recorded by a test.\n\n\"1\": # Plan\n  - ok\n  - ok\n\"2\": # Work\n  visit 1:\n    - ok\n    - ok\n"), s)
	assert.Contains(t, s, "    - ok\n  visit 2:\n    - 'fail: second'\n    - ok\n", s)

	a, err := Parse("answers.yaml", b)
	require.NoError(t, err)
	require.Len(t, a.Entries, 2)
	assert.Nil(t, a.Entries[0].Visits)
	assert.Len(t, a.Entries[1].Visits[1].Replies, yamlChunk+2)
	rn := NewRunner(plan(t, "answers.yaml", b))
	assert.Equal(t, `{"comments":["second"],"completed":false}`, answer(t, rn, "2", 2, agent.PurposeRun))
	assert.Equal(t, `{"completed": true}`, answer(t, rn, "2", 1, agent.PurposeRun))
}

func TestParseVisitsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ file, err string }{
		{"a:\n  visit 1: ok\n  completed: true\n", `answers.yaml:3: node "a" gives its replies per visit ("visit 1": …), and this key is no visit; write it "visit N"`},
		{"a:\n  visit 0: ok\n", `answers.yaml:2: visits count from 1: the first is "visit 1"`},
		{"a:\n  visit 2: ok\n  VISIT 2: ok\n", `answers.yaml:3: visit 2 of node "a" is listed twice (also line 2); put its replies in one list`},
		{"a:\n  visit 1: [[x]]\n", "answers.yaml:2: a reply is a text or a mapping, not a list"},
	}
	for _, tt := range tests {
		_, err := Parse("answers.yaml", []byte(tt.file))
		assert.EqualError(t, err, tt.err, tt.file)
	}
	// A mapping with no visit key is one reply, as before.
	a, err := Parse("answers.yaml", []byte("a: {completed: true, comments: [visit 1]}\n"))
	require.NoError(t, err)
	assert.Equal(t, []Reply{{Text: `{"comments":["visit 1"],"completed":true}`, Line: 1}}, a.Entries[0].Replies)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
