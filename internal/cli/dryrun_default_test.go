package cli

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A dry run's default branch depends on the labels only, never on the
// order a file lists its lines in: a pass label first, else A to Z, a
// fail label last.
func TestDefaultLabel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		labels []string
		want   string
	}{
		{[]string{"No", "Yes"}, "Yes"},
		{[]string{"failed", "passed"}, "passed"},
		{[]string{"1", "0"}, "0"},
		{[]string{"staging", "Production"}, "Production"},
		{[]string{"No", "retry"}, "retry"},
		{[]string{"error", "No"}, "error"},
		{[]string{"b", "B", "a."}, "a."},
		{[]string{"Yes", "yes"}, "Yes"},
		{[]string{""}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		for _, order := range [][]string{tt.labels, reversed(tt.labels)} {
			assert.Equal(t, tt.want, defaultLabel(order), "%q", order)
		}
	}
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}
