package replay

import (
	"encoding/json"
	"strings"
)

// Render turns a reply into what an agent would print. Shorthands:
// "ok" (completed, or validation passed), "fail: why" (not completed, or
// validation failed with why as its warning), "error: why" (the call
// fails: errText is set), "raw: text" (text printed exactly, however it
// reads: how answers.yaml records a reply that did not parse). A JSON
// object is printed as written; a decision's other replies are its
// answer; other text is printed as is, as an agent's prose would be.
func Render(reply string, decision, validation bool) (out, errText string) {
	t := strings.TrimSpace(reply)
	lower := strings.ToLower(t)
	switch {
	case strings.HasPrefix(lower, "raw:"):
		return strings.TrimPrefix(t[len("raw:"):], " "), ""
	case strings.HasPrefix(lower, "error:"):
		return "", strings.TrimSpace(t[len("error:"):])
	case strings.HasPrefix(t, "{"):
		return t, ""
	case decision && !validation:
		b, _ := json.Marshal(map[string]string{"answer": t})
		return string(b), ""
	case lower == "ok" && validation:
		return `{"fully_completed": true}`, ""
	case lower == "ok":
		return `{"completed": true}`, ""
	case strings.HasPrefix(lower, "fail:") && validation:
		b, _ := json.Marshal(map[string]any{"fully_completed": false, "should_retry": true,
			"warnings": []string{strings.TrimSpace(t[len("fail:"):])}})
		return string(b), ""
	case strings.HasPrefix(lower, "fail:"):
		b, _ := json.Marshal(map[string]any{"completed": false, "comments": []string{strings.TrimSpace(t[len("fail:"):])}})
		return string(b), ""
	}
	return reply, ""
}
