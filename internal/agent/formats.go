package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/types"
)

// geminiExits are Gemini CLI's exit statuses (readme/clis.md#gemini), and those
// of the API errors it gives up on (geminiHTTP).
var geminiExits = map[int]string{
	41:  "authentication failed: set GEMINI_API_KEY, or log in by running gemini once",
	42:  "the input was refused",
	44:  "sandbox error",
	52:  "configuration error",
	53:  "turn limit exceeded",
	54:  "a tool failed",
	55:  "the folder is not trusted",
	130: "cancelled",
}

// geminiHTTP says what the model API's HTTP statuses mean. Gemini CLI
// exits with the status of the API error it gave up on
// (packages/cli/src/utils/errors.ts: process.exit(error.code)), which the
// system cuts to a byte: 0.61.0 exited 173 on a 429, 244 on a 500 and 144
// on a 400.
var geminiHTTP = map[int]string{
	400: "bad request",
	401: "unauthorized",
	403: "forbidden",
	404: "not found",
	429: "rate limited",
	500: "server error",
	503: "server unavailable",
}

func init() {
	for code, what := range geminiHTTP {
		geminiExits[code%256] = httpMeaning(code, what)
	}
}

func httpMeaning(code int, what string) string {
	return what + " (HTTP " + strconv.Itoa(code) + ")"
}

// geminiDecoder reads gemini -o stream-json (readme/clis.md#gemini): init,
// message (the assistant's text in deltas), tool_use, tool_result, error
// and a last result event with the status, the error and the session's
// stats. The answer is the assistant's text since its last tool call, as
// gemini's own json output has it. It reads gemini's older --output-format
// json envelope too (one object with response, stats.models and error),
// which a custom definition may still ask for: a stream is told from an
// envelope by its events' "type".
type geminiDecoder struct {
	reporter
	fin    bool
	stream bool // a stream-json event was read
	cut    bool // the last piece looked like an event but did not parse
	answer strings.Builder
	inTurn bool   // the model's reply is under way (no tool result since)
	failed string // the last error event of severity error
	result *geminiResult
}

// geminiResult is stream-json's last event.
type geminiResult struct {
	Status text            `json:"status"`
	Error  json.RawMessage `json:"error"`
	Stats  geminiStats     `json:"stats"`
}

type geminiStats struct {
	Total    number `json:"total_tokens"`
	Input    number `json:"input_tokens"`
	Output   number `json:"output_tokens"`
	Duration number `json:"duration_ms"`
}

// usage is the stats as dtree counts them: input_tokens is the whole
// prompt, cached tokens included; output_tokens leaves the model's
// thoughts out, which total_tokens counts, so output is what the total
// has beyond the input when that is more. gemini writes a duration of 0
// for a session that failed: unknown, not instant.
func (s geminiStats) usage() types.Usage {
	u := types.Usage{InputTokens: s.Input.count(), OutputTokens: s.Output.count(), DurationMS: s.Duration.count()}
	if t, in, out := s.Total.count(), u.InputTokens, u.OutputTokens; t != nil && in != nil && out != nil && *t-*in > *out {
		v := *t - *in
		u.OutputTokens = &v
	}
	if d := u.DurationMS; d != nil && *d == 0 {
		u.DurationMS = nil
	}
	return u
}

// line gets each top-level object as it arrives: a stream-json event, or
// the json envelope, which has the response or the error.
func (d *geminiDecoder) line(b []byte) {
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = []byte(response.StripANSI(string(b)))
	}
	var ev struct {
		Type     text            `json:"type"`
		Role     text            `json:"role"`
		Content  text            `json:"content"`
		ToolName text            `json:"tool_name"`
		ToolID   text            `json:"tool_id"`
		Params   json.RawMessage `json:"parameters"`
		Status   text            `json:"status"`
		Severity text            `json:"severity"`
		Message  text            `json:"message"`
		geminiResult
		Response json.RawMessage `json:"response"`
	}
	err := json.Unmarshal(b, &ev)
	var te *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &te) {
		d.cut = true
		return
	}
	d.cut = false
	if ev.Type == "" {
		if !d.stream && !d.fin {
			d.fin = ev.Response != nil || ev.Error != nil
		}
		return
	}
	d.stream = true
	turn := func() {
		if !d.inTurn {
			d.inTurn = true
			d.progress(d.usage, d.turns+1)
		}
	}
	switch ev.Type {
	case "message":
		if ev.Role == "assistant" {
			turn()
			if d.answer.Len()+len(ev.Content) <= MaxStdoutTail {
				d.answer.WriteString(string(ev.Content))
			}
		}
	case "tool_use":
		turn()
		d.answer.Reset()
		d.tool(string(ev.ToolName), string(ev.ToolID), ev.Params)
	case "tool_result":
		d.inTurn = false
		d.toolEnd(string(ev.ToolID), ev.Status == "error")
	case "error":
		if ev.Severity == "error" {
			d.failed = orNone(string(ev.Message))
		}
	case "result":
		r := ev.geminiResult
		r.Status = ev.Status // the shallower field has it
		d.result, d.fin = &r, true
		d.progress(r.Stats.usage(), d.turns)
	}
}

