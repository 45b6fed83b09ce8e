package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/mockllm"
	"github.com/dtree-dev/dtree/internal/runlog"
)

// quotaCase is how a CLI meets a spent usage limit from the mock
// (readme/clis.md#quota): the rule the mock answers with, what the CLI
// then says, and when the quota resets in dtree's words ("" when it does
// not say).
type quotaCase struct {
	rule   mockllm.Rule
	env    []string // set besides the CLI's setup
	drop   []string // dropped from it
	says   string
	resets string
}

// quotaCases are the CLIs whose quota 429 gives words dtree reads
// (internal/agent/testdata/envelopes/README.md): claude logged in with a
// subscription (Anthropic's unified rate-limit headers say it is spent),
// codex and gemini with their providers' quota errors.
var quotaCases = map[string]quotaCase{
	"claude": {
		rule: mockllm.Rule{Status: 429, Message: "This request would exceed your account's rate limit. Please try again later.",
			Headers: map[string]string{
				"anthropic-ratelimit-unified-status":               "rejected",
				"anthropic-ratelimit-unified-reset":                "1798815600",
				"anthropic-ratelimit-unified-representative-claim": "five_hour",
			}},
		drop: []string{"ANTHROPIC_API_KEY"},
		env:  []string{"CLAUDE_CODE_OAUTH_TOKEN=conformance-token"},
		// 2.1.197 said "session limit", 2.1.332 "5-hour limit".
		says:   "limit · resets Jan 1, 2027, 3pm (UTC)",
		resets: "Jan 1, 2027, 3pm (UTC)",
	},
	"codex": {
		rule: mockllm.Rule{Status: 429, Code: "insufficient_quota",
			Message: "You exceeded your current quota, please check your plan and billing details."},
		says: "Quota exceeded. Check your plan and billing details.",
	},
	"gemini": {
		rule: mockllm.Rule{Status: 429,
			Message: "You exceeded your current quota, please check your plan and billing details. * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0\nPlease retry in 41.5s."},
		says:   "You exceeded your current quota",
		resets: "in 41.5s",
	},
}

// testQuota runs one node with the real CLI first and dtree's fake agent
// second, the mock answering every model call with a quota 429: the real
// CLI's call fails as a quota, not retried, and the fake agent takes over
// at once (DTREE_RETRY_BACKOFF is 30 s: the run takes well under it); then
// with the real CLI alone, the node fails after its one call, the reset
// time in dtree's message.
func testQuota(t *testing.T, c cliCase) {
	q, ok := quotaCases[c.name]
	if !ok || c.settings != "" {
		return
	}
	t.Run("quota", func(t *testing.T) {
		e := newEnv(t, c)
		e.without(q.drop...)
		e.vars = append(e.vars, q.env...)
		e.vars = append(e.vars, "DTREE_RETRY_BACKOFF=30s")
		e.mock.SetRules(c.rules(q.rule))
		e.write("dtree.yaml", fmt.Sprintf("clis:\n  after:\n    binary: %s\n    prompt_via: stdin\n    output: text\n", fakeAgentBin))
		start := time.Now()
		r := e.run("--retries", "2", "--no-validate", "--timeout", "120s", "--cli", c.name+",after",
			e.write("quota.yaml", oneNode("Report the weather (conformance quota check).")))
		took := time.Since(start)
		calls := r.calls()
		expect(t, c, "quota fallback", func(a *assert.Assertions) {
			a.Equal(0, r.exit, "exit status; stderr: %s", r.stderr)
			a.Equal("succeeded", r.summary.Status)
			a.Less(took, 30*time.Second, "no backoff before the fallback")
			if a.Len(calls, 2, "one call of the real CLI, not retried, then the fallback") {
				a.Equal(c.name, calls[0].CLI)
				a.Contains(calls[0].Error, q.says, "the real CLI's words")
				a.Contains(calls[0].Error, "(quota, not retried: ")
				a.Equal("after", calls[1].CLI)
				a.Equal(1, calls[1].Attempt, "the same attempt: nothing was done")
			}
			var fell []runlog.Fallback
			for _, ev := range r.events {
				if f, ok := ev.(runlog.Fallback); ok {
					fell = append(fell, f)
				}
			}
			if a.Len(fell, 1) {
				a.Equal(c.name, fell[0].From)
				a.Contains(fell[0].Reason, "(quota, not retried: ")
			}
		})
		os.Remove(filepath.Join(e.work, "dtree.yaml"))
		r = e.run("--retries", "2", "--no-validate", "--timeout", "120s", "--cli", c.name,
			e.write("alone.yaml", oneNode("Report the weather (conformance quota alone).")))
		expect(t, c, "quota alone", func(a *assert.Assertions) {
			a.Equal(1, r.exit, "exit status")
			a.Len(r.calls(), 1, "no retry on the same CLI")
			a.Contains(r.stderr, "failed after 1 attempt")
			if q.resets != "" {
				a.Contains(r.stderr, "the usage limit resets "+q.resets)
			}
			a.False(strings.Contains(r.stderr, "attempt 2"), "no second attempt")
		})
	})
}
