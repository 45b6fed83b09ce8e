package mockllm

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func start(t *testing.T, rules ...Rule) *Server {
	t.Helper()
	s, err := Start(rules)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads an SSE body into its data payloads, decoded, with the
// event name (or the payload's "type") in "_event"; "[DONE]" as a string.
func events(t *testing.T, body io.Reader) []any {
	t.Helper()
	var out []any
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			if data == "[DONE]" {
				out = append(out, data)
				continue
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(data), &m), data)
			if name != "" {
				m["_event"] = name
			}
			out = append(out, m)
			name = ""
		}
	}
	return out
}

// dig follows a path of map keys and slice indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k < 0 {
				k += len(s)
			}
			if k < 0 || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

// streamed rebuilds a streamed reply's text and final usage, as a client
// of each protocol does.
func streamed(t *testing.T, api API, evs []any) (text string, usage map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, e := range evs {
		switch api {
		case Anthropic:
			switch dig(e, "type") {
			case "content_block_delta":
				if d, ok := dig(e, "delta", "text").(string); ok {
					b.WriteString(d)
				}
			case "message_delta":
				usage = dig(e, "usage").(map[string]any)
			}
		case Responses:
			switch dig(e, "type") {
			case "response.output_text.delta":
				b.WriteString(dig(e, "delta").(string))
			case "response.completed":
				usage = dig(e, "response", "usage").(map[string]any)
			}
		case Chat:
			if d, ok := dig(e, "choices", 0, "delta", "content").(string); ok {
				b.WriteString(d)
			}
			if u, ok := dig(e, "usage").(map[string]any); ok {
				usage = u
			}
		case Gemini:
			if d, ok := dig(e, "candidates", 0, "content", "parts", 0, "text").(string); ok {
				b.WriteString(d)
			}
			if u, ok := dig(e, "usageMetadata").(map[string]any); ok {
				usage = u
			}
		}
	}
	return b.String(), usage
}

var usage = Usage{Input: 1200, Output: 34, Cached: 1000}

