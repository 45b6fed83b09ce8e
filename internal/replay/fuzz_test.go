package replay

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseAnswers feeds the answers file reader arbitrary bytes, seeded
// from the quickstart's answers: it must not panic, an error must name the
// file, and every reply it accepts must render.
func FuzzParseAnswers(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "quickstart", "update-deps.answers.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("a: [ok, \"fail: x\", raw: Yes, {completed: true}]\nb: &r error: boom\nc: *r\n"))
	f.Add([]byte("- ok\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse("answers.yaml", data)
		if err != nil {
			if fe, ok := err.(*FileError); !ok || fe.Path != "answers.yaml" {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		for _, e := range a.Entries {
			for _, r := range e.Replies {
				for _, decision := range []bool{false, true} {
					Render(r.Text, decision, false)
					Render(r.Text, false, true)
				}
			}
		}
	})
}
