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
		Contents []struct {
			Role  string          `json:"role"`
			Parts json.RawMessage `json:"parts"`
		} `json:"contents"`
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
	return c, nil
}

func geminiResponse(c call, text string, finish bool, u *Usage) map[string]any {
	cand := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": []map[string]any{{"text": text}}}}
	if finish {
		cand["finishReason"] = "STOP"
	}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": c.model, "responseId": "mock"}
	if u != nil {
		resp["usageMetadata"] = map[string]any{"promptTokenCount": u.Input, "candidatesTokenCount": u.Output,
			"totalTokenCount": u.Input + u.Output, "cachedContentTokenCount": u.Cached}
	}
	return resp
}

func (gemini) reply(w http.ResponseWriter, c call, text string, u Usage) {
	if !c.stream {
		writeJSON(w, http.StatusOK, geminiResponse(c, text, true, &u))
		return
	}
	e := startSSE(w)
	parts := chunks(text)
	for i, d := range parts {
		last := i == len(parts)-1
		var usage *Usage
		if last {
			usage = &u
		}
		e.send("", geminiResponse(c, d, last, usage))
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
