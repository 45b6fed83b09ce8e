package types

import "math"

// ProcessResponse is what a process node's agent answers
// (readme/run.md#3-each-node).
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

// UsageTotal is the usage of several agent calls: a node's visit, a run.
// Each figure of Usage sums the calls that reported it, and is null only
// when none did; Unreported counts, per figure, the calls that did not, so
// a figure is complete when its count is 0 and a lower bound otherwise.
// WallMS is dtree's own clock over the same calls, known for every one.
type UsageTotal struct {
	Usage
	Calls      int         `json:"calls"`
	WallMS     int64       `json:"wall_ms"`
	Unreported UsageCounts `json:"unreported"`
}

// UsageCounts counts calls per usage figure.
type UsageCounts struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	CostUSD      int `json:"cost_usd"`
	DurationMS   int `json:"duration_ms"`
}

// Add counts one call: what its CLI reported, and its wall time.
func (t *UsageTotal) Add(u Usage, wallMS int64) {
	t.Calls++
	t.WallMS += wallMS
	addCount(&t.InputTokens, u.InputTokens, &t.Unreported.InputTokens)
	addCount(&t.OutputTokens, u.OutputTokens, &t.Unreported.OutputTokens)
	addCount(&t.DurationMS, u.DurationMS, &t.Unreported.DurationMS)
	if u.CostUSD == nil {
		t.Unreported.CostUSD++
		return
	}
	sum := *u.CostUSD
	if t.CostUSD != nil {
		sum += *t.CostUSD
	}
	// Sums of dollar amounts keep nine decimals: 0.0042 + 0.0021 is
	// 0.0063, not 0.006299999999999999.
	sum = math.Round(sum*1e9) / 1e9
	t.CostUSD = &sum
}

func addCount(total **int64, v *int64, unreported *int) {
	if v == nil {
		*unreported++
		return
	}
	sum := *v
	if *total != nil {
		sum = SatAdd(sum, **total)
	}
	*total = &sum
}

// SatAdd is a + b, saturated at the int64 bounds rather than wrapped: a
// sum of figures is never less than its largest part (SPEC §12).
func SatAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// CommandResponse is what a command step reports: its exit status (-1
// when it was killed or never ran) and the end of its output, stdout then
// stderr (readme/context.md#command-steps).
type CommandResponse struct {
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
}
