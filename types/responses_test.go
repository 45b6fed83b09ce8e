package types

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsageTotal(t *testing.T) {
	t.Parallel()
	in, cost1, cost2, ms := int64(10), 0.0042, 0.0021, int64(900)
	var total UsageTotal
	b, err := json.Marshal(total)
	require.NoError(t, err)
	assert.JSONEq(t, `{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null,"calls":0,"wall_ms":0,
		"unreported":{"input_tokens":0,"output_tokens":0,"cost_usd":0,"duration_ms":0}}`, string(b), "nothing yet: unknown, not zero")

	total.Add(Usage{InputTokens: &in, CostUSD: &cost1}, 5)
	total.Add(Usage{InputTokens: &in, CostUSD: &cost2, DurationMS: &ms}, 7)
	total.Add(Usage{}, 1)
	b, err = json.Marshal(total)
	require.NoError(t, err)
	assert.JSONEq(t, `{"input_tokens":20,"output_tokens":null,"cost_usd":0.0063,"duration_ms":900,"calls":3,"wall_ms":13,
		"unreported":{"input_tokens":1,"output_tokens":3,"cost_usd":1,"duration_ms":2}}`, string(b))

	// The figures are the total's own, not the calls'.
	assert.Equal(t, int64(10), in)
	copied := total
	total.Add(Usage{InputTokens: &in}, 0)
	assert.Equal(t, int64(20), *copied.InputTokens)
}

// Sums of figures saturate at the int64 bounds: MaxInt64 twice is
// MaxInt64, not -2 (SPEC §12).
func TestUsageTotalSaturates(t *testing.T) {
	t.Parallel()
	huge := int64(math.MaxInt64)
	var total UsageTotal
	total.Add(Usage{InputTokens: &huge}, 1)
	total.Add(Usage{InputTokens: &huge}, 1)
	require.NotNil(t, total.InputTokens)
	assert.Equal(t, huge, *total.InputTokens)
	for _, tc := range []struct{ a, b, want int64 }{
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MinInt64, -1, math.MinInt64},
		{math.MaxInt64, math.MinInt64, -1},
		{2, 3, 5},
	} {
		assert.Equal(t, tc.want, SatAdd(tc.a, tc.b), "%d + %d", tc.a, tc.b)
	}
}