// protocols: one request of each API, and where its text and usage are.
var protocols = []struct {
	api        API
	path       string
	body       func(prompt string, stream bool) string
	text       []any // path of the text in a non-streamed reply
	usage      []any // path of the usage in a non-streamed reply
	wantUsage  map[string]any
	errorShape func(t *testing.T, body map[string]any, status int, msg string)
}{{
	api:  Anthropic,
	path: "/v1/messages?beta=true",
	body: func(p string, stream bool) string {
		return `{"model":"claude-x","stream":` + jsonOf(stream) + `,"messages":[{"role":"user","content":"earlier"},{"role":"assistant","content":"ok"},` +
			`{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":` + jsonOf(p) + `}]}]}`
	},
	text:      []any{"content", 0, "text"},
	usage:     []any{"usage"},
	wantUsage: map[string]any{"input_tokens": 200.0, "cache_read_input_tokens": 1000.0, "cache_creation_input_tokens": 0.0, "output_tokens": 34.0},
	errorShape: func(t *testing.T, body map[string]any, status int, msg string) {
		assert.Equal(t, "error", body["type"])
		assert.Equal(t, map[int]string{401: "authentication_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[status], dig(body, "error", "type"))
		assert.Equal(t, msg, dig(body, "error", "message"))
	},
}, {
	api:  Responses,
	path: "/v1/responses",
	body: func(p string, stream bool) string {
		return `{"model":"gpt-x","stream":` + jsonOf(stream) + `,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context/>"}]},` +
			`{"type":"message","role":"user","content":[{"type":"input_text","text":` + jsonOf(p) + `}]}]}`
	},
	text:      []any{"output", 0, "content", 0, "text"},
	usage:     []any{"usage"},
	wantUsage: map[string]any{"input_tokens": 1200.0, "input_tokens_details": map[string]any{"cached_tokens": 1000.0}, "output_tokens": 34.0, "output_tokens_details": map[string]any{"reasoning_tokens": 0.0}, "total_tokens": 1234.0},
	errorShape: func(t *testing.T, body map[string]any, status int, msg string) {
		assert.Equal(t, msg, dig(body, "error", "message"))
		assert.NotEmpty(t, dig(body, "error", "type"))
	},
}, {
	api:  Chat,
	path: "/v1/chat/completions",
	body: func(p string, stream bool) string {
		return `{"model":"mock-model","stream":` + jsonOf(stream) + `,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":` + jsonOf(p) + `}]}`
	},
	text:      []any{"choices", 0, "message", "content"},
	usage:     []any{"usage"},
	wantUsage: map[string]any{"prompt_tokens": 1200.0, "completion_tokens": 34.0, "total_tokens": 1234.0, "prompt_tokens_details": map[string]any{"cached_tokens": 1000.0}},
	errorShape: func(t *testing.T, body map[string]any, status int, msg string) {
		assert.Equal(t, msg, dig(body, "error", "message"))
	},
}, {
	api:  Gemini,
	path: "/v1beta/models/gemini-x:generateContent",
	body: func(p string, _ bool) string {
		return `{"contents":[{"role":"user","parts":[{"text":` + jsonOf(p) + `}]}]}`
	},
	text:      []any{"candidates", 0, "content", "parts", 0, "text"},
	usage:     []any{"usageMetadata"},
	wantUsage: map[string]any{"promptTokenCount": 1200.0, "candidatesTokenCount": 34.0, "totalTokenCount": 1234.0, "cachedContentTokenCount": 1000.0},
	errorShape: func(t *testing.T, body map[string]any, status int, msg string) {
		assert.Equal(t, float64(status), dig(body, "error", "code"))
		assert.Equal(t, msg, dig(body, "error", "message"))
		assert.Equal(t, map[int]string{401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 529: "UNKNOWN"}[status], dig(body, "error", "status"))
	},
}}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// geminiPath is the streaming form of a Gemini path.
func streamPath(api API, path string) string {
	if api == Gemini {
		return strings.Replace(path, ":generateContent", ":streamGenerateContent?alt=sse", 1)
	}
	return path
}

func TestReplies(t *testing.T) {
	t.Parallel()
	prompt := "-starts with a dash, \"quotes\", ünïcode\nand a second line"
	reply := `Done. {"completed": true, "comments": ["ok"]}`
	for _, p := range protocols {
		for _, stream := range []bool{false, true} {
			t.Run(string(p.api)+map[bool]string{false: "", true: "/stream"}[stream], func(t *testing.T) {
				t.Parallel()
				s := start(t, Rule{Match: "other prompt", Reply: "wrong"}, Rule{Match: "starts with a dash", Reply: reply, Usage: usage})
				path := p.path
				if stream {
					path = streamPath(p.api, path)
				}
				body := p.body(prompt, stream)
				resp := post(t, s.URL+path, body)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				if stream {
					assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
					evs := events(t, resp.Body)
					text, u := streamed(t, p.api, evs)
					assert.Equal(t, reply, text)
					assert.Equal(t, p.wantUsage, u)
					if p.api == Chat {
						assert.Equal(t, "[DONE]", evs[len(evs)-1])
					}
					if p.api == Anthropic {
						var names []any
						for _, e := range evs {
							names = append(names, dig(e, "_event"))
						}
						assert.Equal(t, []any{"message_start", "content_block_start", "content_block_delta", "content_block_delta",
							"content_block_delta", "content_block_stop", "message_delta", "message_stop"}, names)
					}
				} else {
					var m map[string]any
					require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
					assert.Equal(t, reply, dig(m, p.text...))
					assert.Equal(t, p.wantUsage, dig(m, p.usage...))
				}
				reqs := s.Requests()
				require.Len(t, reqs, 1)
				r := reqs[0]
				assert.Equal(t, p.api, r.API)
				assert.Equal(t, stream, r.Stream)
				assert.Equal(t, path, r.Path)
				assert.Equal(t, 1, r.Rule)
				assert.Equal(t, usage, r.Usage)
				assert.Equal(t, body, string(r.Body))
				assert.Equal(t, prompt, r.Parts[len(r.Parts)-1], "the prompt arrives byte for byte as the last part")
				assert.True(t, strings.HasSuffix(r.Prompt, prompt))
				assert.NotContains(t, r.Prompt, "earlier", "only the last user message is the prompt")
			})
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		for _, status := range []int{401, 429, 500, 529} {
			t.Run(string(p.api)+"/"+jsonOf(status), func(t *testing.T) {
				t.Parallel()
				s := start(t, Rule{Status: status, Message: "scripted failure"})
				resp := post(t, s.URL+p.path, p.body("anything", false))
				assert.Equal(t, status, resp.StatusCode)
				var m map[string]any
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
				p.errorShape(t, m, status, "scripted failure")
				assert.Equal(t, status, s.Requests()[0].Status)
				assert.Equal(t, Usage{}, s.Requests()[0].Usage)
			})
		}
	}
}

// TestErrorCodeAndHeaders: a rule's Code replaces the error's type (and
// OpenAI's code: insufficient_quota), and its Headers go with the answer,
// as a spent usage limit is told from a rate limit.
func TestErrorCodeAndHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, body string
		want       string // the error as JSON, in part
	}{
		{"/v1/messages", `{"messages":[{"role":"user","content":"hi"}]}`, `"type":"billing_error"`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, `"code":"billing_error"`},
		{"/v1/responses", `{"input":"hi"}`, `"type":"billing_error"`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			s := start(t, Rule{Status: 429, Message: "spent", Code: "billing_error", Headers: map[string]string{"x-limit": "rejected"}})
			resp := post(t, s.URL+tt.path, tt.body)
			assert.Equal(t, 429, resp.StatusCode)
			assert.Equal(t, "rejected", resp.Header.Get("x-limit"))
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Contains(t, string(b), tt.want)
		})
	}
}

