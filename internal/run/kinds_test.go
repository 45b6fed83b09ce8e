package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
		{"the kind, not the settings", node(types.StepProcess, types.RoleProcess, "make"), processStep{}},
		{"never loaded: its role's", node("", types.RoleDecision, ""), decisionStep{}},
		{"never loaded, a terminator's role", node("", types.RoleTerminator, ""), processStep{}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, kindOf(tt.n), tt.name)
	}
}
