package run

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// TestEveryStepKindRuns: each step kind but the terminator has its run
// side in stepKinds, and kindOf finds it from the kind the load resolved,
// not from the node's command; a node no load resolved is its role's.
func TestEveryStepKindRuns(t *testing.T) {
	t.Parallel()
	for _, s := range types.Steps() {
		_, ok := stepKinds[s]
		assert.Equal(t, s != types.StepTerminator, ok, "step kind %s in stepKinds", s)
	}
	node := func(step types.Step, role, command string) *types.ProcessedNode {
		return &types.ProcessedNode{Node: &types.Node{ID: "n", Step: step}, Settings: &types.Settings{Role: role, Command: command}}
	}
	tests := []struct {
		name string
		n    *types.ProcessedNode
		want stepKind
	}{
		{"a command", node(types.StepCommand, types.RoleProcess, "make"), commandStep{}},
		{"a command decision", node(types.StepCommand, types.RoleDecision, "make"), commandStep{}},
		{"a decision", node(types.StepDecision, types.RoleDecision, ""), decisionStep{}},
		{"a process", node(types.StepProcess, types.RoleProcess, ""), processStep{}},
		{"a gate", node(types.StepApproval, types.RoleDecision, ""), approvalStep{}},
		{"the kind, not the settings", node(types.StepProcess, types.RoleProcess, "make"), processStep{}},
		{"never loaded: its role's", node("", types.RoleDecision, ""), decisionStep{}},
		{"never loaded, a terminator's role", node("", types.RoleTerminator, ""), processStep{}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, kindOf(tt.n), tt.name)
	}
}

// TestCarriedStep: a resume reads a carried visit's kind from its
// events, as its kind recorded it, and its response back as that kind
// gave it: a command's exit status, with no replies to replay; an
// agent's answer, whose replies replay.
func TestCarriedStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		role     string
		command  string
		response string
		want     types.Step
		resp     any
		replays  bool
	}{
		{"a command", types.RoleProcess, "make", `{"exit_code":0,"output":"ok"}`, types.StepCommand, types.CommandResponse{Output: "ok"}, false},
		{"a command decision", types.RoleDecision, "make test", `{"exit_code":2}`, types.StepCommand, types.CommandResponse{ExitCode: 2}, false},
		{"a decision", types.RoleDecision, "", `{"answer":"yes"}`, types.StepDecision, types.DecisionResponse{Answer: "yes"}, true},
		{"a process", types.RoleProcess, "", `{"completed":true}`, types.StepProcess, types.ProcessResponse{Completed: true}, true},
		{"no response", types.RoleProcess, "", `null`, types.StepProcess, nil, true},
		{"a gate", types.RoleDecision, "", `{"choices":[],"answer":"rejected","reasons":["no tests"]}`, types.StepApproval,
			types.DecisionResponse{Choices: []string{}, Answer: "rejected", Reasons: []string{"no tests"}}, true},
	}
	for _, tt := range tests {
		s := &CarriedStep{Start: runlog.NodeStart{Node: "n", Role: tt.role}, End: runlog.NodeEnd{Command: tt.command, Response: json.RawMessage(tt.response)}}
		got := carriedStep(s)
		assert.Equal(t, tt.want, got, tt.name)
		resp, replays := kindFor(got, tt.role).carried(tt.role, s.End.Response)
		assert.Equal(t, tt.resp, resp, tt.name)
		assert.Equal(t, tt.replays, replays, tt.name)
	}
}

// TestEndedRecordsTheKind: what a kind adds to its node_end is what a
// resume reads back as its record: a command step's command, nothing of
// an agent's step.
func TestEndedRecordsTheKind(t *testing.T) {
	t.Parallel()
	for _, k := range []stepKind{processStep{}, decisionStep{}, commandStep{}} {
		v := &step{command: "make"}
		var e runlog.NodeEnd
		k.ended(v, &e)
		_, command := k.(commandStep)
		assert.Equal(t, command, k.recorded(&CarriedStep{End: e}), "%T", k)
	}
}
