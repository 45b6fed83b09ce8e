package cli

import (
	"runtime"
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

	// A chart that takes more than half of walkHeap: twice what it takes.
	held := make([][]byte, 40)
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	restore = limitWalkMemory(getenv)
	got := debug.SetMemoryLimit(-1)
	restore()
	assert.GreaterOrEqual(t, got, int64(80<<20), "twice the 40 MiB held")
	assert.Less(t, got, int64(160<<20))
	runtime.KeepAlive(held)

	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		env = map[string]string{k: "100"}
		restore = limitWalkMemory(getenv)
		assert.Equal(t, before, debug.SetMemoryLimit(-1), "%s set: left alone", k)
		restore()
	}
}
