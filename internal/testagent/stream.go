package testagent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Tool is a tool call a streaming rule (Rule.Stream) reports: an
// assistant message with a tool_use block, then, unless Running, a user
// message with its tool_result, an error when Error.
type Tool struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Error bool            `json:"error"`
	// Running: no result follows; the tool still runs when the call ends.
	Running bool `json:"running"`
}

// streamer prints Claude Code's stream-json (--output-format stream-json
// --verbose; readme/clis.md#claude): a system init event, an assistant
// message per tool call with its usage, the tool's result as a user
// message, and at the end a result event with the reply and the usage
// summed. Each assistant message is 1,000 input and 100 output tokens
// and costs $0.001.
type streamer struct {
	w        *bufio.Writer
	messages int
	tools    int
	bytes    int64
}

func newStreamer(w io.Writer) *streamer {
	s := &streamer{w: bufio.NewWriterSize(w, 64<<10)}
	s.line(map[string]any{"type": "system", "subtype": "init", "session_id": "fake-session", "tools": []string{"Bash", "Edit", "Read"}})
	return s
}

func (s *streamer) line(v any) {
	b, _ := json.Marshal(v)
	n, _ := s.w.Write(append(b, '\n'))
	s.bytes += int64(n)
}

// tool reports one tool call; flush says to write it out at once.
func (s *streamer) tool(t Tool, flush bool) {
	s.messages++
	s.tools++
	id := fmt.Sprintf("toolu_%d", s.tools)
	input := t.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	s.line(map[string]any{"type": "assistant", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", s.messages), "type": "message", "role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": t.Name, "input": input}},
		"usage":   map[string]int{"input_tokens": 1000, "output_tokens": 100}}})
	if !t.Running {
		s.line(map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "is_error": t.Error, "content": "done"}}}})
	}
	if flush {
		_ = s.w.Flush()
	}
}

// flood reports Edit tool calls of a 4 KiB input until n bytes are
// printed: an agent streaming without end. Each line is built in one
// reused buffer, so that the agent's own memory stays small beside
// dtree's, which a benchmark measures (internal/testchart/benchstream).
func (s *streamer) flood(n int64) {
	input := `{"file_path":"big.go","new_string":"` + strings.Repeat("x", 4096) + `"}`
	var b []byte
	for s.bytes < n {
		s.messages++
		s.tools++
		b = fmt.Appendf(b[:0], `{"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant",`+
			`"content":[{"type":"tool_use","id":"toolu_%d","name":"Edit","input":%s}],"usage":{"input_tokens":1000,"output_tokens":100}}}`+"\n"+
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","is_error":false,"content":"done"}]}}`+"\n",
			s.messages, s.tools, input, s.tools)
		k, err := s.w.Write(b)
		s.bytes += int64(k)
		if err != nil {
			return
		}
	}
}

// result ends the stream with the reply.
func (s *streamer) result(reply string) {
	s.messages++
	s.line(map[string]any{"type": "assistant", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", s.messages), "type": "message", "role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": reply}},
		"usage":   map[string]int{"input_tokens": 1000, "output_tokens": 100}}})
	s.line(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": reply,
		"num_turns": s.messages, "duration_ms": 10, "total_cost_usd": float64(s.messages) * 0.001,
		"usage": map[string]int{"input_tokens": 1000 * s.messages, "output_tokens": 100 * s.messages}})
	_ = s.w.Flush()
}
