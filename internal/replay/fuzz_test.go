package replay

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// FuzzParseAnswers feeds the answers file reader arbitrary bytes, seeded
// from the quickstart's answers: it must not panic, an error must name the
// file, and every reply it accepts must render. A Runner over what it
// accepts (each key a node of its own) answers each reply once, as a run
// or a validation, and then fails the node's next call, naming it.
func FuzzParseAnswers(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "quickstart", "update-deps.answers.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("a: [ok, \"fail: x\", raw: Yes, {completed: true}]\nb: &r error: boom\nc: *r\n"))
	f.Add([]byte("- ok\n"))
	f.Add([]byte("a: [\"raw:\", \"error:\", \"  \"]\n"))
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
		nodes, err := a.Resolve(func(key string) []string { return []string{key} },
			func(id string) (string, string) { return id, types.RoleDecision }, func(string) string { return "" })
		if err != nil {
			t.Fatalf("every key is its own node, yet: %v", err)
		}
		r := NewRunner(&Plan{Answers: "answers.yaml", Nodes: nodes})
		def := agent.Definition{Name: "replay", InProcess: true}
		for id, n := range nodes {
			for i := range n.Replies {
				purpose := agent.PurposeRun
				if i%2 == 1 {
					purpose = agent.PurposeValidate
				}
				res, err := r.Call(t.Context(), agent.Call{Def: def, Request: agent.Request{Node: id, Purpose: purpose}})
				var ce *CallError
				if err != nil && (!errors.As(err, &ce) || ce.Node != id || res.ExitCode == -1) {
					t.Fatalf("node %q reply %d: %v", id, i, err)
				}
			}
			_, err := r.Call(t.Context(), agent.Call{Def: def, Request: agent.Request{Node: id, Purpose: agent.PurposeRun}})
			var ce *CallError
			if !errors.As(err, &ce) || ce.Node != id {
				t.Fatalf("node %q: a call past its replies: %v", id, err)
			}
		}
		if left := r.Unused(); len(left) > 0 {
			t.Fatalf("every reply was used, yet: %+v", left)
		}
	})
}
