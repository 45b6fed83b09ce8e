package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/run"
)

// A dry run prints a fork's branches one after another in the fork's
// order, each step naming its branch and numbered as printed, whichever
// branch the walker ran first; a branch's call, made while another takes
// its turn, is printed with its own branch's step.
func TestDryRunBranchesInOrder(t *testing.T) {
	t.Parallel()
	c, err := chart.Load("../../testdata/charts/fork/fork.yaml", nil, chart.Options{})
	require.NoError(t, err)
	require.Empty(t, c.Errors)
	node := func(id string) *run.NodeResult {
		i, _ := c.Graph.Index(id)
		return &run.NodeResult{ID: id, Status: run.StatusSucceeded, Next: map[string]string{
			"plan": "review", "tests": "pass", "pass": "review", "docs": "review", "lint": "review"}[id], Text: c.Nodes[i].Text}
	}
	var b bytes.Buffer
	d := &dryRun{w: &b, c: c, answers: map[string][]string{}, asked: map[string]int{}}
	step := func(id string) {
		i, _ := c.Graph.Index(id)
		d.NodeStarted(&c.Nodes[i], 1)
	}
	call := func(id string) {
		_, err := d.Call(context.Background(), agent.Call{Def: agent.Shell, Prompt: "echo " + id,
			Request: agent.Request{Node: id, Purpose: agent.PurposeCommand}})
		require.NoError(t, err)
	}
	step("plan")
	call("plan")
	d.NodeFinished(node("plan"))
	for _, name := range []string{"tests", "docs", "lint"} {
		d.BranchStarted("plan/"+name, "plan", name)
	}
	// The walker's turns: lint first, docs' call while tests runs.
	d.OnBranch("plan/lint")
	step("lint")
	call("lint")
	d.NodeFinished(node("lint"))
	d.BranchEnded("plan/lint", run.StatusSucceeded)
	d.OnBranch("plan/docs")
	step("docs")
	d.OnBranch("plan/tests")
	step("tests")
	call("docs")
	call("tests")
	d.NodeFinished(node("tests"))
	d.OnBranch("plan/docs")
	d.NodeFinished(node("docs"))
	d.BranchEnded("plan/docs", run.StatusSucceeded)
	d.OnBranch("plan/tests")
	step("pass")
	d.NodeFinished(node("pass"))
	d.BranchEnded("plan/tests", run.StatusSucceeded)
	d.OnBranch("")
	step("review")
	assert.Equal(t, `step 1 · node plan "Read the issue and list what the change needs." · process · 
  command (not run): /bin/sh -c 'echo plan'
  next: branches tests, docs, lint, side by side (printed one after another below), then the join review
step 2 · node tests "Write the missing tests for the change." · process ·  · branch plan/tests
  command (not run): /bin/sh -c 'echo tests'
  next: pass "Do the new tests pass?"
step 3 · node pass "Do the new tests pass?" · decision ·  · branch plan/tests
  next: review "Review the combined change and write the summary."
step 4 · node docs "Update the docs for the change." · process ·  · branch plan/docs
  command (not run): /bin/sh -c 'echo docs'
  next: review "Review the combined change and write the summary."
step 5 · node lint "Fix the lint warnings in the changed files." · process ·  · branch plan/lint
  command (not run): /bin/sh -c 'echo lint'
  next: review "Review the combined change and write the summary."
step 6 · node review "Review the combined change and write the summary." · process · 
`, b.String())
}
