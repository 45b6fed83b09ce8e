package types

import "strings"

// maxSuggestLen bounds the words Nearest and EditDistance compare: a
// suggestion is for a typo in a name, and a longer word is no name's
// typo. It keeps the cost of a hostile input (a 1 MiB flag) constant.
const maxSuggestLen = 64

// EditDistance is the Levenshtein distance between two short strings;
// strings longer than 64 bytes are 64 apart, uncompared.
func EditDistance(a, b string) int {
	if len(a) > maxSuggestLen || len(b) > maxSuggestLen {
		return maxSuggestLen
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest returns the candidate word is most likely a typo of, as "did
// you mean" offers it: the same but for case, else the closest within an
// edit distance of 1 (2 for candidates of five letters or more), the
// first in candidates' order on a tie. ok is false when none is that
// close, or word is a candidate already.
func Nearest(word string, candidates []string) (string, bool) {
	w := strings.ToLower(strings.TrimSpace(word))
	if w == "" || len(w) > maxSuggestLen {
		return "", false
	}
	best, bestD := "", maxSuggestLen
	for _, c := range candidates {
		if c == word {
			return "", false
		}
		lc := strings.ToLower(c)
		if lc == w {
			return c, true
		}
		limit := 1
		if len(c) >= 5 {
			limit = 2
		}
		if d := EditDistance(w, lc); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// DidYouMean is "; did you mean X?" when word is a typo of a candidate,
// else "".
func DidYouMean(word string, candidates []string) string {
	if near, ok := Nearest(word, candidates); ok {
		return "; did you mean " + near + "?"
	}
	return ""
}