func (d *geminiDecoder) final() bool { return d.fin }

func (d *geminiDecoder) end(o output) (envelope, error) {
	if !d.stream {
		return geminiEnvelope(o)
	}
	env := envelope{usage: d.usage, message: d.failed}
	if env.message == "" {
		env.message = geminiStderrError(o.stderr)
	}
	if d.cut {
		return env, errors.New("stdout ends in the middle of an event: the output was cut off" + keptNote(o))
	}
	r := d.result
	if r == nil {
		return env, errors.New("printed no result event: the stream ended before the agent finished" + keptNote(o))
	}
	env.answer = response.StripANSI(d.answer.String())
	env.usage = r.Stats.usage()
	if r.Status != "" && r.Status != "success" || len(r.Error) > 0 && string(r.Error) != "null" {
		env.failed = true
		var e struct {
			Message text `json:"message"`
		}
		if json.Unmarshal(r.Error, &e) == nil && e.Message != "" {
			env.message = geminiResultError(string(e.Message))
		}
		if env.message == "" {
			env.message = "(no message)"
		}
	}
	return env, nil
}

// geminiAPIError is how gemini words an API error in its result event:
// "[API Error: slow down]", or the API's own error as JSON inside.
var geminiAPIError = lazyRegexp(`^\[API Error: (.*)\]$`)

// geminiResultError is the message of a stream-json result's error: the
// API's own message where gemini wraps it, said as geminiStderrError says
// the same error from stderr in json mode.
func geminiResultError(msg string) string {
	line := firstLine(msg)
	m := geminiAPIError().FindStringSubmatch(line)
	if m == nil {
		return line
	}
	inner := strings.TrimSpace(m[1])
	if strings.HasPrefix(inner, "{") {
		d := json.NewDecoder(strings.NewReader(inner))
		d.UseNumber()
		var obj map[string]any
		if d.Decode(&obj) == nil {
			if e, ok := obj["error"]; ok {
				if s, ok := geminiErrorText(geminiError(e)); ok {
					return s
				}
			}
		}
	}
	return inner
}

// geminiEnvelope reads gemini's --output-format json envelope: the answer
// is "response", an "error" object a failure; usage is per model under
// stats.models, summed. In JSON mode gemini writes its error object to
// stderr when it fails.
func geminiEnvelope(o output) (envelope, error) {
	text := response.StripANSI(o.stdout)
	obj, err := decodeObject(text)
	if err != nil {
		return envelope{message: geminiStderrError(o.stderr)}, noEnvelope(err, text, o)
	}
	var env envelope
	if v, ok := lookup(obj, "response"); ok {
		env.answer = response.StripANSI(answerText(v))
	}
	env.failed, env.message = errorValue(obj["error"])
	if env.failed && env.message == "" {
		env.message = "(no message)"
	}
	models, _ := lookup(obj, "stats.models")
	m, _ := models.(map[string]any)
	for _, v := range m {
		stats, ok := v.(map[string]any)
		if !ok {
			continue
		}
		// prompt is the whole input, cached tokens included, as dtree
		// counts input for every CLI; gemini 0.61.0's "input" leaves the
		// cached ones out ({"input":5,"prompt":505,"cached":500} against
		// a mock server), so it is read only where prompt is missing.
		in := intAt(stats, "tokens.prompt")
		if in == nil {
			in = intAt(stats, "tokens.input")
		}
		env.usage.InputTokens = add(env.usage.InputTokens, in)
		env.usage.OutputTokens = add(env.usage.OutputTokens, intAt(stats, "tokens.candidates+tokens.thoughts"))
		env.usage.DurationMS = add(env.usage.DurationMS, intAt(stats, "api.totalLatencyMs"))
	}
	return env, nil
}

// geminiStderrError is the message of the error object gemini writes to
// stderr in JSON mode, "" when there is none. Stack traces come before it,
// with JSON and JavaScript objects in them ("_ApiError: {"error":…}",
// "{ status: 429 }"), so it is the last balanced JSON object that has an
// "error", found by scanning back from the end. Its message is often the
// API's own error as JSON text, whose message and code are read in turn.
// The exit status, which gemini takes from that code, says what a known
// code means (geminiExits); another code is named in the message.
func geminiStderrError(stderr string) string {
	// The objects in stderr, found in one linear pass, newest first:
	// parsing from each '{' in turn is quadratic on a tail full of them.
	objs := response.FindObjects(stderr)
	for i := len(objs) - 1; i >= 0; i-- {
		d := json.NewDecoder(strings.NewReader(objs[i]))
		d.UseNumber()
		var obj map[string]any
		if d.Decode(&obj) != nil {
			continue
		}
		e, ok := obj["error"]
		if !ok {
			continue
		}
		if s, ok := geminiErrorText(geminiError(e)); ok {
			return s
		}
	}
	return ""
}

