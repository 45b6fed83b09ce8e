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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _ := classify(tt.cli, tt.exit, tt.message, tt.stderr, tt.stdout)
			if got != tt.want {
				t.Errorf("classify(%q, %d, %q, %q, %q) = %q, want %q", tt.cli, tt.exit, tt.message, tt.stderr, tt.stdout, got, tt.want)
			}
		})
	}
}
