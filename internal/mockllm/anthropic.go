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
		Model    string    `json:"model"`
		Stream   bool      `json:"stream"`
		Messages []message `json:"messages"`
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
	results, calls := anthropicResults, anthropicCalls
	if api == Chat {
		results, calls = chatResults, chatCalls
	}
	c.turn, c.results = conversation(req.Messages, func(m message) bool { return m.Role == "assistant" }, calls, results)
	return c, nil
}

// message is one message of the Messages API or Chat Completions.
type message struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []any           `json:"tool_calls"` // Chat's
}

// anthropicCalls says whether an assistant message has tool_use blocks.
func anthropicCalls(m message) bool {
	var blocks []struct {
		Type string `json:"type"`
	}
	json.Unmarshal(m.Content, &blocks) //nolint:errcheck // a string: no blocks
	for _, b := range blocks {
		if b.Type == "tool_use" {
			return true
		}
	}
	return false
}

// anthropicResults reads a user message's tool_result blocks.
func anthropicResults(m message) []string {
	var blocks []struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(m.Content, &blocks) != nil {
		return nil
	}
	var out []string
	for _, b := range blocks {
		if b.Type == "tool_result" {
			out = append(out, resultText(b.Content))
		}
	}
	return out
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

// A reply's content is a text block (left out when the reply is only
// tool calls), then a tool_use block for each call; it stops for
// "tool_use" when it has any. Streamed, a tool_use block starts with an
// empty input and its JSON arrives in input_json_delta pieces.
func (anthropic) reply(w http.ResponseWriter, c call, a answer) {
	msg := map[string]any{
		"id": "msg_mock_" + a.id, "type": "message", "role": "assistant", "model": c.model,
		"stop_reason": nil, "stop_sequence": nil,
	}
	stop := "end_turn"
	if len(a.tools) > 0 {
		stop = "tool_use"
	}
	withText := a.text != "" || len(a.tools) == 0
	if !c.stream {
		var content []map[string]any
		if withText {
			content = append(content, map[string]any{"type": "text", "text": a.text})
		}
		for _, t := range a.tools {
			content = append(content, map[string]any{"type": "tool_use", "id": "toolu_mock_" + t.id, "name": t.name, "input": t.object()})
		}
		msg["content"] = content
		msg["stop_reason"] = stop
		msg["usage"] = anthropicUsage(a.usage)
		writeJSON(w, http.StatusOK, msg)
		return
	}
	start := anthropicUsage(a.usage)
	start["output_tokens"] = 1
	msg["content"] = []any{}
	msg["usage"] = start
	e := startSSE(w)
	e.send("message_start", map[string]any{"type": "message_start", "message": msg})
	index := 0
	if withText {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, d := range chunks(a.text) {
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": d}})
		}
		e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, t := range a.tools {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_mock_" + t.id, "name": t.name, "input": map[string]any{}}})
		for _, d := range split(t.input) {
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": d}})
		}
		e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": anthropicUsage(a.usage)})
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
