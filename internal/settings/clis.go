package settings

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/yamlread"
	"github.com/dtree-dev/dtree/types"
)

// customCLI is one definition under clis:.
type customCLI struct {
	def  agent.Definition // Name is the key, in lower case
	line int
}

// cliName is what a custom CLI may be called: it is typed in tags and on
// the command line.
var cliName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// typeErrorLine finds the line in yaml.v3's decoding errors ("line 4: …").
var typeErrorLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// cliFields are the fields of a definition under clis:, from agent.Definition's
// yaml tags. The name is the key above them, not a field.
func cliFields() []string {
	var out []string
	t := reflect.TypeFor[agent.Definition]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" && name != "name" {
			out = append(out, name)
		}
	}
	return out
}

// readCLIs reads the clis: mapping of one file and checks each definition.
func readCLIs(n *yaml.Node, src Source) ([]customCLI, error) {
	if isNull(n) {
		return nil, nil
	}
	at := func(line int) Source { s := src; s.Line = line; return s }
	if n.Kind != yaml.MappingNode {
		return nil, &Error{Source: at(n.Line), Key: KeyCLIs, Err: errors.New("must be a mapping of CLI names to their definitions"),
			Hint: "write clis: then, indented, a name and under it binary:, args: and so on; 'dtree docs settings' shows the format"}
	}
	if expandedSize(n, maxDefinitions) > maxDefinitions {
		return nil, &Error{Source: at(n.Line), Key: KeyCLIs, Err: fmt.Errorf("larger than %d KiB with its aliases (*name) expanded", maxDefinitions>>10),
			Hint: "write the definitions out; an alias that repeats a long value many times is no CLI's"}
	}
	var out []customCLI
	seen := map[string]string{} // folded name -> as written
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], yamlread.Resolve(n.Content[i+1])
		name := kn.Value
		key := KeyCLIs + "." + name
		if !cliName.MatchString(name) {
			return nil, &Error{Source: at(kn.Line), Key: key, Err: errors.New("not a usable CLI name"),
				Hint: "name a CLI with letters, digits, '-' and '_', starting with a letter"}
		}
		if prev, dup := seen[types.FoldName(name)]; dup {
			return nil, &Error{Source: at(kn.Line), Key: key, Err: fmt.Errorf("the same CLI name as %q (case, '-' and '_' do not count)", prev),
				Hint: "keep one of the two definitions"}
		}
		seen[types.FoldName(name)] = name
		def, err := readCLI(vn, key, kn.Line, at)
		if err != nil {
			return nil, err
		}
		def.Name = strings.ToLower(name)
		out = append(out, customCLI{def: def, line: kn.Line})
	}
	return out, nil
}

