package response_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/response"
)

// Many escapes, or one unended OSC, in a large output: linear time.
func TestStripANSILinear(t *testing.T) {
	t.Parallel()
	for _, in := range []string{strings.Repeat("\x1b[0mx", 1<<20), "\x1b]" + strings.Repeat("x", 8<<20), strings.Repeat("\x1b]", 1<<20)} {
		start := time.Now()
		out := response.StripANSI(in)
		assert.NotContains(t, out, "\x1b")
		assert.Less(t, time.Since(start), 2*time.Second)
	}
}
