package agent

import (
	"bytes"
	"encoding/json"

	"fmt"

	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/types"
)

// jsonlDecoder reads a custom CLI's JSON-lines event stream (output:
// jsonl, readme/settings.md#custom-clis) through the definition's paths,
// each looked up in every event as it arrives:
//
//   - the last event that holds answer_path (or whose error_path is true)
//     is the envelope, read as output json reads its object;
//   - an event with a string at tool_name_path is a tool call, its input at
//     tool_input_path and its id at tool_id_path; one with a string at
//     tool_end_id_path ends the call of that id, failed when its
//     tool_error_path is true or a non-empty string or object;
//   - the usage paths in the other events are summed as they come, and
//     a figure the envelope has is the whole call's, replacing the sum.
type jsonlDecoder struct {
	jsonDecoder
	reporter
	sum types.Usage // the usage of the events before the envelope
}

func (d *jsonlDecoder) line(b []byte) {
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = []byte(response.StripANSI(string(b)))
	}
	obj, err := decodeObject(string(b))
	if err != nil {
		return
	}
	def := d.def
	if name, _ := stringAt(obj, def.ToolNamePath); name != "" {
		var input json.RawMessage
		if v, ok := lookup(obj, def.ToolInputPath); ok {
			input, _ = json.Marshal(v)
		}
		id, _ := stringAt(obj, def.ToolIDPath)
		d.tool(name, id, input)
	}
	if id, ok := stringAt(obj, def.ToolEndIDPath); ok {
		v, _ := lookup(obj, def.ToolErrorPath)
		failed, _ := errorValue(v)
		d.toolEnd(id, failed)
	}
	u := usageAt(obj, def)
	_, answer := lookup(obj, def.AnswerPath)
	if failed, _ := lookup(obj, def.ErrorPath); answer || failed == true {
		d.last, d.fin = obj, true
		if known(u) {
			d.progress(over(d.sum, u), d.turns)
		}
		return
	}
	if known(u) {
		d.sum = addUsage(d.sum, u)
		d.progress(d.sum, d.turns)
	}
}

func (d *jsonlDecoder) end(o output) (envelope, error) {
	if d.last == nil {
		return envelope{usage: d.sum}, fmt.Errorf("printed no event with answer_path %q%s%s", d.def.AnswerPath, keptNote(o),
			stdoutNote(response.StripANSI(o.stdout)))
	}
	env, err := d.jsonDecoder.end(o)
	env.usage = over(d.sum, env.usage)
	return env, err
}

// over is u with the figures it lacks taken from sum: the envelope's
// figure is the whole call's where it has one.
func over(sum, u types.Usage) types.Usage {
	if u.InputTokens == nil {
		u.InputTokens = sum.InputTokens
	}
	if u.OutputTokens == nil {
		u.OutputTokens = sum.OutputTokens
	}
	if u.CostUSD == nil {
		u.CostUSD = sum.CostUSD
	}
	if u.DurationMS == nil {
		u.DurationMS = sum.DurationMS
	}
	return u
}

// stringAt is the text at path: a string, or a number as written.
func stringAt(obj map[string]any, path string) (string, bool) {
	v, ok := lookup(obj, path)
	switch x := v.(type) {
	case string:
		return x, ok
	case json.Number:
		return x.String(), ok
	}
	return "", false
}

func usageAt(obj map[string]any, def Definition) types.Usage {
	return types.Usage{
		InputTokens:  intAt(obj, def.InputTokensPath),
		OutputTokens: intAt(obj, def.OutputTokensPath),
		CostUSD:      floatAt(obj, def.CostPath),
		DurationMS:   intAt(obj, def.DurationPath),
	}
}

// known says a usage has at least one figure.
func known(u types.Usage) bool {
	return u.InputTokens != nil || u.OutputTokens != nil || u.CostUSD != nil || u.DurationMS != nil
}
