package agent

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/types"
)

// A figure a CLI reports that is negative, not finite, not a number or
// too large is unknown, with a warning, never a credit (SPEC §12); a sum
// of figures saturates rather than wraps.
func TestCheckUsageFigures(t *testing.T) {
	t.Parallel()
	def := Definition{Name: "j", Output: OutputJSON, AnswerPath: "a",
		InputTokensPath: "in+cache", OutputTokensPath: "out", CostPath: "cost", DurationPath: "ms"}
	for _, tc := range []struct {
		name, usage string
		in, out, ms *int64
		cost        *float64
		warnings    []string
	}{
		{name: "good figures", usage: `"in":1000,"cache":200,"out":50,"cost":0.25,"ms":900`,
			in: fig[int64](1200), out: fig[int64](50), cost: fig(0.25), ms: fig[int64](900)},
		{name: "a negative cost is no credit", usage: `"in":10,"out":5,"cost":-1000`,
			in: fig[int64](10), out: fig[int64](5), warnings: []string{"cost_usd is negative"}},
		{name: "MaxInt64 twice does not wrap", usage: `"in":9223372036854775807,"cache":9223372036854775807,"out":9223372036854775807`,
			warnings: []string{"input_tokens is too large (9223372036854775807, over 1,000,000,000,000)", "output_tokens is too large (9223372036854775807, over 1,000,000,000,000)"}},
		{name: "beyond int64", usage: `"in":1e400,"out":99999999999999999999,"cost":1e400`,
			warnings: []string{"input_tokens is not a number dtree can read", "output_tokens is not a number dtree can read", "cost_usd is not finite"}},
		{name: "strings", usage: `"in":"12","out":{"n":3},"cost":"0.5","ms":"9"`,
			warnings: []string{"input_tokens is not a number dtree can read", "output_tokens is not a number dtree can read", "duration_ms is not a number dtree can read", "cost_usd is not a number dtree can read"}},
		{name: "one bad part makes the sum unknown", usage: `"in":100,"cache":-5,"out":-1`,
			warnings: []string{"input_tokens is negative", "output_tokens is negative"}},
		{name: "too large a cost", usage: `"cost":2e6`, warnings: []string{"cost_usd is too large (2e+06, over 1000000)"}},
		{name: "null is unknown without a word", usage: `"in":null,"cost":null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := parseEnvelope(def, `{"a":"x",`+tc.usage+`}`, 0, false)
			require.NoError(t, err)
			u, warnings := CheckUsage(e.usage)
			assert.Equal(t, tc.in, u.InputTokens, "input")
			assert.Equal(t, tc.out, u.OutputTokens, "output")
			assert.Equal(t, tc.cost, u.CostUSD, "cost")
			assert.Equal(t, tc.ms, u.DurationMS, "duration")
			assert.Equal(t, tc.warnings, warnings)
			again, none := CheckUsage(u)
			assert.Equal(t, u, again, "checking a checked usage changes nothing")
			assert.Empty(t, none)
		})
	}
}

// The events decoders read figures the same way: number takes NaN, 1e400
// and strings as figures that are not numbers.
func TestNumberFigures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		json   string
		count  *int64
		warned bool
	}{
		{`12.6`, fig[int64](13), false},
		{`null`, nil, false},
		{`-1000`, nil, true},
		{`1e400`, nil, true},
		{`"NaN"`, nil, true},
		{`"12"`, nil, true},
		{`9223372036854775807`, nil, true},
	} {
		var n number
		require.NoError(t, json.Unmarshal([]byte(tc.json), &n))
		c := n.count()
		u, warnings := CheckUsage(types.Usage{InputTokens: c})
		assert.Equal(t, tc.count, u.InputTokens, tc.json)
		assert.Equal(t, tc.warned, len(warnings) == 1, "%s: %v", tc.json, warnings)
	}
	assert.Equal(t, fig[int64](math.MaxInt64), add(fig[int64](math.MaxInt64), fig[int64](math.MaxInt64)), "saturates")
	assert.Equal(t, fig(badCount), add(fig[int64](5), fig(badCount)), "a bad part stays bad")
	assert.Equal(t, fig(negCount), add(fig[int64](100), countOfInt(-5)), "a negative part is no credit")
	u, warnings := CheckUsage(types.Usage{InputTokens: fig[int64](-3), CostUSD: fig(-0.5)})
	assert.Nil(t, u.InputTokens)
	assert.Nil(t, u.CostUSD)
	assert.Equal(t, []string{"input_tokens is negative (-3)", "cost_usd is negative (-0.5)"}, warnings, "from a runner that is no decoder")
	for _, c := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		u, warnings := CheckUsage(types.Usage{CostUSD: fig(c)})
		assert.Nil(t, u.CostUSD, "%v", c)
		assert.Len(t, warnings, 1, "%v", c)
	}
}

func fig[T any](v T) *T { return &v }
