package replay

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
)

func testPlan() *Plan {
	return &Plan{Answers: "/charts/answers.yaml", Nodes: map[string]*Node{
		"2": {Text: "Run the tests", Replies: []Reply{{"ok", 3}, {"fail: no test", 3}, {`{"completed": false, "comments": ["red"]}`, 3}}, Line: 3},
		"3": {Text: "Passed?", Decision: true, Replies: []Reply{{"No", 5}}, Line: 5},
		"4": {Text: "Deploy"},
		"5": {Text: "Tag", Replies: []Reply{{"error: rate limited", 7}, {"raw: Yes", 8}, {"RAW: error: x", 9}, {"raw:", 10}, {"ok", 11}}, Line: 7},
		"6": {Text: "Choose", Decision: true, Replies: []Reply{{"raw: Yes", 12}, {"Maybe later", 13}, {"error:", 14}}, Line: 12},
	}}
}

// want is what one call gives: the answer, or the error; the exit status;
// and what it wrote to the call's output (long.log).
type want struct {
	node, purpose string
	answer        string
	err           string
	exit          int
	output        string
}

// The runner answers each call with its node's next reply, rendered for
// the call's purpose, and fails a call it has no reply for with the
// message that names the node and the file.
func TestRunnerCall(t *testing.T) {
	t.Parallel()
	const run, validate = agent.PurposeRun, agent.PurposeValidate
	tests := []struct {
		name  string
		calls []want
	}{
		{"replies in order, each for its purpose", []want{
			{node: "2", purpose: run, answer: `{"completed": true}`, output: "{\"completed\": true}\n"},
			{node: "2", purpose: validate, answer: `{"fully_completed":false,"should_retry":true,"warnings":["no test"]}`,
				output: "{\"fully_completed\":false,\"should_retry\":true,\"warnings\":[\"no test\"]}\n"},
			{node: "2", purpose: run, answer: `{"completed": false, "comments": ["red"]}`, output: "{\"completed\": false, \"comments\": [\"red\"]}\n"},
		}},
		{"a decision's reply is its answer", []want{
			{node: "3", purpose: run, answer: `{"answer":"No"}`, output: "{\"answer\":\"No\"}\n"},
		}},
		{"no reply left", []want{
			{node: "3", purpose: run, answer: `{"answer":"No"}`, output: "{\"answer\":\"No\"}\n"},
			{node: "3", purpose: run, exit: 1,
				err:    `replay: node 3 "Passed?" has no reply left in /charts/answers.yaml: its one reply (line 5) is used; add one for this run call`,
				output: "----- stderr -----\nreplay: node 3 \"Passed?\" has no reply left in /charts/answers.yaml: its one reply (line 5) is used; add one for this run call\n"},
		}},
		{"no reply left for a validation, of several", []want{
			{node: "2", purpose: run, answer: `{"completed": true}`, output: "{\"completed\": true}\n"},
			{node: "2", purpose: run, answer: `{"comments":["no test"],"completed":false}`, output: "{\"comments\":[\"no test\"],\"completed\":false}\n"},
			{node: "2", purpose: run, answer: `{"completed": false, "comments": ["red"]}`, output: "{\"completed\": false, \"comments\": [\"red\"]}\n"},
			{node: "2", purpose: validate, exit: 1,
				err:    `replay: node 2 "Run the tests" has no reply left in /charts/answers.yaml: its 3 replies (line 3) are used; add one for this validation call`,
				output: "----- stderr -----\nreplay: node 2 \"Run the tests\" has no reply left in /charts/answers.yaml: its 3 replies (line 3) are used; add one for this validation call\n"},
		}},
		{"a node of the page the file does not list", []want{
			{node: "4", purpose: run, exit: 1, err: `replay: node 4 "Deploy" has no replies in /charts/answers.yaml; add a list under "4"`,
				output: "----- stderr -----\nreplay: node 4 \"Deploy\" has no replies in /charts/answers.yaml; add a list under \"4\"\n"},
		}},
		{"a node the plan does not know", []want{
			{node: "9", purpose: run, exit: 1, err: `replay: node 9 has no replies in /charts/answers.yaml; add a list under "9"`,
				output: "----- stderr -----\nreplay: node 9 has no replies in /charts/answers.yaml; add a list under \"9\"\n"},
		}},
		{"a call for no node", []want{
			{node: "", purpose: run, exit: 1, err: "replay: a call for no node: the replay agent answers the calls of `dtree run CHART --answers FILE`",
				output: "----- stderr -----\nreplay: a call for no node: the replay agent answers the calls of `dtree run CHART --answers FILE`\n"},
		}},
		{"error: fails the call with its text; raw: is printed exactly", []want{
			{node: "5", purpose: run, exit: 1, err: "rate limited", output: "----- stderr -----\nrate limited\n"},
			{node: "5", purpose: run, answer: "Yes", output: "Yes\n"},
			{node: "5", purpose: validate, answer: "error: x", output: "error: x\n"},
			{node: "5", purpose: run, err: "replay gave an empty answer: the reply to node 5 at /charts/answers.yaml:10 has no text", output: "\n"},
			{node: "5", purpose: validate, answer: `{"fully_completed": true}`, output: "{\"fully_completed\": true}\n"},
		}},
		{"a decision's raw, label and empty error replies", []want{
			{node: "6", purpose: run, answer: "Yes", output: "Yes\n"},
			{node: "6", purpose: run, answer: `{"answer":"Maybe later"}`, output: "{\"answer\":\"Maybe later\"}\n"},
			{node: "6", purpose: run, err: "replay gave an empty answer: the reply to node 6 at /charts/answers.yaml:14 has no text", output: "\n"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewRunner(testPlan())
			for i, w := range tt.calls {
				var out bytes.Buffer
				res, err := r.Call(t.Context(), agent.Call{Def: replayDef(), Prompt: "the prompt",
					Request: agent.Request{Node: w.node, Purpose: w.purpose, Attempt: 1}, Output: &out})
				if w.err != "" {
					var ce *CallError
					require.ErrorAs(t, err, &ce, "call %d", i+1)
					assert.Equal(t, w.err, err.Error(), "call %d", i+1)
					assert.Equal(t, w.node, ce.Node)
				} else {
					require.NoError(t, err, "call %d", i+1)
					assert.Equal(t, w.answer, res.Answer, "call %d", i+1)
				}
				assert.Equal(t, w.exit, res.ExitCode, "call %d", i+1)
				assert.Equal(t, w.output, out.String(), "call %d: what long.log gets", i+1)
				assert.Equal(t, []string{"dtree (replay)", "--answers", "/charts/answers.yaml"}, res.Argv)
				if w.exit != 0 {
					assert.Equal(t, w.err+"\n", res.StderrTail)
					assert.Equal(t, int64(len(w.err)+1), res.StderrBytes)
					assert.Zero(t, res.StdoutBytes)
				} else {
					assert.Equal(t, w.output, res.Stdout)
					assert.Equal(t, int64(len(w.output)), res.StdoutBytes)
					assert.Zero(t, res.StderrBytes)
				}
			}
		})
	}
}

func replayDef() agent.Definition {
	def, err := agent.NewRegistry(nil).Lookup("replay")
	if err != nil {
		panic(err)
	}
	return def
}

// A call after the run was interrupted is not answered, and takes no
// reply.
func TestRunnerCallInterrupted(t *testing.T) {
	t.Parallel()
	r := NewRunner(testPlan())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := r.Call(ctx, agent.Call{Def: replayDef(), Request: agent.Request{Node: "3", Purpose: agent.PurposeRun}})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "replay stopped: dtree was interrupted", err.Error())
	assert.Equal(t, -1, res.ExitCode)
	res, err = r.Call(t.Context(), agent.Call{Def: replayDef(), Request: agent.Request{Node: "3", Purpose: agent.PurposeRun}})
	require.NoError(t, err)
	assert.Equal(t, `{"answer":"No"}`, res.Answer)
}

