//go:build unix

package agent_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// answer is what the success fixtures' agents answer dtree; ANSI codes in
// their copies of it must be gone from Result.Answer.
const answer = `{"completed": true, "secs_taken": 12, "tokens_used": 0, "comments": ["fixed the failing test"]}`

// TestEnvelopeFixtures runs every built-in's envelope fixtures
// (testdata/envelopes/CLI/*, written from the shapes readme/clis.md gives per
// CLI) through Run, the fake agent printing them in small writes: the answer,
// the usage, and the error shapes that must fail a call whatever the exit
// status.
func TestEnvelopeFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cli, file string
		streams   bool   // the fixture is under testdata/streams, not testdata/envelopes
		stderr    string // a fixture for stderr
		exit      int
		want      string      // the answer's start, or all of it when it is JSON or exact is set; "" with wantErr
		exact     bool        // want is the whole answer
		wantFile  bool        // the whole fixture, trimmed, is the answer
		usage     types.Usage // nil fields: unknown
		wantErr   string      // in the AgentError's reason
		permanent string      // the AgentError's Permanent: not retried
		resets    string      // in the hint: when the quota resets
	}{
		{cli: "claude", file: "ok.json", want: answer,
			usage: usageOf(21012, 340, 0.0123, 12345)},
		{cli: "claude", file: "is_error.json", stderr: "is_error.stderr", wantErr: `reported an error: API Error: 529 {"type":"error"`,
			usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](2100)}},
		{cli: "claude", file: "max_turns.json", wantErr: "reported error_max_turns",
			usage: usageOf(100, 2000, 0.5, 90000)},
		{cli: "claude", file: "truncated.json", wantErr: "stdout is exactly 65536 bytes: the CLI probably truncated it"},
		{cli: "claude", file: "is_error.json", exit: 1, wantErr: "exited with status 1: API Error: 529",
			usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](2100)}},
		// Claude Code 2.1.197: API errors exit 1, subtype still "success",
		// with api_error_status; the reason says the status (api_*.json are
		// its output against a mock server).
		{cli: "claude", file: "bad_key.json", exit: 1, wantErr: "exited with status 1: API error 401: Invalid API key · Please run /login",
			permanent: agent.PermanentAuth, usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](412)}},
		{cli: "claude", file: "api_401.json", exit: 1, wantErr: "exited with status 1: API error 401: Failed to authenticate. API Error: 401 mock error 401",
			permanent: agent.PermanentAuth, usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](699)}},
		{cli: "claude", file: "api_500.json", exit: 1, wantErr: "exited with status 1: API Error: 500 mock error 500. This is a server-side issue",
			usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](630)}},
		// Claude Code 2.1.332 against a mock server (README.md): the same
		// fields, in another order ("type" last but a few, "result" after
		// "usage"), and new ones (subagent_stats, api_error_type).
		{cli: "claude", file: "ok_2.1.332.json", want: `Hi. {"completed": true`,
			usage: usageOf(1000, 50, 0.00348, 509)},
		{cli: "claude", file: "api_401_2.1.332.json", exit: 1, wantErr: "exited with status 1: API error 401: Failed to authenticate. API Error: 401 mock error 401",
			permanent: agent.PermanentAuth, usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](813)}},
		{cli: "claude", file: "api_500_2.1.332.json", exit: 1, wantErr: "exited with status 1: API Error: 500 mock error 500. This is a server-side issue",
			usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](811)}},
		{cli: "claude", file: "bad_key.json", wantErr: "reported an error: API error 401: Invalid API key",
			permanent: agent.PermanentAuth, usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](412)}},

		// Usage limits (testdata/envelopes/README.md says how they were
		// printed): a quota, not retried, the reset quoted in the hint.
		{cli: "claude", file: "quota.json", exit: 1, wantErr: "You've hit your session limit · resets Jan 1, 2027, 3pm (UTC)",
			permanent: agent.PermanentQuota, resets: "Jan 1, 2027, 3pm (UTC)",
			usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](159)}},
		{cli: "claude", file: "quota_api.json", exit: 1, wantErr: "API Error: Request rejected (429) · You have reached your specified API usage limits.",
			permanent: agent.PermanentQuota, resets: "2026-12-01 at 00:00 UTC",
			usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](147)}},
		{cli: "claude", file: "quota.stream.jsonl", exit: 1, wantErr: "You've hit your session limit · resets Jan 1, 2027, 3pm (UTC)",
			permanent: agent.PermanentQuota, resets: "Jan 1, 2027, 3pm (UTC)",
			usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), CostUSD: ptr(0.0), DurationMS: ptr[int64](139)}},
		{cli: "gemini", file: "quota.stream.jsonl", stderr: "quota.stream.stderr", exit: 173, wantErr: "You exceeded your current quota",
			permanent: agent.PermanentQuota, resets: "in 41.5s", usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0)}},
		{cli: "codex", file: "quota.jsonl", stderr: "quota.stderr", exit: 1, wantErr: "exited with status 1: Quota exceeded. Check your plan and billing details.",
			permanent: agent.PermanentQuota},
		{cli: "gemini", stderr: "quota.stderr", exit: 173, wantErr: "exited with status 173 (rate limited (HTTP 429)): You exceeded your current quota",
			permanent: agent.PermanentQuota, resets: "in 41.5s"},
		{cli: "opencode", file: "quota.jsonl", exit: 1, wantErr: "exited with status 1: You exceeded your current quota",
			permanent: agent.PermanentQuota},
		{cli: "copilot", file: "quota.jsonl", exit: 1, wantErr: "Last error: 429 You exceeded your current quota",
			permanent: agent.PermanentQuota, usage: types.Usage{DurationMS: ptr[int64](56892)}},

		{cli: "amp", file: "ok.jsonl", want: answer,
			usage: types.Usage{InputTokens: ptr[int64](4115), OutputTokens: ptr[int64](120), DurationMS: ptr[int64](8123)}},
		{cli: "amp", file: "error.jsonl", stderr: "error.stderr", wantErr: "reported error_during_execution: Out of credits", permanent: agent.PermanentQuota,
			usage: types.Usage{DurationMS: ptr[int64](900)}},
		{cli: "amp", file: "truncated.jsonl", wantErr: "stdout ends in the middle of an event",
			usage: types.Usage{InputTokens: ptr[int64](4115), OutputTokens: ptr[int64](120)}}, // what it reported is kept

		{cli: "codex", file: "ok.jsonl", want: answer,
			usage: types.Usage{InputTokens: ptr[int64](24763), OutputTokens: ptr[int64](122)}},
		{cli: "codex", file: "turn_failed.jsonl", stderr: "turn_failed.stderr", wantErr: "reported an error: unexpected status 401 Unauthorized",
			permanent: agent.PermanentAuth},
		{cli: "codex", file: "turn_failed.jsonl", stderr: "turn_failed.stderr", exit: 1,
			wantErr: "exited with status 1: unexpected status 401 Unauthorized", permanent: agent.PermanentAuth},
		// Codex 0.171.0 against a mock server (README.md): an error item
		// that is only a warning before the turn (no metadata for the mock's
		// model), cache_write_input_tokens in the usage, and the 401 as
		// error events and turn.failed, exit 1.
		{cli: "codex", file: "ok_0.171.0.jsonl", want: `Hi. {"completed": true`,
			usage: types.Usage{InputTokens: ptr[int64](1000), OutputTokens: ptr[int64](50)}},
		{cli: "codex", file: "turn_failed_0.171.0.jsonl", stderr: "turn_failed_0.171.0.stderr", exit: 1,
			wantErr: "exited with status 1: unexpected status 401 Unauthorized: mock error 401", permanent: agent.PermanentAuth},
		{cli: "codex", file: "error.jsonl", wantErr: "reported an error: stream disconnected before completion"},
		{cli: "codex", file: "truncated.jsonl", wantErr: "stdout ends in the middle of an event"},

		{cli: "gemini", file: "ok.json", want: answer,
			usage: types.Usage{InputTokens: ptr[int64](9000), OutputTokens: ptr[int64](550), DurationMS: ptr[int64](5700)}},
		{cli: "gemini", file: "error.json", stderr: "error.stderr", wantErr: "reported an error: Reached max session turns"},
		{cli: "gemini", stderr: "auth.stderr", exit: 41,
			wantErr:   "exited with status 41 (authentication failed: set GEMINI_API_KEY, or log in by running gemini once): Please set an Auth method",
			permanent: agent.PermanentAuth},
		// Gemini CLI 0.61.0 gives up on an API error after its own retries
		// and exits with its HTTP status cut to a byte, its JSON error last
		// on stderr after a stack trace (api_400.stderr is its output
		// against a mock server; 429 and 500 differ in the status).
		{cli: "gemini", stderr: "api_429.stderr", exit: 173,
			wantErr: "exited with status 173 (rate limited (HTTP 429)): Resource has been exhausted (e.g. check quota)."},
		{cli: "gemini", stderr: "api_500.stderr", exit: 244,
			wantErr: "exited with status 244 (server error (HTTP 500)): An internal error has occurred."},
		{cli: "gemini", stderr: "api_400.stderr", exit: 144,
			wantErr: "exited with status 144 (bad request (HTTP 400)): Request contains an invalid argument."},
		{cli: "gemini", exit: 55, wantErr: "exited with status 55 (the folder is not trusted)", permanent: agent.PermanentUntrusted},
		{cli: "gemini", file: "truncated.json", wantErr: "printed no JSON envelope: unexpected EOF"},
		// Gemini CLI 0.61.0's -o stream-json against a mock server
		// (testdata/streams/gemini/README.md): the same answers and
		// errors, an API error's message from its result event.
		{cli: "gemini", streams: true, file: "ok.jsonl", want: "Hi. {", usage: types.Usage{InputTokens: ptr[int64](1011), OutputTokens: ptr[int64](51), DurationMS: ptr[int64](73)}},
		{cli: "gemini", streams: true, file: "api_429.jsonl", stderr: "api_429.stderr", exit: 173,
			wantErr: "exited with status 173 (rate limited (HTTP 429)): mock 429: scripted failure for dtree", usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0)}},
		{cli: "gemini", streams: true, file: "api_500.jsonl", stderr: "api_500.stderr", exit: 244,
			wantErr: "exited with status 244 (server error (HTTP 500)): mock 500: scripted failure for dtree", usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0)}},
		{cli: "gemini", streams: true, file: "api_400.jsonl", stderr: "api_400.stderr", exit: 144,
			wantErr: "exited with status 144 (bad request (HTTP 400)): mock 400: scripted failure for dtree", usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0)}},
		{cli: "gemini", streams: true, file: "api_401.jsonl", stderr: "api_401.stderr", exit: 145, permanent: agent.PermanentAuth,
			wantErr: "exited with status 145 (unauthorized (HTTP 401)): mock 401: scripted failure for dtree", usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0)}},
		{cli: "gemini", streams: true, stderr: "auth.stderr", exit: 41, permanent: agent.PermanentAuth,
			wantErr: "exited with status 41 (authentication failed: set GEMINI_API_KEY, or log in by running gemini once)"},
		{cli: "gemini", streams: true, stderr: "untrusted.stderr", exit: 55, permanent: agent.PermanentUntrusted,
			wantErr: "exited with status 55 (the folder is not trusted)"},

		{cli: "cursor", file: "ok.json", want: answer, usage: types.Usage{DurationMS: ptr[int64](5234)}},
		{cli: "cursor", file: "trust.txt", stderr: "trust.stderr", wantErr: "printed no JSON envelope: no JSON object in stdout; stdout: Workspace Trust Required"},
		{cli: "cursor", file: "is_error.json", wantErr: "reported error: Usage limit reached", permanent: agent.PermanentQuota, usage: types.Usage{DurationMS: ptr[int64](300)}},
		{cli: "cursor", file: "truncated.json", wantErr: "printed no JSON envelope"},

		// ok.jsonl and session_error.jsonl are copilot 1.0.102's events
		// against a mock provider (COPILOT_OFFLINE): no outputTokens.
		{cli: "copilot", file: "ok.jsonl", want: answer, usage: types.Usage{DurationMS: ptr[int64](142)}},
		{cli: "copilot", file: "session_error.jsonl", exit: 1, usage: types.Usage{DurationMS: ptr[int64](23298)},
			wantErr: "exited with status 1: Could not connect to local model provider at http://127.0.0.1:9/v1."},
		{cli: "copilot", file: "stale_login.jsonl", wantErr: "printed nothing and exited 0; Copilot prints nothing and exits 0 when its login is stale"},
		{cli: "copilot", stderr: "no_auth.stderr", exit: 1, wantErr: "exited with status 1", permanent: agent.PermanentLogin},
		{cli: "copilot", file: "error.jsonl", stderr: "error.stderr", wantErr: "reported an error: You have exceeded your rate limit"},
		{cli: "copilot", file: "truncated.jsonl", wantErr: "stdout ends in the middle of an event"},

		{cli: "opencode", file: "ok.jsonl", want: answer,
			usage: types.Usage{InputTokens: ptr[int64](13000), OutputTokens: ptr[int64](160), CostUSD: ptr(0.0063)}},
		{cli: "opencode", file: "error.jsonl", stderr: "error.stderr", wantErr: "reported an error: Rate limit exceeded: retry after 60s"},
		{cli: "opencode", file: "truncated.jsonl", wantErr: "stdout ends in the middle of an event",
			usage: types.Usage{InputTokens: ptr[int64](6500), OutputTokens: ptr[int64](100), CostUSD: ptr(0.0042)}},
		// opencode 1.18.33 against a mock server: no done event after the
		// last step_finish, and cost 0 for a model without a price, which
		// is unknown, not free; an error event, then exit 1.
		{cli: "opencode", file: "no_done.jsonl", want: answer,
			usage: types.Usage{InputTokens: ptr[int64](13000), OutputTokens: ptr[int64](160), CostUSD: ptr(0.0063)}},
		{cli: "opencode", file: "unpriced.jsonl", want: `{"completed": true, "comments": ["mock"]}`,
			usage: types.Usage{InputTokens: ptr[int64](1200), OutputTokens: ptr[int64](34)}},
		{cli: "opencode", file: "api_401.jsonl", exit: 1, wantErr: "exited with status 1: mock error 401"},

		// Qwen Code 0.15.10's -o json: one array of events (api_401.json is
		// its output against a mock server). usage.input_tokens already
		// counts the cached tokens: 18400, not 18400 + 17000.
		{cli: "qwen", file: "ok.json", want: answer, usage: types.Usage{InputTokens: ptr[int64](18400), OutputTokens: ptr[int64](125), DurationMS: ptr[int64](6200)}},
		{cli: "qwen", file: "api_401.json", wantErr: "reported an error: API Error: 401 mock error 401",
			permanent: agent.PermanentAuth, usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), DurationMS: ptr[int64](111)}},
		{cli: "qwen", file: "is_error.json", wantErr: "reported an error: Model stream ended with an error: Connection error.",
			usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), DurationMS: ptr[int64](111)}},
		{cli: "qwen", file: "api_401.json", exit: 1, wantErr: "exited with status 1: API Error: 401 mock error 401",
			permanent: agent.PermanentAuth, usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), DurationMS: ptr[int64](111)}},
		// Cut off before its result: the usage its assistant messages
		// reported is kept, as amp's and claude's streams keep theirs.
		{cli: "qwen", file: "truncated.json", wantErr: "printed no result event",
			usage: types.Usage{InputTokens: ptr[int64](18400), OutputTokens: ptr[int64](125)}},

		// Qwen Code 0.15.10's -o stream-json against a mock server
		// (testdata/streams/qwen/README.md).
		{cli: "qwen", streams: true, file: "ok.jsonl", want: "Hi. {", usage: types.Usage{InputTokens: ptr[int64](1000), OutputTokens: ptr[int64](50), DurationMS: ptr[int64](143)}},
		{cli: "qwen", streams: true, file: "api_401.jsonl", wantErr: "reported an error: API Error: 401 mock 401: scripted failure for dtree",
			permanent: agent.PermanentAuth, usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), DurationMS: ptr[int64](130)}},

		// Qwen Code 0.24.4 against a mock server (README.md): a 401 now
		// exits 1 with an is_error result, subtype error_during_execution,
		// and the message in error.message, still in brackets.
		{cli: "qwen", file: "ok_0.24.4.json", want: `Hi. {"completed": true`,
			usage: types.Usage{InputTokens: ptr[int64](1000), OutputTokens: ptr[int64](50), DurationMS: ptr[int64](587)}},
		{cli: "qwen", file: "api_401_0.24.4.json", stderr: "api_401_0.24.4.stderr", exit: 1, wantErr: "exited with status 1: API Error: 401 mock error 401",
			permanent: agent.PermanentAuth, usage: types.Usage{InputTokens: ptr[int64](0), OutputTokens: ptr[int64](0), DurationMS: ptr[int64](775)}},

		{cli: "aider", file: "ok.txt", want: "Aider v0.86.1",
			usage: types.Usage{InputTokens: ptr[int64](5400), OutputTokens: ptr[int64](130), CostUSD: ptr(0.0163)}},
		{cli: "aider", file: "error.txt", stderr: "error.stderr", wantErr: "reported an error: The API provider is not able to authenticate you"},
		{cli: "aider", file: "retried.txt", want: "Aider v0.86.1",
			usage: types.Usage{InputTokens: ptr[int64](3000), OutputTokens: ptr[int64](42), CostUSD: ptr(0.0063)}},
		// Plain text has no end mark, so a transcript cut short is not an
		// error of the call: all of it is the answer, with no usage (the
		// Tokens: line never came). The response parser then finds no JSON
		// reply in it and fails the attempt (builtin_aider.txtar).
		{cli: "aider", file: "truncated.txt", wantFile: true},

		{cli: "qodo", file: "ok.txt", want: answer},
		{cli: "qodo", file: "empty.txt", wantErr: "gave an empty answer"},
		// qodo's error shapes are not documented (readme/clis.md#qodo), and in
		// plain text an error message, or an answer cut short, looks like
		// an answer: the call succeeds, escapes removed, and the response
		// parser fails the attempt for want of a JSON reply
		// (builtin_qodo.txtar). A cut after the reply's JSON goes unseen.
		{cli: "qodo", file: "error.txt", stderr: "error.stderr",
			want: "✖ Error: Request failed with status code 401. Your session has expired: run qodo login.", exact: true},
		{cli: "qodo", exit: 1, wantErr: "exited with status 1 and printed nothing; qodo -q prints nothing when it cannot start: run qodo once without -q to see why, or run qodo login"},
		{cli: "claude", exit: 1, wantErr: "exited with status 1 and printed nothing"},
		{cli: "qodo", file: "truncated.txt",
			want: `{"completed": true, "secs_taken": 12, "tokens_used": 0, "comments": ["fixed the fai`, exact: true},
	}
	for _, tt := range tests {
		name := tt.cli + "/" + tt.file + tt.stderr
		if tt.streams {
			name = "streams/" + name
		}
		if tt.exit != 0 {
			name += "/exit" + strconv.Itoa(tt.exit)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			def, err := agent.NewRegistry(nil).Lookup(tt.cli)
			require.NoError(t, err)
			def.Binary = fakeAgent
			e := env("FAKE_MODE=print", "FAKE_EXIT="+strconv.Itoa(tt.exit))
			dir := filepath.Join("testdata", "envelopes", tt.cli)
			if tt.streams {
				dir = filepath.Join("testdata", "streams", tt.cli)
			}
			stdout, stderr := "", ""
			if tt.file != "" {
				abs, err := filepath.Abs(filepath.Join(dir, tt.file))
				require.NoError(t, err)
				e = append(e, "FAKE_STDOUT_FILE="+abs)
				stdout = readFile(t, abs)
			}
			if tt.stderr != "" {
				abs, err := filepath.Abs(filepath.Join(dir, tt.stderr))
				require.NoError(t, err)
				e = append(e, "FAKE_STDERR_FILE="+abs)
				stderr = readFile(t, abs)
			}
			res, err := agent.Run(t.Context(), agent.Call{Def: def, Prompt: "q", Dir: t.TempDir(), Env: e, Timeout: 20 * time.Second})
			assert.Equal(t, tt.usage, res.Usage, "usage")
			assert.NotContains(t, res.Answer, "\x1b", "terminal escapes left in the answer")
			assert.Equal(t, stderr, res.StderrTail, "the call keeps its stderr")
			if tt.wantErr != "" {
				var ae *agent.AgentError
				require.ErrorAs(t, err, &ae)
				assert.Contains(t, ae.Reason, tt.wantErr)
				assert.Equal(t, tt.exit, ae.ExitCode)
				assert.Equal(t, tt.permanent, ae.Permanent, "not retried")
				if tt.permanent != "" {
					assert.Contains(t, err.Error(), "("+tt.permanent+", not retried: ")
				}
				if tt.resets != "" {
					assert.Contains(t, ae.Hint, "resets "+tt.resets, "the hint says when the quota resets")
				}
				return
			}
			require.NoError(t, err)
			switch {
			case tt.wantFile:
				assert.Equal(t, strings.TrimSpace(stdout), res.Answer)
			case tt.exact || strings.HasPrefix(tt.want, "{"):
				assert.Equal(t, tt.want, res.Answer)
			default:
				assert.True(t, strings.HasPrefix(res.Answer, tt.want), "answer %.80q", res.Answer)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func usageOf(in, out int64, cost float64, ms int64) types.Usage {
	return types.Usage{InputTokens: &in, OutputTokens: &out, CostUSD: &cost, DurationMS: &ms}
}
