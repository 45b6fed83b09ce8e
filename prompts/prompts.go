// Package prompts holds the texts dtree adds to node prompts: the
// instructions that ask an agent for a JSON answer of the right shape, and
// the default validation prompt. They are embedded, so the binary carries
// them; see Build* for how they are put together.
package prompts

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

var (
	//go:embed process.txt
	processInstruction string
	//go:embed decision.txt
	decisionInstruction string
	//go:embed validate.txt
	defaultValidate string
	//go:embed validation.txt
	validationInstruction string
	//go:embed budget.txt
	budgetLine string
	//go:embed conflicts.txt
	conflictsLine string
)

// ConflictsLine is the paragraph that asks a fork's join to resolve the
// conflicts the merge of its branches left (readme/parallel.md): files
// names each conflicted file and the branches that changed it. It leads
// the prompt, as the budget line does (WithBudget).
func ConflictsLine(files string) string {
	return strings.ReplaceAll(strings.TrimSpace(conflictsLine), "{{files}}", files)
}

// BudgetNearFraction is how much of a budget a run has spent when the
// prompts of its later calls start to say what is left
// (readme/run.md#budgets).
const BudgetNearFraction = 0.8

// BudgetLine is the line that tells an agent, once the run has spent
// BudgetNearFraction of a budget, how much is left: spent, limit and left
// as a user reads them ("$0.85", "$1", "$0.15"). It leads
// the prompt: see WithBudget.
func BudgetLine(spent, limit, left string) string {
	return strings.NewReplacer("{{spent}}", spent, "{{limit}}", limit, "{{left}}", left).Replace(strings.TrimSpace(budgetLine))
}

// WithBudget is a built prompt with the budget line before it; "" leaves
// it as it is.
func WithBudget(line, prompt string) string {
	if line == "" {
		return prompt
	}
	return line + "\n\n" + prompt
}

// DefaultValidatePrompt is what the validating agent is told when a node
// sets no validate_prompt.
func DefaultValidatePrompt() string { return strings.TrimSpace(defaultValidate) }

// Feedback is what one failed attempt taught: why it failed, for the next.
type Feedback struct {
	Attempt int
	Reason  string
}

// BuildProcess is a process node's prompt: its text, the run so far
// (RunSoFar; "" for none), one "Previous attempt feedback" section per
// failed attempt, then the response instruction.
func BuildProcess(text, runSoFar string, feedback []Feedback) string {
	return join(text, runSoFar, feedbackSections(feedback), strings.TrimSpace(processInstruction))
}

// BuildDecision is a decision node's prompt: its text, the run so far,
// feedback, and the list of allowed answers, which are the node's outgoing
// labels verbatim.
func BuildDecision(text, runSoFar string, labels []string, feedback []Feedback) string {
	var list strings.Builder
	quoted := make([]string, len(labels))
	for i, l := range labels {
		fmt.Fprintf(&list, "- %s\n", l)
		q, _ := json.Marshal(l)
		quoted[i] = string(q)
	}
	instr := strings.TrimSpace(decisionInstruction)
	instr = strings.ReplaceAll(instr, "{{choices_json}}", strings.Join(quoted, ", "))
	instr = strings.ReplaceAll(instr, "{{choices}}", strings.TrimRight(list.String(), "\n"))
	return join(text, runSoFar, feedbackSections(feedback), instr)
}

// BuildValidation is the validating agent's prompt: the validation prompt
// (the node's own, or the default), the original task, the run before it,
// the output to judge, and the response instruction.
func BuildValidation(validatePrompt, task, runSoFar, output string) string {
	if strings.TrimSpace(validatePrompt) == "" {
		validatePrompt = DefaultValidatePrompt()
	}
	return join(validatePrompt,
		"## The task\n\n"+strings.TrimSpace(task),
		runSoFar,
		"## What the agent reported\n\n"+strings.TrimSpace(output),
		strings.TrimSpace(validationInstruction))
}

func feedbackSections(feedback []Feedback) string {
	var b strings.Builder
	for i, f := range feedback {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "## Previous attempt feedback (attempt %d)\n\n%s", f.Attempt, strings.TrimSpace(f.Reason))
	}
	return b.String()
}

func join(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}
