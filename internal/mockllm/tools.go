package mockllm

import (
	"encoding/json"
	"strings"
)

// ToolCall is a tool call a reply asks for: the tool's name as the CLI
// offers it (claude's Bash, Read, Edit; gemini's run_shell_command…) and
// its input, a JSON object.
//
//	tools:
//	  - name: Bash
//	    input: {command: "echo hi", description: "Say hi"}
type ToolCall struct {
	Name  string         `yaml:"name" json:"name"`
	Input map[string]any `yaml:"input" json:"input"`
}

// toolUse is a tool call as sent: with an id of the server's, and its
// input as JSON text.
type toolUse struct {
	id, name, input string
}

func (t ToolCall) use(id string) toolUse {
	in := t.Input
	if in == nil {
		in = map[string]any{}
	}
	data, _ := json.Marshal(in) // a map from YAML or JSON always marshals
	return toolUse{id: id, name: t.Name, input: string(data)}
}

// object is the input as a JSON object, for the protocols that send it
// as one rather than as text.
func (t toolUse) object() json.RawMessage { return json.RawMessage(t.input) }

// conversation reads the turn and the trailing tool results of a list of
// messages: model marks a model reply, result returns the texts of a
// message's tool results. Turn is 1 + the runs of model messages; the
// results are those after the last model message.
func conversation[M any](msgs []M, model func(M) bool, result func(M) []string) (turn int, results []string) {
	turn = 1
	prev := false
	for _, m := range msgs {
		isModel := model(m)
		if isModel && !prev {
			turn++
			results = nil
		}
		prev = isModel
		if !isModel {
			results = append(results, result(m)...)
		}
	}
	return turn, results
}

// resultText reads a tool result's content: a string, an array of parts
// with text, or any other JSON, which is kept as JSON text.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			if p.Text != nil {
				texts = append(texts, *p.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
	}
	return string(raw)
}

// split cuts a tool call's input JSON into a few pieces, as a model
// streams it.
func split(s string) []string {
	if s == "" {
		return []string{""}
	}
	return chunks(s)
}
