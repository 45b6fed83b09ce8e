package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dtree-dev/dtree/internal/response"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// The decoders of the built-ins' JSON-lines event streams: each reads the
// events it needs as stdout arrives (line), keeping the answer so far and
// the usage summed, and at the end (end) says what the stream amounted to.

// streamJSONDecoder reads Claude Code's stream-json, which Amp's
// --stream-json copies: "assistant" events with the message's usage, and a
// final "result" event like claude's json envelope.
type streamJSONDecoder struct {
	events
	reporter
	result *streamResult
	// recent are the latest assistant messages, whose usage may still
	// change (the last event of each id wins); before sums the older
	// ones, and count is how many messages there were.
	recent [recentMessages]streamMessage
	before types.Usage
	count  int
	total  types.Usage // the messages' usage summed, as reported so far
	// cachedIn says input_tokens already counts the cached tokens (Qwen
	// Code's), which Claude Code's and Amp's count apart.
	cachedIn bool
}

// streamMessage is one assistant message's id and usage.
type streamMessage struct {
	id    string
	usage types.Usage
}

// recentMessages is how many of the latest messages a stream decoder keeps
// apart, by id: Claude Code repeats a message's usage on each of its
// events, which come one after another; a message seen again after this
// many others is counted as a new one. Memory stays the same however
// long the stream (readme/performance.md).
const recentMessages = 8

// message records the usage an event gives for message id, and brings
// total and the turns up to date, in constant time.
func (d *streamJSONDecoder) message(id string, u types.Usage, counted bool) {
	k := -1
	for i := range min(d.count, recentMessages) {
		if d.recent[i].id == id {
			k = i
			break
		}
	}
	if k < 0 {
		k = d.count % recentMessages
		if d.count >= recentMessages {
			d.before = addUsage(d.before, d.recent[k].usage) // it leaves the window
		}
		d.recent[k], d.count = streamMessage{id: id}, d.count+1
	}
	if counted {
		d.recent[k].usage = u
	}
	d.total = d.before
	for i := range min(d.count, recentMessages) {
		d.total = addUsage(d.total, d.recent[i].usage)
	}
}

type streamUsage struct {
	Input       number `json:"input_tokens"`
	CacheCreate number `json:"cache_creation_input_tokens"`
	CacheRead   number `json:"cache_read_input_tokens"`
	Output      number `json:"output_tokens"`
}

func (u streamUsage) usage() types.Usage {
	return types.Usage{
		InputTokens:  add(add(u.Input.count(), u.CacheCreate.count()), u.CacheRead.count()),
		OutputTokens: u.Output.count(),
	}
}

// usageOf is u as the decoder's CLI counts it.
func (d *streamJSONDecoder) usageOf(u streamUsage) types.Usage {
	if d.cachedIn {
		return types.Usage{InputTokens: u.Input.count(), OutputTokens: u.Output.count()}
	}
	return u.usage()
}

type streamResult struct {
	Subtype text `json:"subtype"`
	IsError bool `json:"is_error"`
	// APIStatus is the HTTP status of the model API's failed answer
	// (claude 2.1.197 puts it beside is_error).
	APIStatus number      `json:"api_error_status"`
	Result    text        `json:"result"`
	Cost      number      `json:"total_cost_usd"`
	Duration  number      `json:"duration_ms"`
	Usage     streamUsage `json:"usage"`
	Error     message     `json:"error"`
	// Errors are claude's words for a result stopped by a limit
	// (2.1.332: ["Reached maximum budget ($1)"]).
	Errors []string `json:"errors"`
}

// streamContent is one block of a message's content: a tool_use block of
// an assistant message, a tool_result block of a user message.
type streamContent struct {
	Type    text            `json:"type"`
	ID      text            `json:"id"`
	Name    text            `json:"name"`
	Input   json.RawMessage `json:"input"`
	ToolID  text            `json:"tool_use_id"`
	IsError bool            `json:"is_error"`
}