// A reply larger than the stdout dtree keeps is cut as a real agent's
// output is: long.log gets all of it, the result only its bounded tail.
func TestRunnerHugeReply(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 3*agent.MaxStdoutTail) + ` {"completed": true}`
	r := NewRunner(&Plan{Answers: "a.yaml", Nodes: map[string]*Node{"1": {Text: "Big", Replies: []Reply{{"raw: " + big, 1}}, Line: 1}}})
	var out bytes.Buffer
	res, err := r.Call(t.Context(), agent.Call{Def: replayDef(), Request: agent.Request{Node: "1", Purpose: agent.PurposeRun}, Output: &out})
	require.NoError(t, err)
	assert.Equal(t, len(big)+1, out.Len())
	assert.Len(t, res.Stdout, agent.MaxStdoutTail)
	assert.True(t, res.Truncated)
	assert.Equal(t, int64(len(big)+1), res.StdoutBytes)
	assert.True(t, strings.HasSuffix(res.Answer, `{"completed": true}`))
}

// Calls from several goroutines each take a reply of their own: no reply
// is given twice, none is skipped.
func TestRunnerConcurrentCalls(t *testing.T) {
	t.Parallel()
	const n = 200
	replies := make([]Reply, n)
	for i := range replies {
		replies[i] = Reply{Text: fmt.Sprintf(`{"completed": true, "comments": ["%d"]}`, i), Line: 1}
	}
	r := NewRunner(&Plan{Answers: "a.yaml", Nodes: map[string]*Node{"1": {Text: "Work", Replies: replies, Line: 1}}})
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	for range n + 10 {
		wg.Go(func() {
			res, err := r.Call(t.Context(), agent.Call{Def: replayDef(), Request: agent.Request{Node: "1", Purpose: agent.PurposeRun}})
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			assert.False(t, seen[res.Answer], "given twice: %s", res.Answer)
			seen[res.Answer] = true
		})
	}
	wg.Wait()
	assert.Len(t, seen, n)
	assert.Empty(t, r.Unused())
}

