package export

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/types"
)

// TestEveryStepShapeIsDrawn: a step kind's shape (types.StepInfo.Shape)
// has its form in each picture format.
func TestEveryStepShapeIsDrawn(t *testing.T) {
	t.Parallel()
	for _, s := range types.Steps() {
		shape := s.Info().Shape
		if shape == "" {
			continue
		}
		row, ok := stepShapes[shape]
		if assert.True(t, ok, "step kind %s: shape %s in stepShapes", s, shape) {
			assert.NotEmpty(t, row.mermaid[0], "%s: Mermaid", shape)
			assert.NotEmpty(t, row.dot, "%s: DOT", shape)
			assert.NotNil(t, row.svg, "%s: SVG", shape)
		}
	}
}
