package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The walk's soft memory limit: walkHeap for a chart that holds little,
// put back when the walk ends; GOGC or GOMEMLIMIT in the environment win.
func TestLimitWalkMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	restore := limitWalkMemory(getenv)
	assert.Equal(t, int64(walkHeap), debug.SetMemoryLimit(-1), "a small chart: walkHeap")
	restore()
	assert.Equal(t, before, debug.SetMemoryLimit(-1), "put back")

	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{k: "100"}
		restore = limitWalkMemory(getenv)
		assert.Equal(t, before, debug.SetMemoryLimit(-1), "%s set: left alone", k)
		restore()
	}
}
