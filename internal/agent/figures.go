package agent

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dtree-dev/dtree/types"
)

// Figures from agents are checked (SPEC §12, readme/run.md#budgets): a
// token count, duration or cost a CLI printed that is negative, not
// finite, not a number or too large is unknown, with a warning, never a
// credit; sums saturate. The decoders read a figure with countOf and
// costOf, which mark one that is not a number (badCount, NaN) so that
// CheckUsage can say so; CheckUsage is the one place figures become the
// call's usage.

const (
	// maxCount bounds a call's tokens or milliseconds: a trillion is
	// beyond any model's context and any timeout.
	maxCount = 1_000_000_000_000
	// maxCost bounds a call's cost: a million dollars.
	maxCost = 1_000_000
)

// badCount and negCount mark a count the CLI printed that is not a
// number dtree can read (a string, 1e400, beyond int64) or is negative;
// negCost (-Inf) a negative cost, NaN one that is not a number. A sum
// with a marked part is marked: a negative part would be a credit.
const (
	badCount int64 = math.MinInt64
	negCount int64 = math.MinInt64 + 1
)

// countOf is the count f, rounded, or marked.
func countOf(f float64) *int64 {
	i := badCount
	switch {
	case math.IsNaN(f) || f <= math.MinInt64 || f >= math.MaxInt64:
	case f < 0:
		i = negCount
	default:
		i = int64(math.Round(f))
	}
	return &i
}

// countOfInt is the count i, or marked when negative.
func countOfInt(i int64) *int64 {
	if i < 0 {
		i = negCount
	}
	return &i
}

// costOf is the cost f, or marked when negative.
func costOf(f float64) *float64 {
	if f < 0 {
		f = math.Inf(-1)
	}
	return &f
}

// badCost is a cost the CLI printed that is not a number.
func badCost() *float64 { return costOf(math.NaN()) }

// add is a + b where nil is unknown: unknown only when both are. Counts
// saturate, and a count or cost that is not a number stays so.
func add[T int64 | float64](a, b *T) *T {
	switch {
	case b == nil:
		return a
	case a == nil:
		v := *b
		return &v
	}
	var v T
	switch x := any(*a).(type) {
	case int64:
		y := any(*b).(int64)
		if x <= negCount || y <= negCount {
			v = any(min(x, y)).(T)
		} else {
			v = any(types.SatAdd(x, y)).(T)
		}
	default:
		v = *a + *b
	}
	return &v
}

// CheckUsage is u with every figure that is not one made unknown, and a
// warning for each: what the CLI said and why it does not count.
func CheckUsage(u types.Usage) (types.Usage, []string) {
	var warnings []string
	count := func(name string, p **int64) {
		if *p == nil {
			return
		}
		v, why := **p, ""
		switch {
		case v == badCount:
			why = "is not a number dtree can read"
		case v == negCount:
			why = "is negative"
		case v < 0:
			why = fmt.Sprintf("is negative (%d)", v)
		case v > maxCount:
			why = fmt.Sprintf("is too large (%d, over %s)", v, types.Thousands(maxCount))
		default:
			return
		}
		*p = nil
		warnings = append(warnings, name+" "+why)
	}
	count("input_tokens", &u.InputTokens)
	count("output_tokens", &u.OutputTokens)
	count("duration_ms", &u.DurationMS)
	if p := u.CostUSD; p != nil {
		v, why := *p, ""
		switch {
		case math.IsNaN(v):
			why = "is not a number dtree can read"
		case math.IsInf(v, -1):
			why = "is negative"
		case math.IsInf(v, 0):
			why = "is not finite"
		case v < 0:
			why = "is negative (" + strconv.FormatFloat(v, 'g', -1, 64) + ")"
		case v > maxCost:
			why = "is too large (" + strconv.FormatFloat(v, 'g', -1, 64) + ", over 1000000)"
		}
		if why != "" {
			u.CostUSD = nil
			warnings = append(warnings, "cost_usd "+why)
		}
	}
	return u, warnings
}
