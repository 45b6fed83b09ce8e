package mockllm

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropic is the Messages API (claude calls POST /v1/messages?beta=true).
type anthropic struct{}

func (anthropic) parse(_ *http.Request, body []byte) (call, error) {
	return parseMessages(Anthropic, "messages", body)
}

// parseMessages reads the request both the Messages API and Chat
// Completions send: a model, a stream flag and a list of messages, the
// prompt being the last user message.
func parseMessages(api API, what string, body []byte) (call, error) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	c := call{api: api}
	if err := json.Unmarshal(body, &req); err != nil {
		return c, fmt.Errorf("%s request is not JSON: %w", what, err)
	}
	c.model, c.stream = req.Model, req.Stream
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			c.textOf(req.Messages[i].Content)
			break
		}
	}
	return c, nil
}

// anthropicUsage splits Usage as Anthropic does: input_tokens leaves the
// cache reads out.
func anthropicUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.Input - u.Cached,
		"cache_read_input_tokens":     u.Cached,
		"cache_creation_input_tokens": 0,
		"output_tokens":               u.Output,
	}
}

func (anthropic) reply(w http.ResponseWriter, c call, text string, u Usage) {
	msg := map[string]any{
		"id": "msg_mock", "type": "message", "role": "assistant", "model": c.model,
		"stop_reason": nil, "stop_sequence": nil,
	}
	if !c.stream {
		msg["content"] = []map[string]any{{"type": "text", "text": text}}
		msg["stop_reason"] = "end_turn"
		msg["usage"] = anthropicUsage(u)
		writeJSON(w, http.StatusOK, msg)
		return
	}
	start := anthropicUsage(u)
	start["output_tokens"] = 1
	msg["content"] = []any{}
	msg["usage"] = start
	e := startSSE(w)
	e.send("message_start", map[string]any{"type": "message_start", "message": msg})
	e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "text", "text": ""}})
	for _, d := range chunks(text) {
		e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": d}})
	}
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": anthropicUsage(u)})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicErrors are Anthropic's error types by HTTP status.
var anthropicErrors = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
	404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
	500: "api_error", 529: "overloaded_error",
}

func (anthropic) fail(w http.ResponseWriter, status int, msg, code string) {
	typ, ok := anthropicErrors[status]
	if !ok {
		typ = "api_error"
	}
	if code != "" {
		typ = code
	}
	w.Header().Set("request-id", "req_mock")
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}