func TestUnmatchedIsA500NamingThePrompt(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(string(p.api), func(t *testing.T) {
			t.Parallel()
			s := start(t, Rule{Match: "something else", Reply: "no"})
			resp := post(t, s.URL+p.path, p.body("the unmatched prompt", false))
			assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
			b, _ := io.ReadAll(resp.Body)
			assert.Contains(t, string(b), "no rule matches")
			assert.Contains(t, string(b), "the unmatched prompt")
			assert.Equal(t, -1, s.Requests()[0].Rule)
		})
	}
}

func TestRulesInOrderWithTimesAndAPI(t *testing.T) {
	t.Parallel()
	s := start(t,
		Rule{API: Chat, Reply: "chat only"},
		Rule{Body: `"responseSchema"`, Reply: "router"},
		Rule{Match: "task", Reply: "first", Times: 1},
		Rule{Match: "task", Reply: "later"},
	)
	ask := func() string {
		resp := post(t, s.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"the task"}]}`)
		var m map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		return dig(m, "content", 0, "text").(string)
	}
	assert.Equal(t, "first", ask())
	assert.Equal(t, "later", ask())
	assert.Equal(t, "later", ask())
	s.SetRules([]Rule{{Match: "task", Reply: "reset", Times: 1}})
	assert.Equal(t, "reset", ask())
	assert.Len(t, s.Requests(), 4)
	s.SetRules([]Rule{{Body: `"responseSchema"`, Reply: "router"}, {Reply: "main"}})
	resp := post(t, s.URL+"/v1beta/models/m:generateContent", `{"contents":[{"role":"user","parts":[{"text":"the task"}]}],"generationConfig":{"responseSchema":{}}}`)
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	assert.Equal(t, "router", dig(m, "candidates", 0, "content", "parts", 0, "text"), "a rule's Body tells two calls with one prompt apart")
	assert.Equal(t, "main", ask())
}

func TestHangUntilTheClientGoes(t *testing.T) {
	t.Parallel()
	s := start(t, Rule{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/responses", strings.NewReader(`{"model":"m","input":"hi","stream":true}`))
	began := time.Now()
	_, err := http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(began), 5*time.Second)
	require.Len(t, s.Requests(), 1)
	assert.Equal(t, 0, s.Requests()[0].Status, "a hang answers nothing")
}

func TestCloseReleasesAHang(t *testing.T) {
	t.Parallel()
	s, err := Start([]Rule{{Hang: true}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(`{"messages":[]}`))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return len(s.Requests()) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, s.Close())
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close left the hanging request open")
	}
}

func TestOtherEndpoints(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, c := range []struct {
		method, path string
		status       int
		want         string
	}{
		{http.MethodHead, "/", 200, ""},
		{http.MethodGet, "/v1/models", 200, `"mock-model"`},
		{http.MethodPost, "/v1/messages/count_tokens", 200, `"input_tokens"`},
		{http.MethodPost, "/v1beta/models/gemini-x:countTokens", 200, `"totalTokens"`},
		{http.MethodGet, "/v2/nothing", 404, "no such endpoint: GET /v2/nothing"},
	} {
		req, _ := http.NewRequest(c.method, s.URL+c.path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, c.path)
		assert.Contains(t, string(b), c.want, c.path)
	}
	assert.Len(t, s.Requests(), 5, "every request is recorded")
}

func TestListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	s := start(t)
	assert.True(t, strings.HasPrefix(s.URL, "http://127.0.0.1:"), s.URL)
}

func TestReadScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/s.yaml"
	require.NoError(t, writeFile(path, "rules:\n  - match: hi\n    reply: there\n    usage: {input: 5, output: 2, cached: 1}\n    times: 2\n  - status: 429\n    message: slow\n  - meet: fork\n    meet_count: 3\n    meet_wait: 90s\n    delay: 2s\n"))
	rules, err := ReadScript(path)
	require.NoError(t, err)
	assert.Equal(t, []Rule{{Match: "hi", Reply: "there", Usage: Usage{5, 2, 1}, Times: 2}, {Status: 429, Message: "slow"}, {Meet: "fork", MeetCount: 3, MeetWait: 90 * time.Second, Delay: 2 * time.Second}}, rules)
	require.NoError(t, writeFile(path, "rules:\n  - mach: hi\n"))
	_, err = ReadScript(path)
	assert.ErrorContains(t, err, "mach")
}

// A Meet holds each answer until every request of the meeting arrived:
// two held requests overlapped, and each record says so; a request
// whose partner never comes is answered after MeetWait, not met.
func TestMeetHoldsAnswersUntilAllArrived(t *testing.T) {
	t.Parallel()
	s := start(t,
		Rule{Match: "left", Reply: "L", Meet: "pair", MeetWait: 20 * time.Second},
		Rule{Match: "right", Reply: "R", Meet: "pair", MeetWait: 20 * time.Second},
		Rule{Match: "alone", Reply: "A", Meet: "three", MeetCount: 3, MeetWait: 300 * time.Millisecond},
	)
	ask := func(prompt string) string {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"`+prompt+`"}]}`))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			return err.Error()
		}
		text, _ := dig(m, "content", 0, "text").(string)
		return text
	}
	left := make(chan string, 1)
	go func() { left <- ask("left") }()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.meets["pair"] != nil && s.meets["pair"].arrived == 1
	}, 5*time.Second, 5*time.Millisecond, "the first request arrived")
	select {
	case got := <-left:
		t.Fatalf("answered %q before its partner arrived", got)
	case <-time.After(100 * time.Millisecond):
	}
	assert.Equal(t, "R", ask("right"))
	assert.Equal(t, "L", <-left)
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	for _, q := range reqs {
		assert.True(t, q.Met, "%s met", q.Prompt)
	}
	first, second := reqs[0], reqs[1]
	if first.Arrived.After(second.Arrived) {
		first, second = second, first
	}
	assert.False(t, second.Arrived.After(first.Answered), "both arrived before either was answered")

	began := time.Now()
	assert.Equal(t, "A", ask("alone"), "answered after MeetWait")
	assert.GreaterOrEqual(t, time.Since(began), 300*time.Millisecond)
	assert.False(t, s.Requests()[2].Met, "a meeting not complete is not met")
}

// A Delay holds the answer that long, as a model takes its time.
func TestDelay(t *testing.T) {
	t.Parallel()
	s := start(t, Rule{Reply: "late", Delay: 300 * time.Millisecond})
	began := time.Now()
	resp := post(t, s.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	assert.Equal(t, "late", dig(m, "content", 0, "text"))
	assert.GreaterOrEqual(t, time.Since(began), 300*time.Millisecond)
	q := s.Requests()[0]
	assert.GreaterOrEqual(t, q.Answered.Sub(q.Arrived), 300*time.Millisecond, "answered after the delay")
}
