package agent

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/dtree-dev/dtree/types"
)

// Activity is one thing an agent's event stream said as it arrived
// (readme/run.md#what-the-agent-is-doing): a tool call started, a tool call
// ended, or the call's usage or turns grew. Every activity carries the
// call's usage and turns so far, so a listener needs no sum of its own.
type Activity struct {
	Kind ActivityKind
	// Tool is the tool's name as the CLI calls it ("Bash", "shell",
	// "read_file"), Arg its main argument shortened (ToolArg): a command,
	// a path, a pattern. ID pairs a tool's result with its call.
	Tool string
	Arg  string
	ID   string
	// File is the file a tool writes, where the stream says (an Edit's
	// file_path): the files a step changed.
	File string
	// Failed says a tool call ended in an error (ActivityToolEnd).
	Failed bool
	// Usage is the call's usage so far, summed as the stream reports it;
	// Turns the model turns so far (replies of the model, each of which
	// may call tools).
	Usage types.Usage
	Turns int
}

// ActivityKind says what an Activity reports.
type ActivityKind string

const (
	ActivityTool    ActivityKind = "tool"     // a tool call started
	ActivityToolEnd ActivityKind = "tool_end" // a tool call ended: Failed says how
	ActivityUsage   ActivityKind = "usage"    // the usage or the turns grew
)

// reporter is what a stream decoder embeds to report Activity: the
// runner sets emit when the call has an Observe. The tools' names are kept
// by id, so an end names its tool; that map is bounded.
type reporter struct {
	emit  func(Activity)
	usage types.Usage
	turns int
	names map[string]string
}

// maxOpenTools bounds the tool calls whose end is awaited: a stream that
// starts calls without end does not grow dtree's memory.
const maxOpenTools = 256

func (r *reporter) setReport(fn func(Activity)) { r.emit = fn }

// tool reports a tool call: its name, its input (a JSON object or a string)
// from which its argument is read, and its id.
func (r *reporter) tool(name, id string, input json.RawMessage) {
	if r.emit == nil {
		return
	}
	if id != "" {
		if r.names == nil {
			r.names = map[string]string{}
		}
		if len(r.names) < maxOpenTools {
			r.names[id] = name
		}
	}
	arg, file := ToolArg(name, input)
	r.emit(Activity{Kind: ActivityTool, Tool: name, Arg: arg, ID: id, File: file, Usage: r.usage, Turns: r.turns})
}

// toolEnd reports the end of the tool call of id.
func (r *reporter) toolEnd(id string, failed bool) {
	if r.emit == nil {
		return
	}
	name := r.names[id]
	delete(r.names, id)
	r.emit(Activity{Kind: ActivityToolEnd, Tool: name, ID: id, Failed: failed, Usage: r.usage, Turns: r.turns})
}

// progress reports the call's usage and turns so far, when they changed.
func (r *reporter) progress(u types.Usage, turns int) {
	if usageEqual(u, r.usage) && turns == r.turns {
		return
	}
	r.usage, r.turns = u, turns
	if r.emit != nil {
		r.emit(Activity{Kind: ActivityUsage, Usage: u, Turns: turns})
	}
}

func usageEqual(a, b types.Usage) bool {
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqf := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.InputTokens, b.InputTokens) && eq(a.OutputTokens, b.OutputTokens) &&
		eqf(a.CostUSD, b.CostUSD) && eq(a.DurationMS, b.DurationMS)
}

// reporting is a decoder that reports Activity.
type reporting interface{ setReport(func(Activity)) }

// MaxToolArg bounds a tool's argument as Activity carries it, in runes.
const MaxToolArg = 200

// toolArgKeys are the input fields that hold a tool's main argument, most
// telling first, across the CLIs' tools: Claude Code's Bash command,
// Read/Edit/Write file_path, Grep/Glob pattern, WebFetch url, WebSearch
// query, Task description; codex's command; gemini's and qwen's
// file_path, absolute_path, path, pattern, query.
var toolArgKeys = []string{"command", "cmd", "file_path", "absolute_path", "filePath", "path", "notebook_path",
	"pattern", "url", "query", "description", "prompt"}

// fileKeys are the fields that name the file a writing tool writes.
var fileKeys = []string{"file_path", "absolute_path", "filePath", "path", "notebook_path"}

// writeTools are the tools that write a file, by their names in each CLI,
// folded (types.FoldName).
var writeTools = map[string]bool{"edit": true, "multiedit": true, "write": true, "notebookedit": true,
	"writefile": true, "replace": true, "edittool": true, "applypatch": true, "create": true, "strreplacebasededittool": true,
	"editfile": true, "createfile": true} // amp's edit_file, create_file

// ToolArg is the short argument of a tool call for a line of text: the
// first line of its main field (toolArgKeys), or of the input itself when
// it is a string, clipped to MaxToolArg runes with "…" where it was cut;
// file is the path a writing tool writes, "" for others.
func ToolArg(name string, input json.RawMessage) (arg, file string) {
	var s string
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &s) != nil && json.Unmarshal(input, &obj) == nil {
		for _, k := range toolArgKeys {
			if v, ok := obj[k]; ok && stringOf(v) != "" {
				s = stringOf(v)
				break
			}
		}
		if writeTools[types.FoldName(name)] {
			for _, k := range fileKeys {
				if v, ok := obj[k]; ok && stringOf(v) != "" {
					file = clipRunes(stringOf(v), 4096)
					break
				}
			}
		}
	}
	return ShortText(s, MaxToolArg), file
}

// stringOf is a JSON string's value, or a list of strings joined by
// spaces (codex's command is argv), "" for anything else.
func stringOf(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(v, &list) == nil {
		return strings.Join(list, " ")
	}
	return ""
}

// ShortText is s on one line: its first non-empty line, trimmed, with
// control characters replaced, clipped to max runes with "…" where it was
// cut, and "…" also where lines were left out.
func ShortText(s string, max int) string {
	s = strings.TrimSpace(s)
	more := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = strings.TrimSpace(s[:i]), true
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > max {
		return clipRunes(s, max-1) + "…"
	}
	if more {
		s += " …"
	}
	return s
}

// clipRunes is s cut to at most n runes.
func clipRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// addUsage adds usage figure by figure; a figure unknown in either stays
// as the other has it.
func addUsage(a, b types.Usage) types.Usage {
	a.InputTokens = add(a.InputTokens, b.InputTokens)
	a.OutputTokens = add(a.OutputTokens, b.OutputTokens)
	a.CostUSD = add(a.CostUSD, b.CostUSD)
	a.DurationMS = add(a.DurationMS, b.DurationMS)
	return a
}

// Streams says whether dtree reads the CLI's output as an event stream,
// reporting Activity as it arrives: its stdout is the call's stream, which
// the run keeps in a file of its own (readme/logs.md#streams).
func (d Definition) Streams() bool { return streamingOutputs[d.Output] }

// streamingOutputs are the output formats whose decoder reports Activity.
var streamingOutputs = func() map[string]bool {
	m := map[string]bool{}
	for name, f := range formats {
		if f.new != nil {
			_, m[name] = f.new(Definition{Output: name}).(reporting)
		}
	}
	return m
}()
