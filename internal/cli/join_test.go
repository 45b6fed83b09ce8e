package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinedEvents is the log of a run of the whole fork: the first run's
// steps before its branch, then each branch's events from its
// branch_start to its branch_end (no run_end), their checkpoints the
// join's own commits.
func TestJoinedEvents(t *testing.T) {
	const (
		forkCP = "d13a1fb6a508e7e78c82a1e97ab9dc1533230ad9"
		tipA   = "c3daf77c9027e4e51056c12f1ffac4b84127483b"
		tipB   = "67395dd954f70e60b651c3ddaf6f2fd9b295727e"
		base   = "1111111111111111111111111111111111111111"
		newA   = "2222222222222222222222222222222222222222"
		newB   = "3333333333333333333333333333333333333333"
	)
	runDir := func(name, id, tip string) branchRun {
		dir := t.TempDir()
		ev := func(rest string) string { return `{"time":"2026-11-27T09:10:27.8Z",` + rest + "}\n" }
		log := ev(`"event":"run_start","chart":"Fork","page":"1","run_id":"r-`+name+`","source":"fork.yaml"`) +
			ev(`"event":"node_start","cli":"sh","node":"plan","role":"process","run_id":"r-`+name+`","visit":1`) +
			ev(`"event":"node_end","node":"plan","next":"`+name+`","run_id":"r-`+name+`","status":"succeeded","visit":1`) +
			ev(`"event":"branch_start","branch":"`+id+`","checkpoint":"`+forkCP+`","first":"`+name+`","fork":"plan","name":"`+name+`","run_id":"r-`+name+`"`) +
			ev(`"event":"node_start","branch":"`+id+`","cli":"sh","node":"`+name+`","role":"process","run_id":"r-`+name+`","visit":1`) +
			ev(`"event":"node_end","branch":"`+id+`","node":"`+name+`","next":"review","run_id":"r-`+name+`","status":"succeeded","visit":1`) +
			ev(`"event":"branch_end","branch":"`+id+`","checkpoint":"`+tip+`","path":["`+name+`"],"run_id":"r-`+name+`","status":"succeeded"`) +
			ev(`"event":"run_end","run_id":"r-`+name+`","status":"succeeded"`)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(log), 0o644))
		return branchRun{dir: dir, fork: "plan", name: name}
	}
	a, b := runDir("a", "plan/a", tipA), runDir("b", "plan/b", tipB)
	path, err := joinedEvents([]branchRun{a, b}, base, []string{newA, newB})
	require.NoError(t, err)
	defer os.Remove(path)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	got := string(raw)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.Len(t, lines, 11, got) // 3 of the trunk, 4 a branch
	assert.Contains(t, lines[0], `"run_id":"r-a"`)
	assert.Equal(t, 1, strings.Count(got, `"event":"run_start"`))
	assert.Equal(t, 1, strings.Count(got, `"node":"plan"`+`,"next"`))
	assert.NotContains(t, got, `"event":"run_end"`)
	assert.NotContains(t, got, forkCP)
	assert.Contains(t, lines[3], `"checkpoint":"`+base+`"`)
	assert.Contains(t, lines[6], `"checkpoint":"`+newA+`"`)
	assert.Contains(t, lines[7], `"branch":"plan/b","checkpoint":"`+base+`"`)
	assert.Contains(t, lines[10], `"checkpoint":"`+newB+`"`)
}
