package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dtree-dev/dtree/internal/response"
	"math"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// claudeCut is where some Claude Code versions cut piped stdout
// (anthropics/claude-code #77112, readme/clis.md#claude).
const claudeCut = 64 << 10

// envelope is what a CLI's output says: the answer, and beyond it.
type envelope struct {
	answer string
	usage  types.Usage
	// failed is set when the CLI reported a failure, whatever its exit
	// code; status is its failure status ("error_max_turns") when it gave
	// one, message its own words on what went wrong.
	failed  bool
	status  string
	message string
}

// output is what a call left for its decoder to read once it is over.
type output struct {
	stdout    string // the kept tail of stdout, escapes and all
	total     int64  // stdout's whole length
	truncated bool   // stdout was longer than the tail
	stderr    string // the kept tail of stderr
}

// decoder reads one output format.
type decoder interface {
	// line gets stdout piece by piece as it arrives, split as the format
	// says (format.split): each line without its '\n', or each top-level
	// JSON object, with terminal escapes left in. A decoder reads only what
	// it needs of it and keeps nothing it is given.
	line(b []byte)
	// final reports whether the pieces so far hold the CLI's last word:
	// the event that ends its stream, or its whole envelope. Run then
	// gives a CLI that does not exit a short while before stopping it
	// (several hang after answering: readme/clis.md#how-every-built-in-is-run).
	final() bool
	// end reads the call's output once the CLI has exited. The envelope
	// carries what could be read also when the error says the output was
	// unreadable (a message from stderr, say).
	end(o output) (envelope, error)
}

// splitter cuts stdout into the pieces a decoder reads as it arrives.
type splitter interface {
	write(p []byte)
	close() // hands over what is left at the end
}

func splitLines(fn func([]byte)) splitter   { return &lines{fn: fn} }
func splitObjects(fn func([]byte)) splitter { return &objects{fn: fn} }

// format is one output format: how its decoder reads, and what dtree knows
// of the CLI that prints it.
type format struct {
	new func(def Definition) decoder
	// split feeds stdout to the decoder as it arrives: by lines (event
	// streams), by top-level JSON objects (one envelope), or, when nil,
	// not at all (the whole output is read at the end).
	split func(fn func([]byte)) splitter
	// reports are the usage figures the format can carry; nil means those
	// the definition has paths for.
	reports []string
	// exits say what the CLI's exit statuses mean.
	exits map[int]string
	// silent is why a CLI of this format may print nothing and exit 0, said
	// when it gives no answer.
	silent string
}

// formats are the output formats by name (Definition.Output; "" is text).
var formats = map[string]format{
	OutputText:  {new: func(Definition) decoder { return textDecoder{} }},
	OutputJSON:  {new: func(def Definition) decoder { return &jsonDecoder{def: def} }, split: splitObjects},
	OutputJSONL: {new: func(def Definition) decoder { return &jsonlDecoder{jsonDecoder: jsonDecoder{def: def}} }, split: splitObjects},
	OutputStreamJSON: {new: func(Definition) decoder { return &streamJSONDecoder{} }, split: splitLines,
		reports: []string{usageInput, usageOutput, usageCost, usageDuration}},
	OutputCodex: {new: func(Definition) decoder { return &codexDecoder{} }, split: splitLines,
		reports: []string{usageInput, usageOutput}},
	OutputCopilot: {new: func(Definition) decoder { return &copilotDecoder{} }, split: splitLines,
		reports: []string{usageDuration},
		silent:  "Copilot prints nothing and exits 0 when its login is stale: run copilot and /login, or set COPILOT_GITHUB_TOKEN"},
	OutputOpencode: {new: func(Definition) decoder { return &opencodeDecoder{} }, split: splitLines,
		reports: []string{usageInput, usageOutput, usageCost}},
	OutputGemini: {new: func(Definition) decoder { return &geminiDecoder{} }, split: splitObjects,
		reports: []string{usageInput, usageOutput, usageDuration}, exits: geminiExits},
	OutputCursor: {new: func(Definition) decoder { return &cursorDecoder{} }, split: splitObjects,
		reports: []string{usageDuration}},
	OutputAider: {new: func(Definition) decoder { return &aiderDecoder{} }, split: splitLines,
		reports: []string{usageInput, usageOutput, usageCost}},
	OutputQwen: {new: func(Definition) decoder { return newQwenDecoder() }, split: splitObjects,
		reports: []string{usageInput, usageOutput, usageDuration}},
}

