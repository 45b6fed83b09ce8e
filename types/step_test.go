package types

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStepInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		role  string
		step  Step
		agent bool
		shape string
	}{
		{RoleTerminator, StepTerminator, false, ""},
		{RoleProcess, StepProcess, true, ""},
		{RoleDecision, StepDecision, true, ""},
		{"", StepCommand, false, ShapeHexagon},
		{"", StepApproval, false, ShapeTrapezoid},
	}
	for _, tt := range tests {
		if tt.role != "" {
			assert.Equal(t, tt.step, RoleStep(tt.role), tt.role)
		}
		assert.Equal(t, tt.agent, tt.step.Agent(), "%s runs an agent", tt.step)
		assert.Equal(t, tt.shape, tt.step.Info().Shape, "%s's shape", tt.step)
	}
	assert.False(t, Step("").Agent(), "a node of a document never loaded as a chart calls no agent")
}
