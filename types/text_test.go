package types_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/types"
)

func TestPlural(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		what string
		want string
	}{
		{1, "node", "1 node"},
		{0, "step", "0 steps"},
		{3, "retry", "3 retries"},
		{1, "retry", "1 retry"},
		{2, "reply", "2 replies"},
		{2, "key", "2 keys"},
		{2, "day", "2 days"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, types.Plural(tt.n, tt.what))
	}
}
