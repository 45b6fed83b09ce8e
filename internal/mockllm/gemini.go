package mockllm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// gemini is Google's generateContent API
// (POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse).
type gemini struct{}

func (gemini) parse(r *http.Request, body []byte) (call, error) {
	var req struct {
		Contents []geminiContent `json:"contents"`
	}
	c := call{api: Gemini}
	path := r.URL.Path
	c.stream = strings.HasSuffix(path, ":streamGenerateContent")
	if i := strings.LastIndex(path, "/models/"); i >= 0 {
		c.model = strings.TrimSuffix(strings.TrimSuffix(path[i+len("/models/"):], ":streamGenerateContent"), ":generateContent")
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return c, fmt.Errorf("generateContent request is not JSON: %w", err)
	}
	for i := len(req.Contents) - 1; i >= 0; i-- {
		if req.Contents[i].Role == "user" || req.Contents[i].Role == "" {
			c.textOf(req.Contents[i].Parts)
			break
		}
	}
	c.turn, c.results = conversation(req.Contents, func(m geminiContent) bool { return m.Role == "model" }, geminiContent.calls, geminiContent.results)
	return c, nil
}

// geminiContent is one content of a generateContent request.
type geminiContent struct {
	Role  string          `json:"role"`
	Parts json.RawMessage `json:"parts"`
}

// calls says whether the content has functionCall parts.
func (m geminiContent) calls() bool {
	var parts []struct {
		FunctionCall json.RawMessage `json:"functionCall"`
	}
	json.Unmarshal(m.Parts, &parts) //nolint:errcheck // no parts: no calls
	for _, p := range parts {
		if len(p.FunctionCall) > 0 {
			return true
		}
	}
	return false
}

// results reads the content's functionResponse parts: each its
// response's "output" when that is text (gemini's shell tool sends
// {"output": …}), else the JSON text of its response.
func (m geminiContent) results() []string {
	var parts []struct {
		FunctionResponse *struct {
			Response json.RawMessage `json:"response"`
		} `json:"functionResponse"`
	}
	if json.Unmarshal(m.Parts, &parts) != nil {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p.FunctionResponse == nil {
			continue
		}
		var o struct {
			Output *string `json:"output"`
		}
		if json.Unmarshal(p.FunctionResponse.Response, &o) == nil && o.Output != nil {
			out = append(out, *o.Output)
		} else {
			out = append(out, resultText(p.FunctionResponse.Response))
		}
	}
	return out
}

// geminiCalls are the functionCall parts of a reply's tool calls, each
// whole, args as an object (Gemini streams a call in one chunk).
func geminiCalls(tools []toolUse) []map[string]any {
	var parts []map[string]any
	for _, t := range tools {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": t.name, "args": t.object()}})
	}
	return parts
}

func geminiResponse(c call, id string, parts []map[string]any, finish bool, u *Usage) map[string]any {
	cand := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": parts}}
	if finish {
		cand["finishReason"] = "STOP"
	}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": c.model, "responseId": "mock-" + id}
	if u != nil {
		resp["usageMetadata"] = map[string]any{"promptTokenCount": u.Input, "candidatesTokenCount": u.Output,
			"totalTokenCount": u.Input + u.Output, "cachedContentTokenCount": u.Cached}
	}
	return resp
}

// A reply's parts are its text (left out when the reply is only tool
// calls), then a functionCall part for each call; streamed, the text
// arrives in pieces and the calls whole in the last chunk, which has the
// finishReason and the usage.
func (gemini) reply(w http.ResponseWriter, c call, a answer) {
	u := a.usage
	withText := a.text != "" || len(a.tools) == 0
	if !c.stream {
		var parts []map[string]any
		if withText {
			parts = append(parts, map[string]any{"text": a.text})
		}
		writeJSON(w, http.StatusOK, geminiResponse(c, a.id, append(parts, geminiCalls(a.tools)...), true, &u))
		return
	}
	e := startSSE(w)
	var msgs [][]map[string]any
	if withText {
		for _, d := range chunks(a.text) {
			msgs = append(msgs, []map[string]any{{"text": d}})
		}
	}
	if len(a.tools) > 0 {
		msgs = append(msgs, geminiCalls(a.tools))
	}
	for i, parts := range msgs {
		last := i == len(msgs)-1
		var usage *Usage
		if last {
			usage = &u
		}
		e.send("", geminiResponse(c, a.id, parts, last, usage))
	}
}

// geminiStatuses are Google's status names by HTTP status.
var geminiStatuses = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

func (gemini) fail(w http.ResponseWriter, status int, msg, _ string) {
	st, ok := geminiStatuses[status]
	if !ok {
		st = "UNKNOWN"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}
