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
		c.prompt, c.parts, c.turn = s, []string{s}, 1
		return c, nil
	}
	var items []responsesItem
	json.Unmarshal(req.Input, &items) //nolint:errcheck // no items: no prompt
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Role == "user" {
			c.textOf(items[i].Content)
			break
		}
	}
	c.turn, c.results = conversation(items, responsesItem.model, responsesItem.call, responsesItem.results)
	return c, nil
}

// responsesItem is one item of a Responses request's input.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
}

// model says whether the item is of a model reply: an assistant message,
// its reasoning, or a tool call.
func (it responsesItem) model() bool {
	switch it.Type {
	case "function_call", "custom_tool_call", "local_shell_call", "reasoning", "web_search_call":
		return true
	}
	return it.Role == "assistant"
}

// call says whether the item is a tool call.
func (it responsesItem) call() bool {
	switch it.Type {
	case "function_call", "custom_tool_call", "local_shell_call":
		return true
	}
	return false
}

func (it responsesItem) results() []string {
	switch it.Type {
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		return []string{resultText(it.Output)}
	}
	return nil
}

// A reply's output is a message item (left out when the reply is only
// tool calls), then a function_call item for each call, its arguments as
// JSON text; streamed, the arguments arrive in
// response.function_call_arguments.delta events.
func (responses) reply(w http.ResponseWriter, c call, a answer) {
	u := a.usage
	var output []map[string]any
	if a.text != "" || len(a.tools) == 0 {
		output = append(output, map[string]any{"id": "msg_mock_" + a.id, "type": "message", "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": a.text, "annotations": []any{}}}})
	}
	for _, t := range a.tools {
		output = append(output, map[string]any{"id": "fc_mock_" + t.id, "type": "function_call", "status": "completed",
			"call_id": "call_mock_" + t.id, "name": t.name, "arguments": t.input})
	}
	resp := map[string]any{"id": "resp_mock_" + a.id, "object": "response", "created_at": 0, "status": "completed",
		"model": c.model, "output": output,
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
	send("response.created", map[string]any{"response": map[string]any{"id": "resp_mock_" + a.id, "object": "response",
		"created_at": 0, "status": "in_progress", "model": c.model, "output": []any{}}})
	for i, item := range output {
		id := item["id"]
		if item["type"] == "message" {
			send("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{
				"id": id, "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}})
			for _, d := range chunks(a.text) {
				send("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": d})
			}
		} else {
			args := item["arguments"].(string)
			send("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{
				"id": id, "type": "function_call", "status": "in_progress", "call_id": item["call_id"], "name": item["name"], "arguments": ""}})
			for _, d := range split(args) {
				send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": d})
			}
			send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": args})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
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

// chatCalls says whether an assistant message has tool_calls.
func chatCalls(m message) bool { return len(m.ToolCalls) > 0 }

// chatResults reads a "tool" message's content.
func chatResults(m message) []string {
	if m.Role != "tool" {
		return nil
	}
	return []string{resultText(m.Content)}
}

// A reply's message has the text as content (null when the reply is only
// tool calls) and a tool_calls entry for each call, its arguments as JSON
// text, finishing for "tool_calls"; streamed, each call's first delta
// carries its index, id and name and the later ones pieces of its
// arguments.
func (chat) reply(w http.ResponseWriter, c call, a answer) {
	u := a.usage
	finish := "stop"
	if len(a.tools) > 0 {
		finish = "tool_calls"
	}
	if !c.stream {
		msg := map[string]any{"role": "assistant", "content": a.text}
		if len(a.tools) > 0 {
			var calls []map[string]any
			for _, t := range a.tools {
				calls = append(calls, map[string]any{"id": "call_mock_" + t.id, "type": "function",
					"function": map[string]any{"name": t.name, "arguments": t.input}})
			}
			msg["tool_calls"] = calls
			if a.text == "" {
				msg["content"] = nil
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": "chatcmpl-mock-" + a.id, "object": "chat.completion", "created": 0,
			"model": c.model, "choices": []map[string]any{{"index": 0, "finish_reason": finish, "message": msg}},
			"usage": chatUsage(u)})
		return
	}
	e := startSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-mock-" + a.id, "object": "chat.completion.chunk", "created": 0, "model": c.model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	first := true
	send := func(delta map[string]any) {
		if first {
			delta["role"] = "assistant"
			first = false
		}
		e.send("", chunk(delta, nil))
	}
	if a.text != "" || len(a.tools) == 0 {
		for _, d := range chunks(a.text) {
			send(map[string]any{"content": d})
		}
	}
	for i, t := range a.tools {
		send(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": "call_mock_" + t.id, "type": "function",
			"function": map[string]any{"name": t.name, "arguments": ""}}}})
		for _, d := range split(t.input) {
			send(map[string]any{"tool_calls": []map[string]any{{"index": i, "function": map[string]any{"arguments": d}}}})
		}
	}
	e.send("", chunk(map[string]any{}, finish))
	// The usage chunk: sent always, as servers that honour
	// stream_options.include_usage do; clients that did not ask ignore it.
	e.send("", map[string]any{"id": "chatcmpl-mock-" + a.id, "object": "chat.completion.chunk", "created": 0, "model": c.model,
		"choices": []any{}, "usage": chatUsage(u)})
	e.raw("[DONE]")
}

func (chat) fail(w http.ResponseWriter, status int, msg, code string) {
	openaiFail(w, status, msg, code)
}
