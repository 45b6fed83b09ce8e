package agent

import (
	"regexp"
	"testing"
)

// The patterns compiled at their first use compile: a mistake in one
// would otherwise show only when a run meets what it is for.
func TestLazyRegexpsCompile(t *testing.T) {
	for name, re := range map[string]func() *regexp.Regexp{
		"geminiAPIError": geminiAPIError, "aiderTokens": aiderTokens, "aiderCost": aiderCost, "aiderError": aiderError,
		"quotaNotice": quotaNotice, "quotaReset": quotaReset, "quotaEpoch": quotaEpoch, "errorLine": errorLine,
		"noiseLine": noiseLine, "jsonField": jsonField, "hintLine": hintLine, "qwenAPIError": qwenAPIError,
	} {
		first, again := re(), re()
		if first == nil || first != again {
			t.Errorf("%s: not compiled once", name)
		}
	}
}