// The usage figures, by their JSON names.
const (
	usageInput    = "input_tokens"
	usageOutput   = "output_tokens"
	usageCost     = "cost_usd"
	usageDuration = "duration_ms"
)

// OutputFormats returns the names Definition.Output may take.
func OutputFormats() []string {
	return []string{OutputText, OutputJSON, OutputJSONL, OutputStreamJSON, OutputCodex, OutputGemini, OutputCopilot, OutputOpencode, OutputAider, OutputQwen, OutputCursor}
}

func formatOf(def Definition) (format, error) {
	name := def.Output
	if name == "" {
		name = OutputText
	}
	f, ok := formats[name]
	if !ok {
		return format{}, fmt.Errorf("CLI %s has unknown output format %q (known: %s)", def.Name, def.Output, strings.Join(OutputFormats(), ", "))
	}
	return f, nil
}

// decodeAll reads a whole output at once, as Run reads it piecewise.
func decodeAll(def Definition, o output) (envelope, error) {
	f, err := formatOf(def)
	if err != nil {
		return envelope{}, err
	}
	d := f.new(def)
	if f.split != nil {
		sp := f.split(d.line)
		sp.write([]byte(o.stdout))
		sp.close()
	}
	return d.end(o)
}

// textDecoder: the whole of stdout, escapes removed, is the answer.
type textDecoder struct{}

func (textDecoder) line([]byte) {}
func (textDecoder) final() bool { return false } // text has no end mark

func (textDecoder) end(o output) (envelope, error) {
	return envelope{answer: strings.TrimSpace(response.StripANSI(o.stdout))}, nil
}

// jsonDecoder reads a custom CLI's JSON through the definition's paths:
// one object, or several — a JSON array of events (qwen -o json), or one
// event a line (qwen -o stream-json) — of which the last that holds the
// answer path (or says it failed at the error path) is the envelope, the
// others being the CLI's progress. Terminal escapes are removed first.
// Parsing the answer itself is the response parser's job.
type jsonDecoder struct {
	def Definition
	fin bool
	// last is the last object read that holds the answer path or whose
	// error path is true.
	last map[string]any
}

// line gets each top-level object as it arrives (each element of an
// array too): one that holds the answer (or says is_error) is the
// envelope, the CLI's last word until another comes. Without an answer
// path any object could be the answer, or not yet all of it.
func (d *jsonDecoder) line(b []byte) {
	if d.def.AnswerPath == "" {
		return
	}
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = []byte(response.StripANSI(string(b)))
	}
	obj, err := decodeObject(string(b))
	if err != nil {
		return
	}
	_, answer := lookup(obj, d.def.AnswerPath)
	failed, _ := lookup(obj, d.def.ErrorPath)
	if answer || failed == true {
		d.last, d.fin = obj, true
	}
}

func (d *jsonDecoder) final() bool { return d.fin }

func (d *jsonDecoder) end(o output) (envelope, error) {
	def := d.def
	text := response.StripANSI(o.stdout)
	obj := d.last
	if obj == nil {
		var err error
		if obj, err = decodeObject(text); err != nil {
			return envelope{}, noEnvelope(err, text, o)
		}
	}
	var env envelope
	if def.AnswerPath == "" {
		env.answer = text[strings.IndexByte(text, '{') : strings.LastIndexByte(text, '}')+1]
	} else if v, ok := lookup(obj, def.AnswerPath); ok {
		env.answer = response.StripANSI(answerText(v))
	} else if failed, _ := lookup(obj, def.ErrorPath); failed != true {
		// Not an empty answer: the CLI's JSON is not what the definition
		// says it is.
		return envelope{}, fmt.Errorf("answer_path %q not found in the output%s", def.AnswerPath, stdoutNote(text))
	}
	if def.ErrorPath != "" {
		v, _ := lookup(obj, def.ErrorPath)
		if env.failed = v == true; env.failed {
			env.message = firstLine(env.answer)
		}
	}
	if def.StatusPath != "" {
		if v, ok := lookup(obj, def.StatusPath); ok {
			if s, _ := v.(string); s != def.StatusOK {
				env.failed, env.status = true, fmt.Sprint(v)
				if env.message == "" {
					env.message = firstLine(env.answer)
				}
			}
		}
	}
	if env.failed {
		env.message = apiStatus(intAt(obj, def.APIStatusPath), env.message)
	}
	env.usage = types.Usage{
		InputTokens:  intAt(obj, def.InputTokensPath),
		OutputTokens: intAt(obj, def.OutputTokensPath),
		CostUSD:      floatAt(obj, def.CostPath),
		DurationMS:   intAt(obj, def.DurationPath),
	}
	return env, nil
}

