package response

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MatchLabel maps a decision's answer to one of the node's outgoing edge
// labels (readme/run.md#3-each-node), and returns the label as given.
//
//  1. An answer equal to a label is that label.
//  2. Otherwise both are cleaned: trimmed of whitespace, quotes
//     (' " ` “ ” ‘ ’ « » „) and surrounding punctuation (. , ! ? : ; ( ) [ ]
//     * _), internal whitespace collapsed to one space, and lower-cased. A
//     label whose cleaned text equals the answer's matches, so `"Yes."`,
//     `**yes**` and ` YES ` are all Yes.
//  3. Otherwise a label matches when the cleaned answer starts with it as a
//     whole word: what follows is the end, a space or anything that is not
//     a letter, digit or mark. "Yes — because the tests pass" and "No, the
//     file is missing" match; "Yesterday" does not match Yes.
//
// Steps 2 and 3 are one rule, since equal text is a prefix followed by the
// end. When several labels match, the answer starts with each of them, so
// they are prefixes of one another, and the longest wins: with labels "Yes"
// and "Yes, but", the answer "Yes, but only on Linux" is "Yes, but" — the
// agent wrote all of that label, and the shorter one is only the start of
// it — while "Yes, because…" is "Yes". Labels that clean to the same text
// ("Yes" and "yes!") and are both the longest match make the answer
// ambiguous: no match, and the critique lists the allowed answers. A label
// that cleans to nothing matches only exactly.
func MatchLabel(answer string, labels []string) (label string, ok bool) {
	for _, l := range labels {
		if l == answer {
			return l, true
		}
	}
	a := CleanLabel(answer)
	if a == "" {
		return "", false
	}
	best, bestLen, ambiguous := "", 0, false
	for _, l := range labels {
		c := CleanLabel(l)
		if c == "" || !strings.HasPrefix(a, c) || !wordEnd(a[len(c):]) {
			continue
		}
		switch {
		case len(c) > bestLen:
			best, bestLen, ambiguous = l, len(c), false
		case len(c) == bestLen && l != best:
			ambiguous = true
		}
	}
	if best == "" || ambiguous {
		return "", false
	}
	return best, true
}

// CleanLabel is the text MatchLabel compares: trimmed of whitespace,
// quotes and surrounding punctuation, internal whitespace collapsed,
// lower-cased. Two labels of one decision that clean to the same text make
// every answer naming them ambiguous, so the chart importer checks a
// node's branches with this same function (duplicate_branch_label).
func CleanLabel(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("'\"`“”‘’«»„.,!?:;()[]*_", r)
	})
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// wordEnd reports whether rest, what follows a label in an answer, leaves
// the label a whole word.
func wordEnd(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}

// The words of an approval gate's branches (readme/charts.md#approval-gates):
// the first of each is the label's own, the others its synonyms, matched
// as a decision's answer is (CleanLabel).
var (
	ApprovedWords = []string{"approved", "approve", "yes"}
	RejectedWords = []string{"rejected", "reject", "no"}
)

// GateLabel is the branch of an approval gate that an answer takes: the
// label that reads as approved (approve true) or rejected; ok is false
// when no label, or more than one, does.
func GateLabel(labels []string, approve bool) (label string, ok bool) {
	words := RejectedWords
	if approve {
		words = ApprovedWords
	}
	for _, l := range labels {
		if slices.Contains(words, CleanLabel(l)) {
			if ok {
				return "", false
			}
			label, ok = l, true
		}
	}
	return label, ok
}

// GateAnswer reads an answer given to an approval gate whose branches are
// labels: one of its labels (as MatchLabel reads a decision's answer) or
// an answer word (approved, approve, yes; rejected, reject, no), whatever
// the labels are (yes on branches approved/rejected, approved on Yes/No).
// label is the branch it takes and approve whether that is the approved
// one; ok is false when the answer names neither branch. A dry run's
// --answer and a replay's answers file both read a gate's answer so.
func GateAnswer(answer string, labels []string) (label string, approve, ok bool) {
	word := CleanLabel(answer)
	if l, ok := MatchLabel(answer, labels); ok {
		word = CleanLabel(l)
	}
	switch {
	case slices.Contains(ApprovedWords, word):
		approve = true
	case !slices.Contains(RejectedWords, word):
		return "", false, false
	}
	label, ok = GateLabel(labels, approve)
	return label, approve, ok
}

// CheckGateLabels says what is wrong with an approval gate's branches, ""
// when nothing is: it needs one labelled approved (or yes) and one
// rejected (or no), and no other.
func CheckGateLabels(labels []string) string {
	var other []string
	unlabelled := 0
	for _, l := range labels {
		c := CleanLabel(l)
		switch {
		case strings.TrimSpace(l) == "":
			unlabelled++
		case !slices.Contains(ApprovedWords, c) && !slices.Contains(RejectedWords, c):
			other = append(other, strconv.Quote(l))
		}
	}
	_, yes := GateLabel(labels, true)
	_, no := GateLabel(labels, false)
	switch {
	case unlabelled > 0:
		// `branch label "" is neither approved nor rejected` read as a
		// riddle: say the line has no label.
		if unlabelled == 1 {
			return "a line out of it has no label: a gate's lines are labelled approved and rejected"
		}
		return fmt.Sprintf("%d lines out of it have no label: a gate's lines are labelled approved and rejected", unlabelled)
	case len(other) > 0:
		if len(other) == 1 {
			return fmt.Sprintf("branch label %s is neither approved nor rejected", other[0])
		}
		return fmt.Sprintf("branch labels %s are neither approved nor rejected", strings.Join(other, ", "))
	case !yes || !no:
		return "it needs one branch labelled approved and one labelled rejected"
	}
	return ""
}
