package types

// ProcessResponse is what a process node's agent answers (SPEC §3 step 1).
type ProcessResponse struct {
	Completed  bool     `json:"completed"`
	SecsTaken  float64  `json:"secs_taken"`
	TokensUsed int64    `json:"tokens_used"`
	Comments   []string `json:"comments"`
}

// DecisionResponse is what a decision node's agent answers: the allowed
// choices it saw, the one it picked, and why.
type DecisionResponse struct {
	Choices []string `json:"choices"`
	Answer  string   `json:"answer"`
	Reasons []string `json:"reasons"`
}

// ValidationResponse is what the validating agent answers about a process
// node's output. Pass means FullyCompleted.
type ValidationResponse struct {
	FullyCompleted     bool     `json:"fully_completed"`
	PartiallyCompleted bool     `json:"partially_completed"`
	ShouldRetry        bool     `json:"should_retry"`
	Warnings           []string `json:"warnings"`
}

// Usage is what an agent CLI reported about one call. A nil pointer field
// means the CLI did not say (unknown, not zero).
type Usage struct {
	InputTokens  *int64   `json:"input_tokens"`
	OutputTokens *int64   `json:"output_tokens"`
	CostUSD      *float64 `json:"cost_usd"`
	DurationMS   *int64   `json:"duration_ms"`
}
