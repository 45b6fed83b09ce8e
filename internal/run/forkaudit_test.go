package run

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/workspace"
)

// A branch's id holds its line's label, which a chart's author wrote:
// the conflict a join names it in is one line, whatever the label holds,
// and bounded.
func TestConflictListShowsHostileBranchLabelsInert(t *testing.T) {
	big := strings.Repeat("L", 10<<10)
	tests := []struct {
		name     string
		branches []string
		want     string
	}{
		{"plain as they are", []string{"plan/a", "plan/Unit tests"}, `"README" (plan/a, plan/Unit tests)`},
		{"a line break", []string{"plan/x\n::error::pwned", "plan/b"}, `"README" ("plan/x\n::error::pwned", plan/b)`},
		{"a terminal escape", []string{"plan/\x1b[31mred", "plan/b"}, `"README" ("plan/\x1b[31mred", plan/b)`},
		{"a comma and parentheses", []string{"plan/a, plan/c)", "plan/b"}, `"README" ("plan/a, plan/c)", plan/b)`},
		{"ten kilobytes", []string{"plan/" + big, "plan/b"}, `"README" ("plan/` + strings.Repeat("L", 95) + `…", plan/b)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := conflictList([]workspace.Conflict{{Path: "README", Branches: tt.branches}})
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "\n")
			assert.NotContains(t, got, "\x1b")
			assert.Less(t, len(got), 300)
		})
	}
}
