package mockllm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// called is a tool call as a client rebuilds it: its name and its input,
// decoded.
type called struct {
	Name  string
	Input map[string]any
}

func decodeInput(t *testing.T, v any) map[string]any {
	t.Helper()
	var m map[string]any
	switch x := v.(type) {
	case string:
		require.NoError(t, json.Unmarshal([]byte(x), &m), x)
	case map[string]any:
		m = x
	}
	return m
}

// toolCalls rebuilds the tool calls of a streamed reply as each
// protocol's client does, and says why the model stopped.
func streamedCalls(t *testing.T, api API, evs []any) (calls []called, stop any) {
	t.Helper()
	args := map[float64]*strings.Builder{}
	names := map[float64]string{}
	var order []float64
	begin := func(i float64, name string) {
		names[i] = name
		args[i] = &strings.Builder{}
		order = append(order, i)
	}
	for _, e := range evs {
		switch api {
		case Anthropic:
			switch dig(e, "type") {
			case "content_block_start":
				if dig(e, "content_block", "type") == "tool_use" {
					assert.NotEmpty(t, dig(e, "content_block", "id"))
					begin(dig(e, "index").(float64), dig(e, "content_block", "name").(string))
				}
			case "content_block_delta":
				if dig(e, "delta", "type") == "input_json_delta" {
					args[dig(e, "index").(float64)].WriteString(dig(e, "delta", "partial_json").(string))
				}
			case "message_delta":
				stop = dig(e, "delta", "stop_reason")
			}
		case Responses:
			switch dig(e, "type") {
			case "response.output_item.added":
				if dig(e, "item", "type") == "function_call" {
					assert.NotEmpty(t, dig(e, "item", "call_id"))
					begin(dig(e, "output_index").(float64), dig(e, "item", "name").(string))
				}
			case "response.function_call_arguments.delta":
				args[dig(e, "output_index").(float64)].WriteString(dig(e, "delta").(string))
			case "response.function_call_arguments.done":
				i := dig(e, "output_index").(float64)
				assert.Equal(t, args[i].String(), dig(e, "arguments"))
			case "response.completed":
				stop = dig(e, "response", "output", -1, "type")
			}
		case Chat:
			if tcs, ok := dig(e, "choices", 0, "delta", "tool_calls").([]any); ok {
				for _, tc := range tcs {
					i := dig(tc, "index").(float64)
					if name, ok := dig(tc, "function", "name").(string); ok {
						assert.NotEmpty(t, dig(tc, "id"))
						begin(i, name)
					}
					args[i].WriteString(dig(tc, "function", "arguments").(string))
				}
			}
			if f := dig(e, "choices", 0, "finish_reason"); f != nil {
				stop = f
			}
		case Gemini:
			parts, _ := dig(e, "candidates", 0, "content", "parts").([]any)
			for _, p := range parts {
				if fc := dig(p, "functionCall"); fc != nil {
					calls = append(calls, called{dig(fc, "name").(string), decodeInput(t, dig(fc, "args"))})
				}
			}
			if f := dig(e, "candidates", 0, "finishReason"); f != nil {
				stop = f
			}
		}
	}
	for _, i := range order {
		calls = append(calls, called{names[i], decodeInput(t, args[i].String())})
	}
	return calls, stop
}

// replyCalls reads the tool calls of a reply that was not streamed.
func replyCalls(t *testing.T, api API, m map[string]any) (calls []called, stop any) {
	t.Helper()
	var list any
	switch api {
	case Anthropic:
		list, stop = dig(m, "content"), dig(m, "stop_reason")
	case Responses:
		list, stop = dig(m, "output"), dig(m, "output", -1, "type")
	case Chat:
		list, stop = dig(m, "choices", 0, "message", "tool_calls"), dig(m, "choices", 0, "finish_reason")
	case Gemini:
		list, stop = dig(m, "candidates", 0, "content", "parts"), dig(m, "candidates", 0, "finishReason")
	}
	items, _ := list.([]any)
	for _, it := range items {
		switch {
		case api == Anthropic && dig(it, "type") == "tool_use":
			calls = append(calls, called{dig(it, "name").(string), decodeInput(t, dig(it, "input"))})
		case api == Responses && dig(it, "type") == "function_call":
			calls = append(calls, called{dig(it, "name").(string), decodeInput(t, dig(it, "arguments"))})
		case api == Chat:
			calls = append(calls, called{dig(it, "function", "name").(string), decodeInput(t, dig(it, "function", "arguments"))})
		case api == Gemini && dig(it, "functionCall") != nil:
			calls = append(calls, called{dig(it, "functionCall", "name").(string), decodeInput(t, dig(it, "functionCall", "args"))})
		}
	}
	return calls, stop
}

