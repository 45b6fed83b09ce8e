package document_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/response"
)

// decisionYAML is a chart whose decision d branches on labels, each to a
// node of its own, after extra other branches (to make a large group).
func decisionYAML(labels []string, extra int) string {
	var b strings.Builder
	b.WriteString("nodes:\n  - id: d\n    text: Pick one\n    branches:\n")
	var all []string
	for i := range extra {
		all = append(all, fmt.Sprintf("other %d", i))
	}
	all = append(all, labels...)
	for i, l := range all {
		fmt.Fprintf(&b, "      %s: t%d\n", strconv.Quote(l), i)
	}
	for i := range all {
		fmt.Fprintf(&b, "  - {id: t%d, text: T%d}\n", i, i)
	}
	return b.String()
}

// Two branch labels that the answer matcher cannot tell apart are
// duplicate_branch_label, whatever the number of branches: with "No" and
// "no." every answer "no" was ambiguous and failed, while lint passed.
// Labels the matcher tells apart pass, and each is the match of its own
// cleaned text.
func TestBranchLabelsCleanedAsAnswersAre(t *testing.T) {
	t.Parallel()
	tests := []struct {
		labels []string
		dup    bool
	}{
		{[]string{"No", "no."}, true},
		{[]string{"Yes", "YES!"}, true},
		{[]string{"Yes", `"yes"`}, true},
		{[]string{"not  sure", "Not sure?"}, true},
		{[]string{"Yes", "yes"}, true},
		{[]string{"Yes", "No"}, false},
		{[]string{"Yes", "Yes, but"}, false},
		{[]string{"?", "!"}, false}, // clean to nothing: match only exactly
		{[]string{"1", "1.5"}, false},
	}
	for _, tt := range tests {
		for _, extra := range []int{0, 40} { // pairwise, and a map for large groups
			name := fmt.Sprintf("%q/%d", tt.labels, extra)
			doc, err := document.FromYAML(strings.NewReader(decisionYAML(tt.labels, extra)))
			require.NoError(t, err, name)
			var dups []string
			for _, d := range doc.Errors {
				if d.Class == "duplicate_branch_label" {
					dups = append(dups, d.Message)
				}
			}
			if !tt.dup {
				assert.Empty(t, dups, name)
				all := append([]string{}, tt.labels...)
				for i := range extra {
					all = append(all, fmt.Sprintf("other %d", i))
				}
				for _, l := range tt.labels {
					got, ok := response.MatchLabel(response.CleanLabel(l)+" ", all)
					if response.CleanLabel(l) == "" {
						got, ok = response.MatchLabel(l, all)
					}
					assert.True(t, ok, "%s: %q matches no label", name, l)
					assert.Equal(t, l, got, name)
				}
				continue
			}
			require.Len(t, dups, 1, name)
			assert.Contains(t, dups[0], strconv.Quote(tt.labels[1]), name)
			// and the matcher indeed cannot pick one
			_, ok := response.MatchLabel(response.CleanLabel(tt.labels[0])+" ", tt.labels)
			assert.False(t, ok, name)
		}
	}
}

// A message quotes the start of a long label, not all of it.
func TestLongLabelsQuotedShort(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("yes ", 200) // YAML keys stop at 1024 characters
	doc, err := document.FromYAML(strings.NewReader(decisionYAML([]string{long, strings.ToUpper(long) + "!"}, 0)))
	require.NoError(t, err)
	require.Len(t, doc.Errors, 1)
	assert.Equal(t, "duplicate_branch_label", doc.Errors[0].Class, doc.Errors[0].Message[:min(300, len(doc.Errors[0].Message))])
	assert.Less(t, len(doc.Errors[0].Message), 500)
}
