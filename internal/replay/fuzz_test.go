package replay

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// FuzzParseAnswers feeds the answers file reader arbitrary bytes, seeded
// from the quickstart's answers: it must not panic, an error must name the
// file, and every reply it accepts must render. A Runner over what it
// accepts (each key a node of its own) answers each reply once, as a run
// or a validation, and then fails the node's (or the visit's) next call,
// naming it.
func FuzzParseAnswers(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "quickstart", "update-deps.answers.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("a: [ok, \"fail: x\", raw: Yes, {completed: true}]\nb: &r error: boom\nc: *r\n"))
	f.Add([]byte("- ok\n"))
	f.Add([]byte("a: [\"raw:\", \"error:\", \"  \"]\n"))
	f.Add([]byte("a:\n  visit 1: [ok]\n  visit 2: [\"fail: x\", ok]\nb: {visit 3: Yes}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse("answers.yaml", data)
		if err != nil {
			if fe, ok := err.(*FileError); !ok || fe.Path != "answers.yaml" {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		for _, e := range a.Entries {
			all := slices.Clone(e.Replies)
			for _, v := range e.Visits {
				all = append(all, v.Replies...)
			}
			for _, r := range all {
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
			lists := map[int][]Reply{1: n.Replies} // a list answers any visit
			if n.Visits != nil {
				lists = map[int][]Reply{}
				for v, vr := range n.Visits {
					lists[v] = vr.Replies
				}
			}
			for visit, replies := range lists {
				for i := range replies {
					purpose := agent.PurposeRun
					if i%2 == 1 {
						purpose = agent.PurposeValidate
					}
					res, err := r.Call(t.Context(), agent.Call{Def: def, Request: agent.Request{Node: id, Purpose: purpose, Visit: visit}})
					var ce *CallError
					if err != nil && (!errors.As(err, &ce) || ce.Node != id || res.ExitCode == -1) {
						t.Fatalf("node %q visit %d reply %d: %v", id, visit, i, err)
					}
				}
				_, err := r.Call(t.Context(), agent.Call{Def: def, Request: agent.Request{Node: id, Purpose: agent.PurposeRun, Visit: visit}})
				var ce *CallError
				if !errors.As(err, &ce) || ce.Node != id {
					t.Fatalf("node %q: a call past the replies of visit %d: %v", id, visit, err)
				}
			}
		}
		if left := r.Unused(); len(left) > 0 {
			t.Fatalf("every reply was used, yet: %+v", left)
		}
	})
}
