package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                    string
		cli                     string
		exit                    int
		message, stderr, stdout string
		want                    string
	}{
		{"401 in the message", "custom", 1, "401 Unauthorized: bad token", "", "", PermanentAuth},
		{"invalid x-api-key", "claude", 1, `API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "", "", PermanentAuth},
		{"api key not valid on stderr", "gemini", 144, "", "API key not valid. Please pass a valid API key.", "", PermanentAuth},
		{"rate limit is retried", "codex", 1, "429 Too Many Requests", "", "", ""},
		{"server error is retried", "codex", 1, "500 Internal Server Error", "", "", ""},
		{"401 only in the agent's work on stdout", "custom", 1, "", "", "fixed the 401 Unauthorized handler", ""},
		{"a port number is not a status", "custom", 1, "connect to 127.0.0.1:4010 refused", "", "", ""},
		// What the real CLIs printed
		// (readme/clis.md#errors-that-are-not-retried).
		{"claude as root", "claude", 1, "", "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons", "", PermanentRoot},
		{"claude as root, said on stdout", "claude", 1, "", "", "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n", PermanentRoot},
		{"claude bad key", "claude", 1, "Invalid API key · Please run /login", "", "", PermanentAuth},
		{"claude 401", "claude", 1, `API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "", "", PermanentAuth},
		{"claude overloaded is retried", "claude", 1, `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "", "", ""},
		{"gemini untrusted folder", "gemini", 55, "", "", "", PermanentUntrusted},
		{"gemini auth", "gemini", 41, "", "Invalid auth method", "", PermanentAuth},
		{"gemini 429 is retried", "gemini", 173, "", "", "", ""},
		{"copilot without a login", "copilot", 1, "", "Error: No authentication information found.\n\n  • Run 'gh auth login' to authenticate\n", "", PermanentLogin},
		{"codex 401", "codex", 1, "unexpected status 401 Unauthorized: Incorrect API key provided", "Reading additional input from stdin...\n", "", PermanentAuth},
		{"codex high demand is retried", "codex", 1, "We're currently experiencing high demand, which may cause temporary errors.", "", "", ""},
		{"amp login URL on stdout", "amp", 1, "", "", "Please visit https://ampcode.com/auth/cli-login?code=abc to log in\n", PermanentLogin},
		{"qodo not logged in", "qodo", 1, "", "", "You are not logged in. Run qodo login.\n", PermanentLogin},
		{"another CLI's rule does not apply", "cursor", 55, "", "", "", ""},
		// Usage limits (readme/clis.md#quota): a quota, not a rate limit.
		{"claude limit notice", "claude", 1, "You've hit your limit · resets 3pm (Europe/Paris)", "", "", PermanentQuota},
		{"claude session limit", "claude", 1, "You've hit your session limit · resets 12:50am (America/Los_Angeles)", "", "", PermanentQuota},
		// claude 2.1.332 against the mock's unified rate-limit headers.
		{"claude 5-hour limit", "claude", 1, "API error 429: You've hit your 5-hour limit · resets Jan 1, 2027, 3pm (UTC)", "", "", PermanentQuota},
		{"claude old notice", "claude", 1, "Claude AI usage limit reached|1767225600", "", "", PermanentQuota},
		{"claude 429 rate_limit_error is retried", "claude", 1, `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}`, "", "", ""},
		{"openai insufficient_quota", "codex", 1, `unexpected status 429 Too Many Requests: {"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}`, "", "", PermanentQuota},
		{"codex usage limit", "codex", 1, "You've hit your usage limit. Upgrade to Pro or try again in 2 days 3 hours.", "", "", PermanentQuota},
		{"openai rate_limit_exceeded is retried", "codex", 1, `unexpected status 429 Too Many Requests: {"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`, "", "", ""},
		{"google quota exceeded", "gemini", 173, "", `{"error":{"code":429,"message":"You exceeded your current quota. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0","status":"RESOURCE_EXHAUSTED"}}`, "", PermanentQuota},
		{"gemini daily quota", "gemini", 1, "", "You have exhausted your daily quota on this model.", "", PermanentQuota},
		{"google resource exhausted is retried", "gemini", 173, "", `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, "", ""},
		{"qwen oauth quota", "qwen", 1, "Qwen OAuth quota exceeded: Your free daily quota has been reached.", "", "", PermanentQuota},
		{"copilot rate limit is retried", "copilot", 1, "You have exceeded your rate limit", "", "", ""},
		{"a quota in the agent's work on stdout", "custom", 1, "", "", "handled the insufficient_quota error", ""},
		{"a full disk quota is not a usage limit", "custom", 1, "", "write /tmp/x: disk quota exceeded", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, hint := classify(tt.cli, tt.exit, tt.message, tt.stderr, tt.stdout)
			if got != "" && hint == "" {
				t.Errorf("classify(%q, …) = %q with no hint", tt.cli, got)
			}
			if got != tt.want {
				t.Errorf("classify(%q, %d, %q, %q, %q) = %q, want %q", tt.cli, tt.exit, tt.message, tt.stderr, tt.stdout, got, tt.want)
			}
		})
	}
}

func TestQuotaResets(t *testing.T) {
	t.Parallel()
	tests := []struct{ notice, want string }{
		{"You've hit your limit · resets 3pm (Europe/Paris)", "3pm (Europe/Paris)"},
		{"You've hit your limit · resets May 5 at 9pm (America/New_York)", "May 5 at 9pm (America/New_York)"},
		{"You’ve hit your limit for Claude messages. Limits will reset at 9:30 AM.  View your usage details.", "9:30 AM"},
		{"Claude AI usage limit reached|1767225600", "at 2026-01-01 00:00 UTC"},
		{"You've hit your usage limit. Upgrade to Pro or try again in 2 days 3 hours.", "in 2 days 3 hours"},
		{"error: usage_limit_reached\nplan_type: plus\nresets_at: Dec 29th, 2025 10:15 PM\n", "Dec 29th, 2025 10:15 PM"},
		{"You exceeded your current quota, please check your plan and billing details.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.notice, func(t *testing.T) {
			t.Parallel()
			if got := QuotaResets(tt.notice); got != tt.want {
				t.Errorf("QuotaResets(%q) = %q, want %q", tt.notice, got, tt.want)
			}
		})
	}
	_, hint := quota("You've hit your limit · resets 3pm (Europe/Paris)")
	if !strings.Contains(hint, "resets 3pm (Europe/Paris)") {
		t.Errorf("the hint %q does not say when the quota resets", hint)
	}
}

func TestQuotaAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct{ answer, want string }{
		{"You've hit your limit · resets 3pm (Europe/Paris)\n", "You've hit your limit · resets 3pm (Europe/Paris)"},
		{"Claude AI usage limit reached|1767225600", "Claude AI usage limit reached|1767225600"},
		{`{"completed": true, "comments": ["handled usage limit reached errors"]}`, ""},
		{"5-hour limit reached ∙ resets 3pm", "5-hour limit reached ∙ resets 3pm"},
		{"Done.\nYou've hit your limit · resets 3pm", ""},
		{"You've hit your limit · resets 3pm " + strings.Repeat("x", 500), ""},
	}
	for _, tt := range tests {
		if got := quotaAnswer(tt.answer); got != tt.want {
			t.Errorf("quotaAnswer(%q) = %q, want %q", tt.answer, got, tt.want)
		}
	}
}

func TestRefusesRoot(t *testing.T) {
	t.Parallel()
	claude := builtins["claude"]
	custom := claude
	custom.Args = []string{"-p", "{prompt}", "--permission-mode", "acceptEdits"}
	custom.FallbackArgs = nil
	sandboxed := claude
	sandboxed.Env = map[string]string{"IS_SANDBOX": "1"}
	tests := []struct {
		name      string
		def       Definition
		isSandbox string
		want      bool
	}{
		{"the built-in claude", claude, "", true},
		{"IS_SANDBOX=1 in dtree's environment", claude, "1", false},
		{"IS_SANDBOX=0 is not 1", claude, "0", true},
		{"IS_SANDBOX=1 in the definition's env", sandboxed, "", false},
		{"a claude without --dangerously-skip-permissions", custom, "", false},
		{"another CLI", builtins["codex"], "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string {
				if k == "IS_SANDBOX" {
					return tt.isSandbox
				}
				return ""
			}
			if got := RefusesRoot(tt.def, getenv); got != tt.want {
				t.Errorf("RefusesRoot = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClassifyMerged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cli, message string
		exit               int
		want               string
	}{
		// qwen 0.15.10 in -o json: a 401 comes back as the result text.
		{"qwen's 401 result", "qwen", "[API Error: 401 mock error 401]", 0, PermanentAuth},
		// gemini exits with the HTTP status mod 256: 401 is 145.
		{"gemini 401 exit", "gemini", "", 145, PermanentAuth},
		{"gemini 429 exit is retried", "gemini", "", 173, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, _ := classify(tt.cli, tt.exit, tt.message, "", ""); got != tt.want {
				t.Errorf("classify(%q, %d, %q) = %q, want %q", tt.cli, tt.exit, tt.message, got, tt.want)
			}
		})
	}
}

// TestQuotaFixtures classifies what each real CLI printed for a quota 429
// from the mock (testdata/envelopes/README.md), in its current output mode
// and in stream-json: the decoders of both modes take the error message
// from these lines, so the whole of stdout stands in for it here.
func TestQuotaFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cli, stdout, stderr string
		exit                int
		resets              string
	}{
		{"claude", "quota.json", "", 1, "Jan 1, 2027, 3pm (UTC)"},
		{"claude", "quota.stream.jsonl", "", 1, "Jan 1, 2027, 3pm (UTC)"},
		{"claude", "quota_api.json", "", 1, "2026-12-01 at 00:00 UTC"},
		{"claude", "quota_api.stream.jsonl", "", 1, "2026-12-01 at 00:00 UTC"},
		{"codex", "quota.jsonl", "quota.stderr", 1, ""},
		{"gemini", "", "quota.stderr", 173, "in 41.5s"},
		{"gemini", "quota.stream.jsonl", "quota.stream.stderr", 173, "in 41.5s"},
		{"opencode", "quota.jsonl", "", 1, ""},
		{"copilot", "quota.jsonl", "", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.cli+"/"+tt.stdout+tt.stderr, func(t *testing.T) {
			t.Parallel()
			read := func(name string) string {
				if name == "" {
					return ""
				}
				b, err := os.ReadFile(filepath.Join("testdata", "envelopes", tt.cli, name))
				require.NoError(t, err)
				return string(b)
			}
			stdout, stderr := read(tt.stdout), read(tt.stderr)
			kind, hint := classify(tt.cli, tt.exit, stdout, stderr, stdout)
			assert.Equal(t, PermanentQuota, kind)
			if tt.resets != "" {
				assert.Contains(t, hint, "the usage limit resets "+tt.resets)
			} else {
				assert.Contains(t, hint, "the usage limit is spent until it resets")
			}
		})
	}
}