// readCLI decodes and checks one definition; key is "clis.NAME", on line
// nameLine.
func readCLI(n *yaml.Node, key string, nameLine int, at func(int) Source) (agent.Definition, error) {
	var def agent.Definition
	fix := "'dtree docs settings' describes a CLI definition"
	if n.Kind != yaml.MappingNode {
		return def, &Error{Source: at(nameLine), Key: key, Err: errors.New("must be a mapping of fields (binary:, args:, …)"), Hint: fix}
	}
	fields := cliFields()
	lines := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		f := n.Content[i]
		if !slices.Contains(fields, f.Value) {
			return def, &Error{Source: at(f.Line), Key: key + "." + f.Value, Err: errors.New("not a field of a CLI definition"),
				Hint: "the fields are: " + strings.Join(fields, ", ")}
		}
		lines[f.Value] = f.Line
	}
	if err := n.Decode(&def); err != nil {
		msg := err.Error()
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
		}
		line := nameLine
		if m := typeErrorLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		return def, &Error{Source: at(line), Key: key, Err: errors.New(msg), Hint: fix}
	}
	bad := func(field string, err error, hint string) error {
		line := lines[field]
		if line == 0 {
			line = nameLine
		}
		return &Error{Source: at(line), Key: key + "." + field, Err: err, Hint: hint}
	}
	if strings.TrimSpace(def.Binary) == "" {
		return def, bad("binary", errors.New("missing; a CLI needs the program to run"),
			"add binary: with the program's name (looked up on PATH) or path")
	}
	switch def.PromptVia {
	case "":
		def.PromptVia = agent.PromptArg
	case agent.PromptArg, agent.PromptStdin, agent.PromptFile:
	default:
		return def, bad("prompt_via", fmt.Errorf("%q is not arg, stdin or file", def.PromptVia),
			"set prompt_via to arg (the prompt in args where {prompt} is), stdin, or file (a file whose path is in args where {prompt_file} is)")
	}
	placeholder := map[agent.PromptVia]string{agent.PromptArg: "{prompt}", agent.PromptFile: "{prompt_file}"}[def.PromptVia]
	if placeholder != "" && !slices.ContainsFunc(def.Args, func(a string) bool { return strings.Contains(a, placeholder) }) {
		return def, bad("args", fmt.Errorf("no %s in them, so the prompt would not reach the CLI (prompt_via is %s)", placeholder, def.PromptVia),
			fmt.Sprintf("put %s in args where the CLI takes the prompt, or set prompt_via: stdin", placeholder))
	}
	if len(def.MaxTurnsArgs) > 0 && !slices.ContainsFunc(def.MaxTurnsArgs, func(a string) bool { return strings.Contains(a, "{max_turns}") }) {
		return def, bad("max_turns_args", errors.New("no {max_turns} in them, so the CLI would not get the number"),
			"write them as the CLI takes its turn limit, with {max_turns} where the number goes: [--max-turns, \"{max_turns}\"]")
	}
	if len(def.MaxCostArgs) > 0 && !slices.ContainsFunc(def.MaxCostArgs, func(a string) bool { return strings.Contains(a, "{max_cost}") }) {
		return def, bad("max_cost_args", errors.New("no {max_cost} in them, so the CLI would not get the amount"),
			"write them as the CLI takes its spending limit, with {max_cost} where the amount in US dollars goes: [--max-budget-usd, \"{max_cost}\"]")
	}
	switch def.Output {
	case "":
		def.Output = agent.OutputText
	case agent.OutputText, agent.OutputJSON, agent.OutputJSONL, agent.OutputStreamJSON:
	default:
		return def, bad("output", fmt.Errorf("%q is not text, json, jsonl or stream-json", def.Output),
			"set output to text (the whole stdout is the answer), json (one JSON object; answer_path names the answer), jsonl (one JSON event a line; answer_path names the answer in the event that has it) or stream-json (Claude Code's event stream)")
	}
	if (def.Output == agent.OutputJSON || def.Output == agent.OutputJSONL) && strings.TrimSpace(def.AnswerPath) == "" {
		return def, bad("answer_path", fmt.Errorf("missing; output %s needs the path of the answer in the JSON", def.Output),
			"add answer_path: with the dotted path of the answer text (result, or response.text)")
	}
	tools := []struct{ field, value string }{{"tool_name_path", def.ToolNamePath}, {"tool_input_path", def.ToolInputPath},
		{"tool_id_path", def.ToolIDPath}, {"tool_end_id_path", def.ToolEndIDPath}, {"tool_error_path", def.ToolErrorPath}}
	for _, t := range tools {
		switch {
		case t.value == "":
		case def.Output != agent.OutputJSONL:
			return def, bad(t.field, fmt.Errorf("read only with output: jsonl (output is %s)", def.Output),
				"set output: jsonl for a CLI that prints one JSON event a line, or remove "+t.field)
		case (t.field == "tool_input_path" || t.field == "tool_id_path") && def.ToolNamePath == "":
			return def, bad(t.field, errors.New("set without tool_name_path, the path that says an event is a tool call"),
				"add tool_name_path: with the path of the tool's name in the events that call a tool")
		case t.field == "tool_error_path" && def.ToolEndIDPath == "":
			return def, bad(t.field, errors.New("set without tool_end_id_path, the path that says an event ends a tool call"),
				"add tool_end_id_path: with the path of the call's id in the events that end a tool call")
		}
	}
	for name := range def.Env {
		if name == "" || strings.ContainsAny(name, "= \t") {
			return def, bad("env", fmt.Errorf("%q is not a variable name", name), "name each variable in env: without spaces or '='")
		}
	}
	return def, nil
}

// maxDefinitions bounds a file's CLI definitions with their aliases
// expanded: a file of a megabyte can name one long string a hundred
// thousand times, which would print as gigabytes (settings list --json).
const maxDefinitions = 1 << 20

// expandedSize is the size of n with aliases followed: its scalars' bytes
// and one for each node, counted no further than just past limit.
func expandedSize(n *yaml.Node, limit int) int {
	size := 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || size > limit {
			return
		}
		if n.Kind == yaml.AliasNode {
			walk(n.Alias)
			return
		}
		size += 1 + len(n.Value)
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return size
}