func (d *streamJSONDecoder) line(b []byte) {
	var ev struct {
		Type    text `json:"type"`
		Message struct {
			ID      text            `json:"id"`
			Model   text            `json:"model"`
			Usage   streamUsage     `json:"usage"`
			Content []streamContent `json:"content"`
		} `json:"message"`
		streamResult
		// Result shadows streamResult's to tell an absent result from
		// an empty one.
		Result *text `json:"result"`
	}
	if !d.decode(b, &ev) {
		return
	}
	if ev.Result != nil {
		ev.streamResult.Result = *ev.Result
	}
	switch ev.Type {
	case "":
		// An object without a type that holds a result or says is_error
		// is the result too, as claude's json envelope was read.
		if ev.Result != nil || ev.IsError {
			d.finish(ev.streamResult)
		}
	case "assistant":
		if ev.Message.Model == "<synthetic>" {
			// Claude Code's own message saying an API call failed:
			// no reply of the model, no turn.
			return
		}
		// One message may come as several events (one a content block),
		// each with the message's usage so far: the last of each id wins.
		id := string(ev.Message.ID)
		if id == "" {
			id = "#" + strconv.Itoa(d.count)
		}
		u := d.usageOf(ev.Message.Usage)
		d.message(id, u, u.InputTokens != nil || u.OutputTokens != nil)
		d.progress(d.total, d.count)
		for _, c := range ev.Message.Content {
			if c.Type == "tool_use" {
				d.tool(string(c.Name), string(c.ID), c.Input)
			}
		}
	case "user":
		for _, c := range ev.Message.Content {
			if c.Type == "tool_result" {
				d.toolEnd(string(c.ToolID), c.IsError)
			}
		}
	case "result":
		d.finish(ev.streamResult)
	}
}

// finish keeps the result event, the stream's last word, and reports the
// whole call's usage it gives.
func (d *streamJSONDecoder) finish(r streamResult) {
	d.result, d.fin = &r, true
	if u := d.sessionUsage(r); u.InputTokens != nil || u.OutputTokens != nil {
		u.CostUSD = r.Cost.money()
		d.progress(u, d.turns)
	}
}

// sessionUsage is the call's tokens as its result event says them, each
// figure at least what its messages reported: claude 2.1.332 stopped by
// --max-budget-usd gave a result whose usage left out its last message
// (300,000 input tokens after four messages of 100,000 each;
// testdata/streams/claude/max_budget-2.1.332.jsonl), and a budget must not
// count less than was reported.
func (d *streamJSONDecoder) sessionUsage(r streamResult) types.Usage {
	u := d.usageOf(r.Usage)
	if u.InputTokens == nil && u.OutputTokens == nil {
		return u
	}
	most := func(a, b *int64) *int64 {
		if a == nil || (b != nil && *b > *a) {
			return b
		}
		return a
	}
	u.InputTokens, u.OutputTokens = most(u.InputTokens, d.total.InputTokens), most(u.OutputTokens, d.total.OutputTokens)
	return u
}

func (d *streamJSONDecoder) end(o output) (envelope, error) {
	env := envelope{usage: d.total}
	if err := d.check(o, "stream-json"); err != nil {
		return env, cutNote(err, o)
	}
	r := d.result
	if r == nil {
		return env, cutNote(errors.New("printed no result event: the stream ended before the agent finished"+keptNote(o)), o)
	}
	if u := d.sessionUsage(*r); u.InputTokens != nil || u.OutputTokens != nil {
		env.usage.InputTokens, env.usage.OutputTokens = u.InputTokens, u.OutputTokens // the whole session's
	}
	env.usage.CostUSD, env.usage.DurationMS = r.Cost.money(), r.Duration.count()
	env.answer = response.StripANSI(string(r.Result))
	env.failed = r.IsError || r.Error != ""
	if r.Subtype != "" && r.Subtype != "success" {
		env.failed, env.status = true, string(r.Subtype)
	}
	if env.failed {
		env.message = string(r.Error)
		if env.message == "" && len(r.Errors) > 0 {
			env.message = firstLine(r.Errors[0])
		}
		if env.message == "" {
			env.message = firstLine(env.answer)
		}
		env.message = apiStatus(r.APIStatus.count(), env.message)
	}
	return env, nil
}

