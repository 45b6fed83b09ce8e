package agent

import "testing"

// TestStderrLine: the line quoted from a failed call's stderr is the one
// that says what went wrong, not the hint or the noise printed after it.
// The texts are what the real CLIs printed
// (readme/clis.md#errors-that-are-not-retried).
func TestStderrLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, stderr, want string
	}{
		{"copilot without credentials: the error, not its hints",
			"Error: No authentication information found.\n\n" +
				"  • Run 'gh auth login' to authenticate with GitHub\n" +
				"  • Or set COPILOT_GITHUB_TOKEN to a token with the Copilot Requests permission\n",
			"Error: No authentication information found."},
		{"codex's stdin note is never quoted", "Reading additional input from stdin...\n", ""},
		{"codex: the error, not the stdin note before it",
			"Reading additional input from stdin...\nERROR: unexpected status 401 Unauthorized: Incorrect API key provided\n",
			"ERROR: unexpected status 401 Unauthorized: Incorrect API key provided"},
		{"a stack trace: its error line, not its last frame",
			"TypeError: fetch failed\n    at node:internal/deps/undici/undici:13502:13\n    at async main (/usr/lib/node_modules/x/dist/error.js:10:5)\n",
			"TypeError: fetch failed"},
		{"node's deprecation warning is noise",
			"(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.\n(Use `node --trace-deprecation ...` to show where the warning was created)\n",
			""},
		{"an HTTP status", "request to model server\nstatus: 503\n", "status: 503"},
		{"a 429 in words", "retrying\n429 Too Many Requests\nwaiting 2s\n", "429 Too Many Requests"},
		{"no error words: the last line that is not noise", "something odd happened\nLoaded cached credentials.\n", "something odd happened"},
		{"only a hint: the hint", "• Run 'qodo login' first\n", "• Run 'qodo login' first"},
		{"escape codes removed", "\x1b[31mError: bad model\x1b[0m\n", "Error: bad model"},
		{"a JSON error over several lines: its status, not its braces",
			"{\n  \"error\": {\n    \"message\": \"Rate limited by the server\",\n    \"code\": 429\n  }\n}\n",
			`"code": 429`},
		// qwen 0.15.10 and 0.24.4 stopped by a timeout's SIGTERM.
		{"a JSON error over several lines: its message, not its bare code",
			"{\n  \"error\": {\n    \"type\": \"FatalCancellationError\",\n    \"message\": \"Operation cancelled.\",\n    \"code\": 130\n  }\n}\n",
			"Operation cancelled."},
		{"a JSON message that states an error, unquoted",
			"{\n  \"error\": {\n    \"type\": \"AlreadyReportedError\",\n    \"message\": \"[API Error: 401 mock error 401]\",\n    \"code\": 1\n  }\n}\n",
			"[API Error: 401 mock error 401]"},
		{"JSON structure alone is noise", "  \"error\": {\n}\n", ""},
		{"a port number is not a status", "listening on 127.0.0.1:4010\nbye\n", "bye"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := stderrLine(tt.stderr); got != tt.want {
				t.Errorf("stderrLine(%q) = %q, want %q", tt.stderr, got, tt.want)
			}
		})
	}
}
