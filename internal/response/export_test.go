package response

// Scan exposes scan to the tests: every offset of the stripped text where a
// valid object starts, with its end, and the most parsers that ran at once,
// which the linear-time argument holds to two.
func Scan(text string) (spans [][2]int, maxLive int) {
	sp, n := scan(StripANSI(text))
	spans = [][2]int{}
	for _, s := range sp {
		spans = append(spans, [2]int{s.start, s.end})
	}
	return spans, n
}