// cutNote adds to a stream's error that stdout is exactly claudeCut
// bytes long, where some Claude Code versions cut piped stdout.
func cutNote(err error, o output) error {
	if o.total != claudeCut {
		return err
	}
	return fmt.Errorf("%w (stdout is exactly %d bytes: the CLI probably truncated it)", err, claudeCut)
}

// codexDecoder reads codex exec --json: the answer is the last completed
// agent_message; turn.failed, or an error event that no completed turn
// follows, is a failure even with exit status 0. Its tool items report
// Activity: a command_execution, mcp_tool_call or web_search as it starts
// and as it completes (failed, declined, or a command's non-zero exit),
// and a file_change, which comes only completed, as one writing call per
// file. Usage comes once, with turn.completed; a model reply (a turn,
// as dtree counts them) is what comes after a tool's result.
type codexDecoder struct {
	events
	reporter
	answer    string
	usage     types.Usage
	completed bool
	failure   string
	inTurn    bool
}

// codexItem is a codex item as codex-rs/exec/src/exec_events.rs has it.
type codexItem struct {
	ID        text            `json:"id"`
	Type      text            `json:"type"`
	Text      text            `json:"text"`
	Command   text            `json:"command"`
	ExitCode  *number         `json:"exit_code"`
	Status    text            `json:"status"`
	Server    text            `json:"server"`
	Tool      text            `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Query     text            `json:"query"`
	Changes   []struct {
		Path text `json:"path"`
		Kind text `json:"kind"`
	} `json:"changes"`
}

func (d *codexDecoder) line(b []byte) {
	var ev struct {
		Type    text      `json:"type"`
		Message message   `json:"message"`
		Error   message   `json:"error"`
		Item    codexItem `json:"item"`
		Usage   struct {
			Input  number `json:"input_tokens"`
			Output number `json:"output_tokens"`
		} `json:"usage"`
	}
	if !d.decode(b, &ev) {
		return
	}
	switch ev.Type {
	case "item.started":
		d.item(ev.Item, false)
	case "item.completed":
		if ev.Item.Type == "agent_message" {
			d.answer = string(ev.Item.Text)
		}
		d.item(ev.Item, true)
	case "turn.completed":
		d.completed, d.failure, d.fin = true, "", true
		d.usage.InputTokens = add(d.usage.InputTokens, ev.Usage.Input.count())
		d.usage.OutputTokens = add(d.usage.OutputTokens, ev.Usage.Output.count())
		d.progress(d.usage, d.turns)
	case "turn.failed":
		d.completed, d.failure, d.fin = false, orNone(string(ev.Error)), true
	case "error":
		d.failure = orNone(firstNonEmpty(string(ev.Message), string(ev.Error)))
	}
}

// item reports what a started or completed item says of the agent's work.
func (d *codexDecoder) item(it codexItem, done bool) {
	if it.Type == "error" { // a warning of codex's own, no work of the model's
		return
	}
	if !d.inTurn {
		d.inTurn = true
		d.progress(d.usage, d.turns+1)
	}
	id := string(it.ID)
	var name string
	var input json.RawMessage
	switch it.Type {
	case "command_execution":
		name, input = "shell", jsonObject("command", string(it.Command))
	case "mcp_tool_call":
		name, input = string(it.Server)+"."+string(it.Tool), it.Arguments
	case "web_search":
		name, input = "web_search", jsonObject("query", string(it.Query))
	case "file_change":
		if !done {
			return
		}
		for i, c := range it.Changes {
			cid := id + "#" + strconv.Itoa(i)
			d.tool("apply_patch", cid, jsonObject("path", string(c.Path)))
			d.toolEnd(cid, it.Status != "completed")
		}
		d.inTurn = false
		return
	default:
		return
	}
	if !done {
		d.tool(name, id, input)
		return
	}
	if _, started := d.names[id]; !started { // a web_search may come completed only
		d.tool(name, id, input)
	}
	failed := it.Status == "failed" || it.Status == "declined"
	if c := it.ExitCode; c != nil && c.set && c.v != 0 {
		failed = true
	}
	d.toolEnd(id, failed)
	d.inTurn = false
}

// jsonObject is {key: value} as JSON, a tool's input for ToolArg.
func jsonObject(key, value string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{key: value})
	return b
}

func (d *codexDecoder) end(o output) (envelope, error) {
	env := envelope{answer: response.StripANSI(d.answer), usage: d.usage}
	if err := d.check(o, "codex --json"); err != nil {
		return env, err
	}
	if d.failure != "" {
		env.failed, env.message = true, d.failure
		return env, nil
	}
	if !d.completed {
		return env, errors.New("printed no turn.completed event: the stream ended before the turn did" + keptNote(o))
	}
	return env, nil
}

// copilotDecoder reads copilot --output-format json: the answer is the
// last assistant.message's content; a terminal "result" event carries the
// session's duration. Copilot 1.0.102 reports no tokens and no cost: its
// messages have no outputTokens, whatever its documentation says.
// Its session events report the agent's work: assistant.turn_start a model
// turn, tool.execution_start a tool call (toolName, arguments) and
// tool.execution_complete its end (success).
type copilotDecoder struct {
	events
	reporter
	answer  string
	result  bool
	ms      *int64
	failure string
}

func (d *copilotDecoder) line(b []byte) {
	type usage struct {
		Session number `json:"sessionDurationMs"`
	}
	var ev struct {
		Type text `json:"type"`
		Data struct {
			Content    text            `json:"content"`
			Message    message         `json:"message"`
			Usage      usage           `json:"usage"`
			ToolCallID text            `json:"toolCallId"`
			ToolName   text            `json:"toolName"`
			Arguments  json.RawMessage `json:"arguments"`
			Success    *bool           `json:"success"`
		} `json:"data"`
		Usage   usage   `json:"usage"`
		Message message `json:"message"`
		Error   message `json:"error"`
	}
	if !d.decode(b, &ev) {
		return
	}
	switch t := string(ev.Type); {
	case t == "assistant.turn_start":
		d.progress(d.usage, d.turns+1)
	case t == "tool.execution_start":
		d.tool(string(ev.Data.ToolName), string(ev.Data.ToolCallID), ev.Data.Arguments)
	case t == "tool.execution_complete":
		d.toolEnd(string(ev.Data.ToolCallID), ev.Data.Success != nil && !*ev.Data.Success)
	case t == "assistant.message":
		if strings.TrimSpace(string(ev.Data.Content)) != "" {
			d.answer = string(ev.Data.Content)
		}
	case t == "result":
		d.result, d.fin = true, true
		if ms := ev.Usage.Session.count(); ms != nil {
			d.ms = ms
		} else if ms := ev.Data.Usage.Session.count(); ms != nil {
			d.ms = ms
		}
	case t == "error" || strings.HasSuffix(t, ".error"):
		d.failure = orNone(firstNonEmpty(string(ev.Data.Message), string(ev.Message), string(ev.Error)))
	}
}

func (d *copilotDecoder) end(o output) (envelope, error) {
	env := envelope{answer: response.StripANSI(d.answer), usage: types.Usage{DurationMS: d.ms}}
	if strings.TrimSpace(o.stdout) == "" {
		return env, nil // no answer: Run says why Copilot may print nothing
	}
	if err := d.check(o, "copilot JSON"); err != nil {
		return env, err
	}
	if d.failure != "" {
		env.failed, env.message = true, d.failure
	}
	return env, nil
}

// opencodeDecoder reads opencode run --format json: the answer is the text
// parts joined; each step_finish adds its tokens and cost; an error event
// is a failure (opencode exits 1 after it, but the event says why). The
// stream ends with a done event (newer builds), or a step_finish whose
// reason is "stop" (the model has nothing more to do; the hang of
// anomalyco/opencode #44901 comes after it). Nothing waits for done:
// 1.18.33 printed none, and exited just after its last step_finish.
//
// A step's cost is opencode's tokens times the price in its model
// catalogue, and 0 for a model the catalogue has no price for, as for a
// model that is free: its events do not tell the two apart. So a cost of
// 0 is not counted: a call whose steps all cost 0 has an unknown cost
// (null), never a cost of $0 that it may not have had.
//
// Each step_start is a model turn; a tool_use event comes once its tool
// has run (state completed, or error), and reports the call and its end
// together.
type opencodeDecoder struct {
	events
	reporter
	answer  strings.Builder
	usage   types.Usage
	failure string
}

func (d *opencodeDecoder) line(b []byte) {
	var ev struct {
		Type text    `json:"type"`
		Err  message `json:"error"`
		Part struct {
			Text   text `json:"text"`
			Reason text `json:"reason"`
			Tool   text `json:"tool"`
			CallID text `json:"callID"`
			State  struct {
				Status text            `json:"status"`
				Input  json.RawMessage `json:"input"`
			} `json:"state"`
			Tokens struct {
				Input     number `json:"input"`
				Output    number `json:"output"`
				Reasoning number `json:"reasoning"`
				Cache     struct {
					Read  number `json:"read"`
					Write number `json:"write"`
				} `json:"cache"`
			} `json:"tokens"`
			Cost number `json:"cost"`
		} `json:"part"`
	}
	if !d.decode(b, &ev) {
		return
	}
	switch ev.Type {
	case "text":
		if d.answer.Len() > 0 {
			d.answer.WriteString("\n")
		}
		if d.answer.Len()+len(ev.Part.Text) <= MaxStdoutTail {
			d.answer.WriteString(string(ev.Part.Text))
		}
	case "step_finish":
		t := ev.Part.Tokens
		d.usage.InputTokens = add(d.usage.InputTokens, add(add(t.Input.count(), t.Cache.Read.count()), t.Cache.Write.count()))
		d.usage.OutputTokens = add(d.usage.OutputTokens, add(t.Output.count(), t.Reasoning.count()))
		if c := ev.Part.Cost.money(); c != nil && *c != 0 { // a negative one is CheckUsage's
			d.usage.CostUSD = add(d.usage.CostUSD, c)
		}
		d.fin = d.fin || ev.Part.Reason == "stop"
		d.progress(d.usage, d.turns)
	case "step_start":
		d.progress(d.usage, d.turns+1)
	case "tool_use":
		id := string(ev.Part.CallID)
		d.tool(string(ev.Part.Tool), id, ev.Part.State.Input)
		d.toolEnd(id, ev.Part.State.Status == "error")
	case "done":
		d.fin = true
	case "error":
		d.failure = orNone(string(ev.Err))
	}
}

func (d *opencodeDecoder) end(o output) (envelope, error) {
	env := envelope{answer: response.StripANSI(d.answer.String()), usage: d.usage}
	if err := d.check(o, "opencode JSON"); err != nil {
		return env, err
	}
	if d.failure != "" {
		env.failed, env.message = true, d.failure
	}
	return env, nil
}

// qwenDecoder reads qwen -o stream-json (Qwen Code 0.15.10): Claude
// Code's stream-json events, one a line, as they happen: assistant
// messages with their tool_use blocks and usage, user messages with the
// tool results, and a last "result" event with the answer, is_error, the
// usage and the duration. It reads qwen -o json too, the same events in
// one array printed at the end (the objects splitter finds each). Its
// usage.input_tokens already counts the cached tokens
// (cache_read_input_tokens is part of it, not beside it, unlike Claude
// Code's). An API error such as a 401 comes back with exit status 0 as a
// result that is not is_error, whose text is "[API Error: 401 …]": that is
// a failure too. Qwen Code 0.24.4 exits 1 instead, with an is_error
// result (subtype error_during_execution) whose error.message is that
// bracketed text.
type qwenDecoder struct {
	streamJSONDecoder
}

func newQwenDecoder() *qwenDecoder { return &qwenDecoder{streamJSONDecoder{cachedIn: true}} }

// qwenAPIError is how Qwen Code words an API error as its result.
var qwenAPIError = lazyRegexp(`^\[(API Error: [^\n]*)\]$`)

func (d *qwenDecoder) end(o output) (envelope, error) {
	if err := d.check(o, "qwen JSON"); err != nil {
		return envelope{usage: d.total}, err
	}
	r := d.result
	if r == nil {
		return envelope{usage: d.total}, errors.New("printed no result event: the output ended before the agent finished" + keptNote(o))
	}
	env := envelope{answer: response.StripANSI(string(r.Result))}
	env.usage = types.Usage{InputTokens: r.Usage.Input.count(), OutputTokens: r.Usage.Output.count(), DurationMS: r.Duration.count()}
	m := qwenAPIError().FindStringSubmatch(strings.TrimSpace(env.answer))
	env.failed = r.IsError || r.Error != "" || m != nil
	if r.Subtype != "" && r.Subtype != "success" {
		env.failed, env.status = true, string(r.Subtype)
	}
	if env.failed {
		switch {
		case r.Error != "":
			// 0.24.4 puts the same bracketed words in error.message.
			env.message = string(r.Error)
			if e := qwenAPIError().FindStringSubmatch(strings.TrimSpace(env.message)); e != nil {
				env.message = firstLine(e[1])
			}
		case m != nil:
			env.message = firstLine(m[1])
		default:
			env.message = firstLine(env.answer)
		}
	}
	return env, nil
}

// cursorDecoder reads cursor-agent --output-format stream-json, from
// Cursor's documentation (cursor.com/docs/cli/reference/output-format; not
// proven on the binary, which is not on npm): Claude Code's system, user,
// assistant (one a message between tool calls, no usage) and result
// events, and tool_call events of subtype started and completed, whose
// tool_call holds one key naming the tool (readToolCall, writeToolCall,
// shellToolCall…, or function with a name and its arguments as text)
// with its args, and when completed its result: success, or an error. It
// reads the json format's one result object too.
type cursorDecoder struct {
	streamJSONDecoder
}

func (d *cursorDecoder) line(b []byte) {
	var ev struct {
		Type     text                       `json:"type"`
		Subtype  text                       `json:"subtype"`
		CallID   text                       `json:"call_id"`
		ToolCall map[string]json.RawMessage `json:"tool_call"`
	}
	if !d.decode(b, &ev) {
		return
	}
	if ev.Type != "tool_call" {
		d.streamJSONDecoder.line(b)
		return
	}
	for key, raw := range ev.ToolCall {
		var call struct {
			Args     json.RawMessage            `json:"args"`
			Name     text                       `json:"name"`
			Argument text                       `json:"arguments"`
			Result   map[string]json.RawMessage `json:"result"`
		}
		if json.Unmarshal(raw, &call) != nil {
			continue
		}
		name, args := strings.TrimSuffix(key, "ToolCall"), call.Args
		if key == "function" {
			name, args = string(call.Name), json.RawMessage(call.Argument)
			if !json.Valid(args) {
				args = nil
			}
		}
		id := string(ev.CallID)
		switch ev.Subtype {
		case "started":
			d.tool(name, id, args)
		case "completed":
			_, ok := call.Result["success"]
			d.toolEnd(id, !ok && call.Result != nil)
		}
		break // one tool a call
	}
}

func (d *cursorDecoder) end(o output) (envelope, error) {
	if !d.seen {
		text := response.StripANSI(o.stdout)
		return envelope{}, noEnvelope(errors.New("no JSON object in stdout"), text, o)
	}
	return d.streamJSONDecoder.end(o)
}
