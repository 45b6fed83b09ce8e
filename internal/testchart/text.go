package testchart

import (
	"fmt"
	"strconv"
)

// processTexts are the prompts of the process steps, cycled by step number.
// Some hold a comma, a double quote or a line break, so that a CSV writer has
// to quote them and a reader has to undo it.
var processTexts = [...]string{
	"Read the failing test output of module %d and name the first broken assertion.",
	"Summarise the diff of step %d in one paragraph, listing the files it touches.",
	"Run \"go vet ./...\" on package %d and fix each finding that it reports.",
	"Write a table test for handler %d: empty input, one item, a big batch.",
	"Check the settings of service %d:\nretries, timeouts and log level set.",
	"Update the changelog of release %d with the new flag and the crash fix.",
}

// processText returns the prompt of the process step with the given number.
func processText(step int) string {
	return fmt.Sprintf(processTexts[step%len(processTexts)], step)
}

// decisionText returns the question of the decision with the given number.
func decisionText(i int) string {
	return "Does check " + strconv.Itoa(i) + " pass on the current branch?"
}

// leafText returns the text of the leaf step with the given number.
func leafText(i int) string {
	return "Apply fix " + strconv.Itoa(i) + ", run the tests again and report the result."
}

// idAlphabet holds the 64 characters of the JSON ids; Lucid's ids use letters,
// digits, '_', '~' and '.'.
const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~"

// lucidID returns a 12-character id for item i that looks like one of
// Lucid's (for example "84GzGlvt4LA~"). Distinct i give distinct ids: the
// first 11 characters encode a bijective mix of i.
func lucidID(i int) string {
	x := mix(uint64(i))
	var b [12]byte
	for k := range 11 {
		b[k] = idAlphabet[x&63]
		x >>= 6
	}
	b[11] = idAlphabet[mix(uint64(i)^0x9e3779b97f4a7c15)&63]
	return string(b[:])
}

// mix is the splitmix64 finaliser, a bijection on uint64.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
