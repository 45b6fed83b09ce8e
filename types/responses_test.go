package types

import (
	"encoding/json"
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
