package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecoders feeds every output format arbitrary stdout and stderr,
// seeded from the envelope fixtures: no decoder may panic, and no answer
// may keep a terminal escape.
func FuzzDecoders(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "envelopes", "*", "*"))
	for _, path := range files {
		if b, err := os.ReadFile(path); err == nil && len(b) < 1<<16 {
			f.Add(string(b), "")
		}
	}
	f.Add("{\"type\":\"result\"}\n{", "{\"error\":{\"message\":\"x\"}}")
	defs := []Definition{{Output: OutputText}, {Output: OutputJSON, AnswerPath: "result", ErrorPath: "is_error",
		StatusPath: "subtype", StatusOK: "success", APIStatusPath: "s", InputTokensPath: "a+b", CostPath: "c"}}
	for _, name := range []string{OutputStreamJSON, OutputCodex, OutputGemini, OutputCopilot, OutputOpencode, OutputAider, OutputQwen} {
		defs = append(defs, Definition{Output: name})
	}
	f.Fuzz(func(t *testing.T, stdout, stderr string) {
		for _, def := range defs {
			env, _ := decodeAll(def, output{stdout: stdout, total: int64(len(stdout)), stderr: stderr})
			if strings.Contains(env.answer, "\x1b") {
				t.Fatalf("%s: escape left in answer %q", def.Output, env.answer)
			}
		}
	})
}
