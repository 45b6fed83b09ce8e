package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// gemini prints its JSON error after stack traces that have objects of
// their own: the message is that of the last JSON object with an "error".
func TestGeminiStderrError(t *testing.T) {
	t.Parallel()
	envelope := func(code, msg string) string {
		return "{\n  \"session_id\": \"s\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": " + msg + ",\n    \"code\": " + code + "\n  }\n}\n"
	}
	trace := "Error when talking to Gemini API _ApiError: {\"error\":{\"code\":500,\"message\":\"earlier\"}}\n    at f (file:///x.js:1:2)\n    at async g (file:///x.js:3:4) {\n  status: 429\n}\n"
	tests := []struct {
		name, stderr, want string
	}{
		{name: "none", stderr: "Loaded cached credentials.\n", want: ""},
		{name: "only a JavaScript object", stderr: "at f {\n  status: 429\n}\n", want: ""},
		{name: "the API's error as JSON text",
			stderr: trace + envelope("429", `"{\"error\":{\"code\":429,\"message\":\"Resource has been exhausted (e.g. check quota).\",\"status\":\"RESOURCE_EXHAUSTED\"}}"`),
			want:   "Resource has been exhausted (e.g. check quota)."},
		{name: "a plain message", stderr: trace + envelope("500", `"Internal error"`), want: "Internal error"},
		{name: "a code the exit status does not explain", stderr: envelope("418", `"I'm a teapot"`), want: "HTTP 418: I'm a teapot"},
		{name: "a known code without a message", stderr: envelope("429", `""`), want: "rate limited (HTTP 429)"},
		{name: "gemini's own exit code is no HTTP status", stderr: envelope("41", `"Please set an Auth method"`), want: "Please set an Auth method"},
		{name: "the API error alone", stderr: "noise\n" + `{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}`,
			want: "Request contains an invalid argument."},
		{name: "an unbalanced brace before it", stderr: "expected { here\n" + envelope("500", `"boom {"`), want: "boom {"},
		{name: "the API error pretty-printed after a trace",
			stderr: trace + "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Quota exceeded for quota metric 'Generate Content API requests per minute'\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n",
			want:   "Quota exceeded for quota metric 'Generate Content API requests per minute'"},
		{name: "an error string", stderr: `{"error": "quota exceeded"}`, want: "quota exceeded"},
		{name: "cut off", stderr: "{\n  \"error\": {\n    \"message\": \"x\"", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, geminiStderrError(tt.stderr))
		})
	}
}

// Gemini exits with the HTTP status of the API error it gave up on, cut to
// a byte; those statuses are explained like its own.
func TestGeminiExits(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "rate limited (HTTP 429)", geminiExits[173])
	assert.Equal(t, "server error (HTTP 500)", geminiExits[244])
	assert.Equal(t, "bad request (HTTP 400)", geminiExits[144])
	assert.Equal(t, "the folder is not trusted", geminiExits[55])
	assert.Contains(t, geminiExits[41], "authentication failed")
}

// A failed API call's status leads the message unless the message starts
// with it.
func TestAPIStatus(t *testing.T) {
	t.Parallel()
	n := func(i int64) *int64 { return &i }
	assert.Equal(t, "API error 401: Invalid API key · Please run /login", apiStatus(n(401), "Invalid API key · Please run /login"))
	assert.Equal(t, "API Error: 500 boom", apiStatus(n(500), "API Error: 500 boom"))
	assert.Equal(t, "API error 529", apiStatus(n(529), ""))
	assert.Equal(t, "no status", apiStatus(nil, "no status"))
	assert.Equal(t, "zero", apiStatus(n(0), "zero"))
}