// conversations: for each API, a first request with the task and a
// second one carrying the model's tool call and its result.
var conversations = map[API][2]string{
	Anthropic: {
		`{"model":"m","messages":[{"role":"user","content":"the task"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"the task"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo hi"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"hi\n"}]},{"type":"text","text":"<system-reminder>x</system-reminder>"}]}]}`,
	},
	Responses: {
		`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"the task"}]}]}`,
		`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"the task"}]},` +
			`{"type":"reasoning","summary":[]},{"type":"function_call","call_id":"call_1","name":"shell","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"call_1","output":"hi\n"}]}`,
	},
	Chat: {
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"the task"}]}`,
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"the task"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"call_1","content":"hi\n"}]}`,
	},
	Gemini: {
		`{"contents":[{"role":"user","parts":[{"text":"the task"}]}]}`,
		`{"contents":[{"role":"user","parts":[{"text":"the task"}]},{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{}}}]},` +
			`{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"hi\n"}}}]}]}`,
	},
}

func TestToolCallThenAnswer(t *testing.T) {
	t.Parallel()
	bash := ToolCall{Name: "Bash", Input: map[string]any{"command": "echo hi", "description": "Say \"hi\""}}
	read := ToolCall{Name: "Read", Input: map[string]any{"file_path": "/tmp/x.txt"}}
	wantStop := map[API]any{Anthropic: "tool_use", Responses: "function_call", Chat: "tool_calls", Gemini: "STOP"}
	for _, p := range protocols {
		for _, stream := range []bool{false, true} {
			t.Run(string(p.api)+map[bool]string{false: "", true: "/stream"}[stream], func(t *testing.T) {
				t.Parallel()
				s := start(t,
					Rule{Turn: 1, Tools: []ToolCall{bash, read}, Usage: Usage{Input: 100, Output: 10}},
					Rule{Turn: 2, Result: "no such output", Reply: "wrong"},
					Rule{Turn: 2, Result: "hi", Reply: "It said hi.", Usage: usage},
				)
				path := p.path
				if stream {
					path = streamPath(p.api, path)
				}
				with := func(body string) string {
					if p.api == Gemini {
						return body
					}
					return strings.Replace(body, `"model":"m"`, `"model":"m","stream":`+jsonOf(stream), 1)
				}
				conv := conversations[p.api]

				resp := post(t, s.URL+path, with(conv[0]))
				require.Equal(t, http.StatusOK, resp.StatusCode)
				var calls []called
				var stop any
				if stream {
					evs := events(t, resp.Body)
					calls, stop = streamedCalls(t, p.api, evs)
					text, u := streamed(t, p.api, evs)
					assert.Empty(t, text, "a reply of tool calls only has no text")
					assert.NotNil(t, u, "a tool-call reply reports its usage")
				} else {
					var m map[string]any
					require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
					calls, stop = replyCalls(t, p.api, m)
				}
				assert.Equal(t, []called{{"Bash", bash.Input}, {"Read", read.Input}}, calls)
				assert.Equal(t, wantStop[p.api], stop)

				resp = post(t, s.URL+path, with(conv[1]))
				require.Equal(t, http.StatusOK, resp.StatusCode)
				if stream {
					evs := events(t, resp.Body)
					calls, _ = streamedCalls(t, p.api, evs)
					text, u := streamed(t, p.api, evs)
					assert.Equal(t, "It said hi.", text)
					assert.Equal(t, p.wantUsage, u)
				} else {
					var m map[string]any
					require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
					calls, _ = replyCalls(t, p.api, m)
					assert.Equal(t, "It said hi.", dig(m, p.text...))
				}
				assert.Empty(t, calls)

				reqs := s.Requests()
				require.Len(t, reqs, 2)
				assert.Equal(t, 1, reqs[0].Turn)
				assert.Empty(t, reqs[0].Results)
				assert.Equal(t, []string{"Bash", "Read"}, reqs[0].Tools)
				assert.Equal(t, 0, reqs[0].Rule)
				assert.Equal(t, 2, reqs[1].Turn)
				require.Len(t, reqs[1].Results, 1)
				assert.Equal(t, "hi\n", reqs[1].Results[0])
				assert.Equal(t, 2, reqs[1].Rule)
				assert.Empty(t, reqs[1].Tools)
			})
		}
	}
}

