package response_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dtree-dev/dtree/internal/response"
)

// BenchmarkFindObjects runs on replies of 1 and 10 MB, so that MB/s shows
// whether time grows linearly. "stray" is prose with a stray '{' every
// 100 bytes (100k in 10 MB), some opening a string; "fragments" is
// nothing but `{"a":[` openings that never close, which makes parsing from
// every '{' quadratic; "strings" is `{"` fragments, each a string that the
// next one's quote ends.
func BenchmarkFindObjects(b *testing.B) {
	const answer = `{"choices": ["Yes", "No"], "answer": "Yes", "reasons": ["ok"]}`
	inputs := map[string]func(n int) string{
		"stray":     func(n int) string { return strayBraces(n, n/100) },
		"fragments": func(n int) string { return strings.Repeat(`{"a":[`, n/6) },
		"strings":   func(n int) string { return strings.Repeat(`{"a {`, n/5) },
	}
	for _, name := range []string{"stray", "fragments", "strings"} {
		for _, mb := range []int{1, 10} {
			in := inputs[name](mb*1_000_000) + answer
			if name == "stray" && strings.Count(in, "{") != mb*10_000+1 {
				b.Fatalf("%d braces", strings.Count(in, "{"))
			}
			b.Run(fmt.Sprintf("%s/%dMB", name, mb), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					got := response.FindObjects(in)
					if len(got) == 0 || got[len(got)-1] != answer {
						b.Fatalf("answer not found: %d objects", len(got))
					}
				}
			})
		}
	}
}

func BenchmarkParseDecision(b *testing.B) {
	in := strayBraces(10_000_000, 100_000) + "```json\n" + `{"choices": ["Yes", "No"], "answer": "Yes", "reasons": ["ok"]}` + "\n```\n"
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if d, err := response.ParseDecision(in); err != nil || d.Answer != "Yes" {
			b.Fatal(d, err)
		}
	}
}
