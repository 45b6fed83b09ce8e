package agent

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A long stream-json stream is summed in constant memory: each message's
// usage, repeated on each of its events, counts once, however many
// messages came before (the 1 GiB stream of readme/performance.md).
func TestStreamJSONSumsLongStreams(t *testing.T) {
	t.Parallel()
	d := &streamJSONDecoder{}
	const n = 100_000
	for i := range n {
		for range 3 { // one event a content block, each with the message's usage
			d.line(fmt.Appendf(nil, `{"type":"assistant","message":{"id":"m%d","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":2}}}`, i))
		}
	}
	// A message seen again while it is among the latest still counts once.
	d.line([]byte(fmt.Sprintf(`{"type":"assistant","message":{"id":"m%d","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3}}}`, n-2)))
	assert.Equal(t, int64(15*n), *d.total.InputTokens)
	assert.Equal(t, int64(2*n+1), *d.total.OutputTokens)
	assert.Equal(t, n, d.turns)
	assert.Equal(t, n, d.count)
}