func TestToolResultRuleKey(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for api, conv := range conversations {
		t.Run(string(api), func(t *testing.T) {
			t.Parallel()
			s := start(t, Rule{ToolResult: &yes, Reply: "after a tool"}, Rule{ToolResult: &no, Reply: "first"})
			p := protocolOf(api)
			for i, want := range []string{"first", "after a tool"} {
				resp := post(t, s.URL+p.path, conv[i])
				var m map[string]any
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
				assert.Equal(t, want, dig(m, p.text...))
			}
		})
	}
}

// TestRunaway: a rule of tool calls with no Turn answers every turn with
// a tool call, each with the rule's usage, and distinct call ids.
func TestRunaway(t *testing.T) {
	t.Parallel()
	s := start(t, Rule{Tools: []ToolCall{{Name: "Bash", Input: map[string]any{"command": "sleep 1"}}}, Usage: Usage{Input: 1000, Output: 100}})
	ids, msgs := map[any]bool{}, map[any]bool{}
	for i := range 5 {
		body := conversations[Anthropic][min(i, 1)]
		resp := post(t, s.URL+"/v1/messages", body)
		var m map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		assert.Equal(t, "tool_use", dig(m, "stop_reason"))
		assert.Equal(t, 100.0, dig(m, "usage", "output_tokens"))
		ids[dig(m, "content", 0, "id")] = true
		msgs[dig(m, "id")] = true
	}
	assert.Len(t, ids, 5, "each tool call has its own id")
	assert.Len(t, msgs, 5, "each reply has its own message id: claude merges the assistant messages that share one")
	for _, r := range s.Requests() {
		assert.Equal(t, Usage{Input: 1000, Output: 100}, r.Usage)
	}
}

// TestTurnCountsModelReplies: turn is 1 + the model replies, a reply of
// several items (reasoning, calls) counting once.
func TestTurnCountsModelReplies(t *testing.T) {
	t.Parallel()
	s := start(t, Rule{Reply: "x"})
	post(t, s.URL+"/v1/responses", `{"model":"m","input":"hi"}`)
	post(t, s.URL+"/v1/responses", `{"model":"m","input":[{"role":"user","content":"a"},`+
		`{"type":"reasoning"},{"type":"function_call","call_id":"1"},{"type":"function_call","call_id":"2"},`+
		`{"type":"function_call_output","call_id":"1","output":"one"},{"type":"function_call_output","call_id":"2","output":[{"type":"input_text","text":"two"}]},`+
		`{"role":"assistant","content":"ok"},{"role":"user","content":"b"},{"type":"function_call","call_id":"3"},`+
		`{"type":"function_call_output","call_id":"3","output":"three"}]}`)
	reqs := s.Requests()
	assert.Equal(t, 1, reqs[0].Turn)
	assert.Equal(t, 4, reqs[1].Turn)
	assert.Equal(t, []string{"three"}, reqs[1].Results, "only the results after the last model reply")
	assert.Equal(t, "b", reqs[1].Prompt)
}

func protocolOf(api API) (p struct {
	path string
	text []any
}) {
	for _, q := range protocols {
		if q.api == api {
			p.path, p.text = q.path, q.text
		}
	}
	return p
}

func TestReadScriptToolKeys(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/s.yaml"
	require.NoError(t, writeFile(path, `rules:
  - turn: 1
    tools:
      - name: Bash
        input: {command: "echo hi", timeout: 5}
  - tool_result: true
    result: hi
    reply: done
`))
	rules, err := ReadScript(path)
	require.NoError(t, err)
	yes := true
	assert.Equal(t, []Rule{
		{Turn: 1, Tools: []ToolCall{{Name: "Bash", Input: map[string]any{"command": "echo hi", "timeout": 5}}}},
		{ToolResult: &yes, Result: "hi", Reply: "done"},
	}, rules)
}
