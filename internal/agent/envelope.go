package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// claudeCut is where some Claude Code versions cut piped stdout
// (anthropics/claude-code #77112, agent-clis.md §1).
const claudeCut = 64 << 10

// envelope is what a CLI's stdout says beyond the answer itself.
type envelope struct {
	status  string // the status field when it said failure
	answer  string
	isError bool
	usage   types.Usage
}

// parseEnvelope reads the answer, error flag and usage from stdout (the
// kept tail; total is the whole length). For JSON output the object is
// found between the first '{' and the last '}' after removing terminal
// escapes; parsing the answer itself is the response parser's job.
func parseEnvelope(def Definition, stdout string, total int64, truncated bool) (envelope, error) {
	text := stripANSI(stdout)
	switch def.Output {
	case OutputText, "":
		return envelope{answer: strings.TrimSpace(text)}, nil
	case OutputJSON:
	default:
		return envelope{}, fmt.Errorf("has unknown output format %q", def.Output)
	}

	obj, err := decodeObject(text)
	if err != nil {
		reason := "printed no JSON envelope: " + err.Error()
		switch {
		case total == claudeCut:
			reason += fmt.Sprintf(" (stdout is exactly %d bytes: the CLI probably truncated it)", claudeCut)
		case truncated:
			reason += fmt.Sprintf(" (only the last %d of %d bytes of stdout were kept)", len(stdout), total)
		}
		return envelope{}, errors.New(reason)
	}

	var env envelope
	if def.AnswerPath == "" {
		env.answer = text[strings.IndexByte(text, '{') : strings.LastIndexByte(text, '}')+1]
	} else if v, ok := lookup(obj, def.AnswerPath); ok {
		env.answer = answerText(v)
	}
	if def.ErrorPath != "" {
		v, _ := lookup(obj, def.ErrorPath)
		env.isError = v == true
	}
	if def.StatusPath != "" {
		if v, ok := lookup(obj, def.StatusPath); ok {
			if s, _ := v.(string); s != def.StatusOK {
				env.isError, env.status = true, fmt.Sprint(v)
			}
		}
	}
	env.usage = types.Usage{
		InputTokens:  intAt(obj, def.InputTokensPath),
		OutputTokens: intAt(obj, def.OutputTokensPath),
		CostUSD:      floatAt(obj, def.CostPath),
		DurationMS:   intAt(obj, def.DurationPath),
	}
	return env, nil
}

// ansi matches terminal escape sequences: CSI (colours, cursor, modes such
// as "\x1b[?1004l"), OSC (titles, links), charset selection, and the
// two-byte ones ("\x1b=", "\x1bM").
var ansi = regexp.MustCompile("\x1b(?:\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|[()#][0-9A-Za-z]|[0-~])")

// stripANSI removes terminal escape sequences from s.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansi.ReplaceAllString(s, "")
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

func floatAt(obj map[string]any, path string) *float64 {
	v, _ := lookup(obj, path)
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// intAt reads a count that the CLI may write as 12 or 12.0.
func intAt(obj map[string]any, path string) *int64 {
	v, _ := lookup(obj, path)
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	if i, err := n.Int64(); err == nil {
		return &i
	}
	f, err := n.Float64()
	if err != nil || f < math.MinInt64 || f >= math.MaxInt64 {
		return nil
	}
	i := int64(math.Round(f))
	return &i
}
