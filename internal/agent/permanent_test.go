package agent

import "testing"

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
