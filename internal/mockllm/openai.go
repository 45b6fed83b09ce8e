package mockllm

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// openaiErrors are OpenAI's error types by HTTP status.
var openaiErrors = map[int]string{
	400: "invalid_request_error", 401: "invalid_request_error", 403: "permission_error",
	404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error", 503: "server_error",
}

var openaiCodes = map[int]string{401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error"}

func openaiFail(w http.ResponseWriter, status int, msg, code string) {
	typ, ok := openaiErrors[status]
	if !ok {
		typ = "server_error"
	}
	var c any
	if oc, ok := openaiCodes[status]; ok {
		c = oc
	}
	if code != "" {
		typ, c = code, code
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
}

// responses is OpenAI's Responses API (codex, wire_api = "responses").
type responses struct{}

func (responses) parse(_ *http.Request, body []byte) (call, error) {
	var req struct {
		Model  string          `json:"model"`
		Stream bool            `json:"stream"`
		Input  json.RawMessage `json:"input"`
	}
	c := call{api: Responses}
	if err := json.Unmarshal(body, &req); err != nil {
		return c, fmt.Errorf("responses request is not JSON: %w", err)
	}
	c.model, c.stream = req.Model, req.Stream
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		c.prompt, c.parts = s, []string{s}
		return c, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(req.Input, &items) //nolint:errcheck // no items: no prompt
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Role == "user" {
			c.textOf(items[i].Content)
			break
		}
	}
	return c, nil
}

func (responses) reply(w http.ResponseWriter, c call, text string, u Usage) {
	item := map[string]any{"id": "msg_mock", "type": "message", "role": "assistant", "status": "completed",
		"content": []map[string]any{{"type": "output_text", "text": text, "annotations": []any{}}}}
	resp := map[string]any{"id": "resp_mock", "object": "response", "created_at": 0, "status": "completed",
		"model": c.model, "output": []any{item},
		"usage": map[string]any{
			"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
			"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": u.Input + u.Output,
		}}
	if !c.stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	e := startSSE(w)
	seq := 0
	send := func(typ string, v map[string]any) {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		e.send(typ, v)
	}
	send("response.created", map[string]any{"response": map[string]any{"id": "resp_mock", "object": "response",
		"created_at": 0, "status": "in_progress", "model": c.model, "output": []any{}}})
	send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
		"id": "msg_mock", "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}})
	for _, d := range chunks(text) {
		send("response.output_text.delta", map[string]any{"item_id": "msg_mock", "output_index": 0, "content_index": 0, "delta": d})
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	send("response.completed", map[string]any{"response": resp})
}

func (responses) fail(w http.ResponseWriter, status int, msg, code string) {
	openaiFail(w, status, msg, code)
}

// chat is OpenAI's Chat Completions API (copilot, qwen, opencode's
// openai-compatible provider).
type chat struct{}

func (chat) parse(_ *http.Request, body []byte) (call, error) {
	return parseMessages(Chat, "chat", body)
}

func chatUsage(u Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}}
}

func (chat) reply(w http.ResponseWriter, c call, text string, u Usage) {
	if !c.stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": "chatcmpl-mock", "object": "chat.completion", "created": 0,
			"model": c.model, "choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": text}}},
			"usage": chatUsage(u)})
		return
	}
	e := startSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": c.model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	for i, d := range chunks(text) {
		delta := map[string]any{"content": d}
		if i == 0 {
			delta["role"] = "assistant"
		}
		e.send("", chunk(delta, nil))
	}
	e.send("", chunk(map[string]any{}, "stop"))
	// The usage chunk: sent always, as servers that honour
	// stream_options.include_usage do; clients that did not ask ignore it.
	e.send("", map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": c.model,
		"choices": []any{}, "usage": chatUsage(u)})
	e.raw("[DONE]")
}

func (chat) fail(w http.ResponseWriter, status int, msg, code string) {
	openaiFail(w, status, msg, code)
}
