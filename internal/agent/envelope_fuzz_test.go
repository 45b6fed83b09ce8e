package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecoders feeds every output format arbitrary stdout and stderr,
// seeded from the envelope and stream fixtures, reporting Activity as Run
// does when the call has an Observe: no decoder may panic, and no answer
// or tool argument may keep a terminal escape.
func FuzzDecoders(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "envelopes", "*", "*"))
	streams, _ := filepath.Glob(filepath.Join("testdata", "streams", "*", "*.jsonl"))
	files = append(files, streams...)
	for _, path := range files {
		if b, err := os.ReadFile(path); err == nil && len(b) < 1<<16 {
			f.Add(string(b), "")
		}
	}
	f.Add("{\"type\":\"result\"}\n{", "{\"error\":{\"message\":\"x\"}}")
	defs := []Definition{{Output: OutputText}, {Output: OutputJSON, AnswerPath: "result", ErrorPath: "is_error",
		StatusPath: "subtype", StatusOK: "success", APIStatusPath: "s", InputTokensPath: "a+b", CostPath: "c"}}
	defs = append(defs, Definition{Output: OutputJSONL, AnswerPath: "answer", InputTokensPath: "tokens.in", DurationPath: "ms",
		ToolNamePath: "call.name", ToolInputPath: "call.input", ToolIDPath: "call.id", ToolEndIDPath: "id", ToolErrorPath: "error"})
	for _, name := range []string{OutputStreamJSON, OutputCodex, OutputGemini, OutputCopilot, OutputOpencode, OutputAider, OutputQwen, OutputCursor} {
		defs = append(defs, Definition{Output: name})
	}
	f.Fuzz(func(t *testing.T, stdout, stderr string) {
		for _, def := range defs {
			form, err := formatOf(def)
			if err != nil {
				t.Fatal(err)
			}
			d := form.new(def)
			if rep, ok := d.(reporting); ok {
				rep.setReport(func(a Activity) {
					if strings.Contains(a.Arg, "\x1b") {
						t.Fatalf("%s: escape left in a tool's argument %q", def.Output, a.Arg)
					}
				})
			}
			if form.split != nil {
				sp := form.split(d.line)
				sp.write([]byte(stdout))
				sp.close()
			}
			env, _ := d.end(output{stdout: stdout, total: int64(len(stdout)), stderr: stderr})
			if strings.Contains(env.answer, "\x1b") {
				t.Fatalf("%s: escape left in answer %q", def.Output, env.answer)
			}
		}
	})
}
