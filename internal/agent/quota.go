package agent

import (
	"strconv"
	"strings"
	"time"
)

// quotaNotice is how model APIs and the CLIs say an account's usage limit
// is spent, as opposed to a plain rate limit that a retry after a backoff
// mends (readme/clis.md#quota): Claude Code's "You've hit your limit ·
// resets 3pm (Europe/Paris)", "Claude AI usage limit reached|<epoch>";
// OpenAI's insufficient_quota ("You exceeded your current quota") and
// codex's "You've hit your usage limit"; Google's "Quota exceeded for
// metric" and Gemini CLI's "exhausted your daily quota"; Qwen OAuth's
// "quota exceeded"; cursor's "Usage limit reached"; amp's "Out of credits".
// Google's bare "Resource has been exhausted (e.g. check quota)", a
// 429 rate_limit_error and "exceeded your rate limit" are rate limits: retried.
var quotaNotice = lazyRegexp(`(?i)usage[ _]limit[ _](?:reached|exceeded)|hit your (?:[\w-]+ )?limit|insufficient_quota|exceeded your current quota|quota (?:exceeded|exhausted|has been (?:reached|exhausted))|reached your specified (?:api )?usage limits?|exhausted your (?:\w+ )?quota|out of credits|credit balance is too low|\blimit reached\s*[·∙•|]\s*resets`)

// quotaReset finds when the CLI says the quota resets: "resets 3pm
// (Europe/Paris)", "Limits will reset at 9:30 AM", "try again at 3:05 PM",
// "try again in 2 days 3 hours", "resets_at: Dec 29th, 2025 10:15 PM",
// Anthropic's "You will regain access on 2026-12-01 at 00:00 UTC",
// Google's "Please retry in 41.5s".
var quotaReset = lazyRegexp(`(?i)\b(?:resets?(?:_at)?:?(?: at| in| on)?|regain access on|(?:try again|retry) (?:at|in|after))\s+([^\n"\\|]{1,60}?)\s*(?:\.(?:\s|$)|[\n"\\|\]]|$)`)

// quotaEpoch is Claude Code's older notice: the reset as Unix seconds.
var quotaEpoch = lazyRegexp(`(?i)usage limit reached\|(\d{9,11})\b`)

// quota classifies what a failed call said as a usage limit: PermanentQuota
// and a hint that quotes when the quota resets where the CLI says.
func quota(said string) (kind, hint string) {
	for _, loc := range quotaNotice().FindAllStringIndex(said, -1) {
		// "Disk quota exceeded" is the file system's (EDQUOT), not a
		// usage limit.
		if strings.HasSuffix(strings.ToLower(said[max(0, loc[0]-5):loc[0]]), "disk ") {
			continue
		}
		return PermanentQuota, quotaHint(said, loc[0])
	}
	return "", ""
}

// quotaHint says when the quota resets, read from the notice at from on.
func quotaHint(said string, from int) string {
	const fallback = "; until then only another CLI can do the work (a node's cli may be a list: cli: [claude, codex])"
	if at := QuotaResets(said[from:]); at != "" {
		return "the usage limit resets " + at + fallback
	}
	return "the usage limit is spent until it resets" + fallback
}

// QuotaResets returns when the usage limit a notice speaks of resets, in
// the CLI's own words ("3pm (Europe/Paris)"), or "" when it does not say.
func QuotaResets(notice string) string {
	if m := quotaEpoch().FindStringSubmatch(notice); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return "at " + time.Unix(sec, 0).UTC().Format("2006-01-02 15:04 UTC")
		}
	}
	m := quotaReset().FindStringSubmatch(notice)
	if m == nil {
		return ""
	}
	at := strings.TrimRight(strings.TrimSpace(m[1]), ".")
	if lead := strings.ToLower(m[0]); strings.HasPrefix(lead, "try again in") || strings.HasPrefix(lead, "retry in") {
		return "in " + at
	}
	return at
}

// quotaAnswer is the notice when a call that exited 0 answered only with
// a usage-limit notice ("You've hit your limit · resets 3pm"): a short
// answer whose first line is the notice. An agent's real work that merely
// mentions a usage limit is longer, or says it further on.
func quotaAnswer(answer string) string {
	answer = strings.TrimSpace(answer)
	if answer == "" || len(answer) > 400 {
		return ""
	}
	first, _, _ := strings.Cut(answer, "\n")
	if strings.HasPrefix(first, "{") || strings.HasPrefix(first, "[") {
		return ""
	}
	if kind, _ := quota(first); kind == "" {
		return ""
	}
	return first
}
