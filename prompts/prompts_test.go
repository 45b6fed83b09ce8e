package prompts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuildProcessKeepsTextAndAddsFeedbackInOrder(t *testing.T) {
	t.Parallel()
	text := "Fix $(touch X) `now`\nwith \"quotes\" and 'these' — ünïcode"
	got := BuildProcess(text, "", []Feedback{{Attempt: 1, Reason: "tests still fail"}, {Attempt: 2, Reason: "lint error in foo.go"}})
	assert.True(t, strings.HasPrefix(got, text+"\n\n"), "the node's text comes first, unchanged")
	first := strings.Index(got, "## Previous attempt feedback (attempt 1)\n\ntests still fail")
	second := strings.Index(got, "## Previous attempt feedback (attempt 2)\n\nlint error in foo.go")
	assert.Positive(t, first)
	assert.Greater(t, second, first)
	assert.Greater(t, strings.Index(got, `"completed"`), second, "the instruction comes last")
}

func TestBuildDecisionListsLabelsVerbatim(t *testing.T) {
	t.Parallel()
	got := BuildDecision("Do the tests pass?", "", []string{"Yes", "No, \"flaky\""}, nil)
	assert.Contains(t, got, "- Yes\n- No, \"flaky\"")
	assert.Contains(t, got, `"choices": ["Yes", "No, \"flaky\""]`)
	assert.NotContains(t, got, "{{")
	assert.NotContains(t, got, "Previous attempt")
}

func TestBuildValidationDefaultsAndSections(t *testing.T) {
	t.Parallel()
	got := BuildValidation("", "Write README", "", "I wrote it")
	assert.True(t, strings.HasPrefix(got, DefaultValidatePrompt()))
	assert.Contains(t, got, "## The task\n\nWrite README")
	assert.Contains(t, got, "## What the agent reported\n\nI wrote it")
	assert.Contains(t, got, `"fully_completed"`)
	own := BuildValidation("Check the README has an install section.", "Write README", "", "done")
	assert.True(t, strings.HasPrefix(own, "Check the README has an install section."))
	assert.NotContains(t, own, DefaultValidatePrompt())
}

func TestBudgetLine(t *testing.T) {
	line := BudgetLine("$0.85", "$1", "$0.15")
	assert.Equal(t, "Budget: this run has spent $0.85 of the $1 it may spend; $0.15 is left for this step and every step after it. Do what the task needs and no more.", line)
	assert.NotContains(t, line, "\n")
	assert.Equal(t, line+"\n\nDo it.", WithBudget(line, "Do it."))
	assert.Equal(t, "Do it.", WithBudget("", "Do it."))
}
