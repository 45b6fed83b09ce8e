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

// TestDrawnStep: the shapes a kind is drawn with mark it, whatever the
// importer's spelling (Lucid's CSV name and JSON class, draw.io's and
// Mermaid's name); other shapes mark none.
func TestDrawnStep(t *testing.T) {
	t.Parallel()
	for shape, want := range map[string]Step{
		"Manual operation": StepApproval, "ManualOperationBlockNew": StepApproval, "manualoperationblock": StepApproval,
		"Manual_Operation": StepApproval, "Process": "", "Decision": "", "": "", "Manual input": "",
	} {
		assert.Equal(t, want, DrawnStep(shape), shape)
	}
	for _, s := range Steps() {
		for _, d := range s.Info().Drawn {
			assert.Equal(t, s, DrawnStep(d), "%s: every shape it lists marks it", s)
			assert.Equal(t, FoldName(d), d, "%s: %q is listed folded", s, d)
		}
	}
}
