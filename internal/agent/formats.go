package agent

import (
	"encoding/json"
	"regexp"
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

// geminiDecoder reads gemini --output-format json: the answer is
// "response", an "error" object a failure; usage is per model under
// stats.models, summed. In JSON mode gemini writes its error object to
// stderr when it fails.
type geminiDecoder struct{ fin bool }

// line gets each top-level object as it arrives: the envelope has the
// response, or the error.
func (d *geminiDecoder) line(b []byte) {
	var obj map[string]json.RawMessage
	if d.fin || json.Unmarshal(b, &obj) != nil {
		return
	}
	_, response := obj["response"]
	_, failed := obj["error"]
	d.fin = response || failed
}

func (d *geminiDecoder) final() bool { return d.fin }

func (*geminiDecoder) end(o output) (envelope, error) {
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
		code, msg := geminiError(e)
		what, known := geminiHTTP[code]
		switch {
		case msg == "" && code == 0:
			continue
		case msg == "" && known:
			return httpMeaning(code, what)
		case msg == "":
			return "HTTP " + strconv.Itoa(code)
		case code == 0 || known: // the exit status says what the code means
			return msg
		default:
			return "HTTP " + strconv.Itoa(code) + ": " + msg
		}
	}
	return ""
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
	aiderTokens = regexp.MustCompile(`^Tokens: ([0-9.]+[kKmM]?) sent\b.*?, ([0-9.]+[kKmM]?) received\.`)
	aiderCost   = regexp.MustCompile(`Cost: \$([0-9.]+) message, \$([0-9.]+) session\.`)
	aiderError  = regexp.MustCompile(`^(?:litellm\.[A-Za-z]*(?:Error|Exception)\b|The API provider\b|Empty response received from LLM\b|API [Ee]rror\b)`)
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
		if m := aiderTokens.FindStringSubmatch(s); m != nil {
			d.usage.InputTokens = add(d.usage.InputTokens, aiderCount(m[1]))
			d.usage.OutputTokens = add(d.usage.OutputTokens, aiderCount(m[2]))
			d.lastUsage = d.n
		}
	}
	if strings.Contains(s, "Cost: $") {
		if m := aiderCost.FindStringSubmatch(s); m != nil {
			if f, err := strconv.ParseFloat(m[2], 64); err == nil {
				d.session = costOf(f) // the session's total so far
			}
			d.lastUsage = d.n
		}
	}
	if aiderError.MatchString(s) {
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