// noEnvelope is the error for an output whose JSON could not be read:
// what was wrong, and what stdout said instead (a refusal in plain text).
func noEnvelope(err error, text string, o output) error {
	reason := "printed no JSON envelope: " + err.Error()
	switch {
	case o.total == claudeCut:
		reason += fmt.Sprintf(" (stdout is exactly %d bytes: the CLI probably truncated it)", claudeCut)
	case o.truncated:
		reason += fmt.Sprintf(" (only the last %d of %d bytes of stdout were kept)", len(o.stdout), o.total)
	}
	if line := firstLine(text); line != "" && !strings.HasPrefix(line, "{") {
		reason += "; stdout: " + line
	}
	return errors.New(reason)
}

// stdoutNote quotes the first line of stdout when it is not JSON (a
// refusal in plain text).
func stdoutNote(text string) string {
	if line := firstLine(text); line != "" && !strings.HasPrefix(line, "{") && !strings.HasPrefix(line, "[") {
		return "; stdout: " + line
	}
	return ""
}

// errorValue reads an error field: true, or a non-empty string, or an
// object (with a "message" when it says more) is a failure.
func errorValue(v any) (failed bool, message string) {
	switch x := v.(type) {
	case bool:
		return x, ""
	case string:
		return strings.TrimSpace(x) != "", firstLine(x)
	case map[string]any:
		if len(x) == 0 {
			return false, ""
		}
		for _, k := range []string{"message", "type", "name", "code"} {
			if s := strings.TrimSpace(fmt.Sprint(x[k])); x[k] != nil && s != "" {
				return true, firstLine(s)
			}
		}
		return true, ""
	}
	return false, ""
}

func decodeObject(text string) (map[string]any, error) {
	start, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return nil, errors.New("no JSON object in stdout")
	}
	d := json.NewDecoder(strings.NewReader(text[start : end+1]))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// lookup follows a dotted path ("usage.input_tokens"); a numeric part
// indexes an array.
func lookup(v any, path string) (any, bool) {
	if path == "" {
		return nil, false
	}
	for part := range strings.SplitSeq(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// answerText is the answer as text: a string as is, anything else (a
// structured answer) as JSON, null as nothing.
func answerText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// floatAt reads a figure at path, or the sum of those at paths joined by
// "+"; nil when none is there, NaN when one is not a number.
func floatAt(obj map[string]any, path string) *float64 {
	var sum *float64
	for p := range strings.SplitSeq(path, "+") {
		v, ok := lookup(obj, strings.TrimSpace(p))
		if !ok || v == nil {
			continue
		}
		n, ok := v.(json.Number)
		if !ok {
			sum = add(sum, badCost())
			continue
		}
		f, err := n.Float64()
		if err != nil && !math.IsInf(f, 0) {
			f = math.NaN()
		}
		sum = add(sum, costOf(f))
	}
	return sum
}

// intAt reads a count that the CLI may write as 12 or 12.0, or the sum of
// those at paths joined by "+"; nil when none is there, badCount when one
// is not a number.
func intAt(obj map[string]any, path string) *int64 {
	var sum *int64
	for p := range strings.SplitSeq(path, "+") {
		v, ok := lookup(obj, strings.TrimSpace(p))
		if !ok || v == nil {
			continue
		}
		n, ok := v.(json.Number)
		if !ok {
			sum = add(sum, countOf(math.NaN()))
			continue
		}
		if i, err := n.Int64(); err == nil {
			sum = add(sum, countOfInt(i))
			continue
		}
		f, err := n.Float64()
		if err != nil {
			f = math.NaN()
		}
		sum = add(sum, countOf(f))
	}
	return sum
}
