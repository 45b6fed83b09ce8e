package response_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/response"
)

var yesNo = []string{"Yes", "No"}

// labelCases are MatchLabel's examples; want "" means no match.
var labelCases = []struct {
	name   string
	answer string
	labels []string
	want   string
}{
	{"exact", "Yes", yesNo, "Yes"},
	{"lower case", "yes", yesNo, "Yes"},
	{"upper case and spaces", "  NO \n", yesNo, "No"},
	{"quoted with a period", `"Yes."`, yesNo, "Yes"},
	{"single quotes", "'no'", yesNo, "No"},
	{"curly quotes", "“Yes”", yesNo, "Yes"},
	{"curly single quotes", "‘No’", yesNo, "No"},
	{"backticks", "`No`", yesNo, "No"},
	{"bold", "**Yes**", yesNo, "Yes"},
	{"italic", "_No_", yesNo, "No"},
	{"parentheses", "(Yes)", yesNo, "Yes"},
	{"brackets", "[No]", yesNo, "No"},
	{"exclamation", "No!", yesNo, "No"},
	{"period", "No.", yesNo, "No"},
	{"dash and reason", "Yes — because the tests pass", yesNo, "Yes"},
	{"em dash without space", "Yes—because", yesNo, "Yes"},
	{"comma and reason", "No, the file is missing", yesNo, "No"},
	{"colon and reason", "yes: all good", yesNo, "Yes"},
	{"quoted then reason", `"Yes" because it works`, yesNo, "Yes"},
	{"longer word", "Yesterday", yesNo, ""},
	{"longer word no", "Nope", yesNo, ""},
	{"other word", "Maybe", yesNo, ""},
	{"does not start with a label", "I think Yes", yesNo, ""},
	{"empty", "", yesNo, ""},
	{"only punctuation", `"..."`, yesNo, ""},
	{"no labels", "Yes", nil, ""},
	{"prefix label and longer label: longer", "Yes, but only on Linux", []string{"Yes", "Yes, but"}, "Yes, but"},
	{"prefix label and longer label: exact longer", "Yes, but", []string{"Yes", "Yes, but"}, "Yes, but"},
	{"prefix label and longer label: case", "yes, BUT.", []string{"Yes", "Yes, but"}, "Yes, but"},
	{"prefix label and longer label: shorter", "Yes, because", []string{"Yes", "Yes, but"}, "Yes"},
	{"prefix label and longer label: not a whole word", "Yes, butter", []string{"Yes", "Yes, but"}, "Yes"},
	{"prefix label and longer label: order does not matter", "Yes, but why", []string{"Yes, but", "Yes"}, "Yes, but"},
	{"numbered options: exact", "Option 10", []string{"Option 1", "Option 10"}, "Option 10"},
	{"numbered options: short", "option 1", []string{"Option 1", "Option 10"}, "Option 1"},
	{"numbered options: long with reason", "Option 10 because", []string{"Option 1", "Option 10"}, "Option 10"},
	{"numbered options: neither", "Option 100", []string{"Option 1", "Option 10"}, ""},
	{"collapsed whitespace in the answer", "needs   review", []string{"Needs review", "Done"}, "Needs review"},
	{"collapsed whitespace in the label", "Needs review", []string{"Needs  review", "Done"}, "Needs  review"},
	{"multi-word label with reason", "Needs review: missing tests", []string{"Needs review", "Done"}, "Needs review"},
	{"part of a multi-word label", "Needs", []string{"Needs review", "Done"}, ""},
	{"labels that clean alike: exact", "yes!", []string{"Yes", "yes!"}, "yes!"},
	{"labels that clean alike: ambiguous", "YES", []string{"Yes", "yes!"}, ""},
	{"labels that clean alike: ambiguous prefix", "YES, sure", []string{"Yes", "yes!"}, ""},
	{"the same label twice", "yes", []string{"Yes", "Yes"}, "Yes"},
	{"label with punctuation", "yes", []string{"Yes!", "No!"}, "Yes!"},
	{"label that cleans to nothing", "?", []string{"?", "No"}, "?"},
	{"label that cleans to nothing is only exact", "?!", []string{"?", "No"}, ""},
	{"non-ascii", "ÜBER ALLES", []string{"Über", "Unter"}, "Über"},
	{"non-ascii longer word", "Überall", []string{"Über", "Unter"}, ""},
}

func TestMatchLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range labelCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := response.MatchLabel(tc.answer, tc.labels)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want != "", ok)
		})
	}
}

// TestGateAnswer: a gate's answer is one of its labels or an answer word,
// whatever the labels are; the branch it takes and whether it approves.
func TestGateAnswer(t *testing.T) {
	t.Parallel()
	words := []string{"approved", "rejected"}
	yesNo := []string{"Yes", "No"}
	tests := []struct {
		name, answer string
		labels       []string
		label        string
		approve, ok  bool
	}{
		{"a label", "approved", words, "approved", true, true},
		{"a synonym", "no", words, "rejected", false, true},
		{"a verb, cased", "Approve", words, "approved", true, true},
		{"a label of Yes/No", "No", yesNo, "No", false, true},
		{"a word on Yes/No", "approved", yesNo, "Yes", true, true},
		{"a word on Yes/No, rejected", "reject", yesNo, "No", false, true},
		{"a label's answer with more words", "Yes, ship it", yesNo, "Yes", true, true},
		{"neither", "maybe", words, "", false, false},
		{"empty", "", words, "", false, false},
		{"no branch reads so", "no", []string{"approved", "maybe"}, "", false, false},
	}
	for _, tt := range tests {
		label, approve, ok := response.GateAnswer(tt.answer, tt.labels)
		assert.Equal(t, tt.label, label, tt.name)
		assert.Equal(t, tt.approve, approve, tt.name)
		assert.Equal(t, tt.ok, ok, tt.name)
	}
}

// TestGateLabel: an approval gate's answer takes the branch labelled
// approved or rejected, or their synonyms, matched as a decision's labels
// are; CheckGateLabels says what a gate's branches lack.
func TestGateLabel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		labels           []string
		approved, reject string
		check            string
	}{
		{"the words", []string{"approved", "rejected"}, "approved", "rejected", ""},
		{"yes and no", []string{"Yes", "No"}, "Yes", "No", ""},
		{"cased and punctuated", []string{"Approve!", " Rejected."}, "Approve!", " Rejected.", ""},
		{"another label", []string{"approved", "maybe"}, "approved", "", `branch label "maybe" is neither approved nor rejected`},
		{"other labels", []string{"approved", "maybe", "later"}, "approved", "", `branch labels "maybe", "later" are neither approved nor rejected`},
		{"one unlabelled line", []string{""}, "", "", "a line out of it has no label: a gate's lines are labelled approved and rejected"},
		{"two unlabelled lines", []string{"", " "}, "", "", "2 lines out of it have no label: a gate's lines are labelled approved and rejected"},
		{"one branch", []string{"approved"}, "approved", "", "it needs one branch labelled approved and one labelled rejected"},
		{"two approved", []string{"approved", "yes"}, "", "", "it needs one branch labelled approved and one labelled rejected"},
	}
	for _, tt := range tests {
		got, ok := response.GateLabel(tt.labels, true)
		assert.Equal(t, tt.approved, got, tt.name)
		assert.Equal(t, tt.approved != "", ok, tt.name)
		got, _ = response.GateLabel(tt.labels, false)
		assert.Equal(t, tt.reject, got, tt.name)
		assert.Equal(t, tt.check, response.CheckGateLabels(tt.labels), tt.name)
	}
}