// geminiErrorText says an error of code and msg; false when it has
// neither.
func geminiErrorText(code int, msg string) (string, bool) {
	what, known := geminiHTTP[code]
	switch {
	case msg == "" && code == 0:
		return "", false
	case msg == "" && known:
		return httpMeaning(code, what), true
	case msg == "":
		return "HTTP " + strconv.Itoa(code), true
	case code == 0 || known: // the exit status says what the code means
		return msg, true
	default:
		return "HTTP " + strconv.Itoa(code) + ": " + msg, true
	}
}

// geminiError reads an error as gemini prints it: {"type", "message",
// "code"}, where the message may be the API's {"error": {"code",
// "message", "status"}} as JSON text; or that API error itself.
func geminiError(v any) (code int, msg string) {
	e, ok := v.(map[string]any)
	if !ok {
		_, msg = errorValue(v)
		return 0, msg
	}
	if n, ok := e["code"].(json.Number); ok {
		// Only HTTP statuses: gemini's own errors carry its exit status
		// here (41 for authentication).
		if c, err := n.Int64(); err == nil && c >= 100 && c < 600 {
			code = int(c)
		}
	}
	msg, _ = e["message"].(string)
	msg = strings.TrimSpace(msg)
	if strings.HasPrefix(msg, "{") {
		var inner map[string]any
		d := json.NewDecoder(strings.NewReader(msg))
		d.UseNumber()
		if d.Decode(&inner) == nil {
			if ie, ok := inner["error"]; ok {
				if c, m := geminiError(ie); m != "" {
					if code == 0 {
						code = c
					}
					return code, m
				}
			}
		}
	}
	return code, firstLine(msg)
}

// Aider's transcript lines that dtree reads (aider's base_coder.py and
// exceptions.py): the usage report after each reply, and the errors it
// prints before giving up with exit status 0 (Aider-AI/aider #5552, #3918).
var (
	aiderTokens = lazyRegexp(`^Tokens: ([0-9.]+[kKmM]?) sent\b.*?, ([0-9.]+[kKmM]?) received\.`)
	aiderCost   = lazyRegexp(`Cost: \$([0-9.]+) message, \$([0-9.]+) session\.`)
	aiderError  = lazyRegexp(`^(?:litellm\.[A-Za-z]*(?:Error|Exception)\b|The API provider\b|Empty response received from LLM\b|API [Ee]rror\b)`)
)

// aiderDecoder reads aider's plain transcript: the answer is the whole of
// it; the "Tokens: … Cost: …" lines are summed; an error line that no
// usage report follows (a reply that never came) is a failure.
type aiderDecoder struct {
	usage     types.Usage
	session   *float64
	n         int // lines read
	lastUsage int // the line of the last usage report
	lastError int // the line of the last error
	errText   string
}

func (d *aiderDecoder) line(b []byte) {
	d.n++
	s := strings.TrimSpace(response.StripANSI(string(b)))
	if strings.HasPrefix(s, "Tokens: ") {
		if m := aiderTokens().FindStringSubmatch(s); m != nil {
			d.usage.InputTokens = add(d.usage.InputTokens, aiderCount(m[1]))
			d.usage.OutputTokens = add(d.usage.OutputTokens, aiderCount(m[2]))
			d.lastUsage = d.n
		}
	}
	if strings.Contains(s, "Cost: $") {
		if m := aiderCost().FindStringSubmatch(s); m != nil {
			if f, err := strconv.ParseFloat(m[2], 64); err == nil {
				d.session = costOf(f) // the session's total so far
			}
			d.lastUsage = d.n
		}
	}
	if aiderError().MatchString(s) {
		d.lastError, d.errText = d.n, s
	}
}

// aiderCount reads aider's rounded counts: 42, 3.0k, 12k, 1.2M.
func aiderCount(s string) *int64 {
	mult := 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult, s = 1e3, s[:len(s)-1]
	case 'm', 'M':
		mult, s = 1e6, s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return countOf(f * mult)
}

func (*aiderDecoder) final() bool { return false } // its transcript has no end mark

func (d *aiderDecoder) end(o output) (envelope, error) {
	env := envelope{answer: strings.TrimSpace(response.StripANSI(o.stdout)), usage: d.usage}
	env.usage.CostUSD = d.session
	if d.lastError > d.lastUsage {
		env.failed, env.message = true, firstLine(d.errText)
	}
	return env, nil
}

// apiStatus puts the HTTP status of a failed API call before the CLI's
// message ("API error 401: Invalid API key · Please run /login"), unless
// the message starts with it already (claude's "API Error: 500 …").
func apiStatus(status *int64, msg string) string {
	if status == nil || *status == 0 {
		return msg
	}
	prefix := "API error " + strconv.FormatInt(*status, 10)
	if strings.HasPrefix(strings.ToLower(msg), strings.ToLower("API Error: "+strconv.FormatInt(*status, 10))) {
		return msg
	}
	if msg == "" {
		return prefix
	}
	return prefix + ": " + msg
}