// Unused names the nodes whose replies the calls left, in the file's
// order.
func TestRunnerUnused(t *testing.T) {
	t.Parallel()
	r := NewRunner(&Plan{Answers: "a.yaml", Nodes: map[string]*Node{
		"2": {Text: "Build", Replies: []Reply{{"ok", 4}, {"ok", 4}}, Line: 4},
		"3": {Text: "Test", Replies: []Reply{{"ok", 2}, {"ok", 2}, {"ok", 2}}, Line: 2},
		"5": {Text: "Ship", Replies: []Reply{{"ok", 7}}, Line: 7},
		"6": {Text: "Not in the file"},
	}})
	assert.Equal(t, []Leftover{{"3", "Test", 2, 3}, {"2", "Build", 4, 2}, {"5", "Ship", 7, 1}}, r.Unused(), "no call made: everything is left")
	for _, id := range []string{"2", "2", "3", "5", "6"} {
		_, _ = r.Call(t.Context(), agent.Call{Def: replayDef(), Request: agent.Request{Node: id, Purpose: agent.PurposeRun}})
	}
	assert.Equal(t, []Leftover{{"3", "Test", 2, 2}}, r.Unused())
}

// The recording of a run that stopped early ends where the run did: a
// call past it fails with no retry, naming the run to resume; the same
// call in a recording of a finished run, or a file written by hand, is an
// ordinary failed call that a retry may get a reply for.
func TestRunnerRecordingEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		recorded  *Recording
		permanent bool
	}{
		{"interrupted run", &Recording{RunID: "20261125T080000Z-abc123", Status: "interrupted"}, true},
		{"failed run", &Recording{RunID: "20261125T080000Z-abc123", Status: "failed"}, true},
		{"finished run", &Recording{RunID: "20261125T080000Z-abc123", Status: "succeeded"}, false},
		{"by hand", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := testPlan()
			p.Recorded = tt.recorded
			r := NewRunner(p)
			call := agent.Call{Def: replayDef(), Request: agent.Request{Node: "3", Purpose: agent.PurposeRun}}
			_, err := r.Call(t.Context(), call)
			require.NoError(t, err)
			_, err = r.Call(t.Context(), call)
			require.Error(t, err)
			kind, hint := agent.Permanent(err)
			if !tt.permanent {
				assert.Empty(t, kind)
				return
			}
			assert.Equal(t, agent.PermanentRecordingEnds, kind)
			assert.Contains(t, err.Error(), `replay has no reply left for node 3 "Passed?" in /charts/answers.yaml: the run it was recorded from, 20261125T080000Z-abc123, was `+tt.recorded.Status+" before this run call was answered")
			assert.Equal(t, "go on with the agents from where run 20261125T080000Z-abc123 stopped: dtree resume 20261125T080000Z-abc123; or add replies for node 3 to /charts/answers.yaml to replay further", hint)
		})
	}
}

// dtree's own header, and only it, marks a file as a recording.
func TestParseRecorded(t *testing.T) {
	t.Parallel()
	a, err := Parse("a.yaml", []byte("# Answers recorded by dtree run 20261125T080000Z-abc123 (interrupted) of chart.csv.\n\"3\": [Yes]\n"))
	require.NoError(t, err)
	assert.Equal(t, &Recording{RunID: "20261125T080000Z-abc123", Status: "interrupted"}, a.Recorded)
	a, err = Parse("a.yaml", []byte("\"3\": [Yes]\n# Answers recorded by dtree run x (interrupted) of chart.csv.\n"))
	require.NoError(t, err)
	assert.Nil(t, a.Recorded)
}
