package agent

import (
	"encoding/json"

	"github.com/dtree-dev/dtree/internal/response"
	"strings"
)

// errorLine matches a stderr line that states an error: the words CLIs and
// their libraries use for one, or an HTTP error status ("401 Unauthorized",
// "status 500").
var errorLine = lazyRegexp(`(?i)\b(?:error|errors|fatal|failed|failure|denied|unauthori[sz]ed|forbidden|invalid|refused|cannot|can't|could not|couldn't|unable to|not found|exception|panic)\b` +
	`|\b(?:http|status|code)\W{0,3}[45]\d\d\b|\b[45]\d\d (?:[A-Z][a-z]+|Too Many)`)

// noiseLine matches stderr lines that never say what went wrong: codex's
// note on every exec, gemini's on a cached login, node's deprecation
// warnings and the frames of a stack trace,
var noiseLine = lazyRegexp(`^(?:Reading additional input from stdin\.*|Loaded cached credentials\.?` +
	`|\(node:\d+\) |\(Use .node --trace-|at \S` +
	// and the bare structure of a JSON object printed over several lines
	// (qwen's "error": {), which says nothing by itself
	`|[\[\]{}(),;]+$|"[^"]*":\s*[\[{]$)`)

// jsonField matches one field of a JSON object printed over several
// lines, such as the error qwen prints on stderr when it stops:
//
//	{
//	  "error": {
//	    "type": "FatalCancellationError",
//	    "message": "Operation cancelled.",
//	    "code": 130
//	  }
//	}
//
// A "message" field's text is read as a line of its own; the others
// ("type", "code": 130) say nothing by themselves unless they state an
// error ("code": 429), and are skipped.
var jsonField = lazyRegexp(`^"([A-Za-z_]+)":\s*("(?:[^"\\]|\\.)*"|[-\w.]+),?$`)

// hintLine matches the advice CLIs print under an error (copilot's
// "• Run 'gh auth login' to authenticate"): quoted only when nothing
// else is there.
var hintLine = lazyRegexp(`(?i)^(?:[•·*-]\s|hint:|tip:|try |run )`)

// stderrLine is the line of a failed call's stderr that says what went
// wrong, for its error message: the last line that states an error, else
// the last line that is neither known noise nor a hint, else the last hint; "" when there is none. The last
// line alone is often a hint (copilot's "• Run 'gh auth login'…") or noise
// (codex's "Reading additional input from stdin...").
func stderrLine(tail string) string {
	var last, hint string
	lines := strings.Split(response.StripANSI(tail), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if m := jsonField().FindStringSubmatch(line); m != nil {
			var text string
			switch {
			case m[1] == "message" && json.Unmarshal([]byte(m[2]), &text) == nil:
				line = strings.TrimSpace(text)
			case !errorLine().MatchString(line):
				continue
			}
		}
		switch {
		case line == "" || noiseLine().MatchString(line):
		case hintLine().MatchString(line):
			if hint == "" {
				hint = line
			}
		case errorLine().MatchString(line):
			return clip(line)
		case last == "":
			last = line
		}
	}
	return clip(firstNonEmpty(last, hint))
}
