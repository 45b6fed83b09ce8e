package vars_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dtree-dev/dtree/internal/vars"
)

func lookup(r vars.Ref) (string, bool) {
	switch r.NS + ":" + r.Name + ":" + r.Field {
	case "var:branch:":
		return "main", true
	case "var:empty:":
		return "", true
	case "run:id:":
		return "run-7", true
	case "node:4:comments", "node:a.b:output":
		return "from " + r.Name, true
	}
	return "", false
}

func TestExpand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"no references", "no references"},
		{"on {{var.branch}}", "on main"},
		{"{{var.branch}}{{var.branch}}", "mainmain"},
		{"spaces: {{ var.branch }}", "spaces: main"},
		{"empty [{{var.empty}}]", "empty []"},
		{"run {{run.id}}", "run run-7"},
		{"{{node.4.comments}} and {{node.a.b.output}}", "from 4 and from a.b"},
		// Not references: other namespaces, bad names, no field, unclosed.
		{"keep {{ci.template}} and {{ .Values.x }}", "keep {{ci.template}} and {{ .Values.x }}"},
		{"{{var.}} {{var.1x}} {{var.a-b}} {{node.4}} {{node..x}}", "{{var.}} {{var.1x}} {{var.a-b}} {{node.4}} {{node..x}}"},
		{"unclosed {{var.branch", "unclosed {{var.branch"},
		{"{{{var.branch}}}", "{main}"},
		{"{{ {{var.branch}}", "{{ main"},
		// Known shape, no value: left as written.
		{"{{var.other}}", "{{var.other}}"},
		{"multi\n{{var.branch}}\nline", "multi\nmain\nline"},
	}
	for _, tt := range tests {
		if got := vars.Expand(tt.in, lookup); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRefs(t *testing.T) {
	got := vars.Refs("a {{var.x}} b {{node.n1.exit_code}} c {{run.workdir}} {{other.y}}")
	want := []vars.Ref{
		{Start: 2, End: 11, Raw: "{{var.x}}", NS: "var", Name: "x"},
		{Start: 14, End: 35, Raw: "{{node.n1.exit_code}}", NS: "node", Name: "n1", Field: "exit_code"},
		{Start: 38, End: 53, Raw: "{{run.workdir}}", NS: "run", Name: "workdir"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d refs: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ref %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Linear in the text: 200,000 references, or megabytes of unclosed and
// unbalanced braces, take milliseconds, not minutes.
func TestExpandIsLinear(t *testing.T) {
	for name, in := range map[string]string{
		"many references": strings.Repeat("x {{var.branch}} ", 200_000),
		"unclosed":        strings.Repeat("{{", 4<<20),
		"unbalanced":      strings.Repeat("{{var.branch", 500_000) + "}}",
		"long insides":    strings.Repeat("{{"+strings.Repeat("v", 2000)+"}}", 2000),
		"closers only":    strings.Repeat("}}", 4<<20),
	} {
		start := time.Now()
		out := vars.Expand(in, lookup)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: %d bytes took %v", name, len(in), took)
		}
		if name == "many references" && strings.Count(out, "main") != 200_000 {
			t.Errorf("%s: %d expanded", name, strings.Count(out, "main"))
		}
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"{{var.a}}", "{{node.x.y.comments}}", "{{ run.id }}", "{{{{}}}}", "{{var.a", "}}{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		refs := vars.Refs(in)
		last := 0
		for _, r := range refs {
			if r.Start < last || r.End > len(in) || in[r.Start:r.End] != r.Raw || !strings.HasPrefix(r.Raw, "{{") || !strings.HasSuffix(r.Raw, "}}") {
				t.Fatalf("bad ref %+v in %q", r, in)
			}
			last = r.End
		}
		// Expanding nothing changes nothing; expanding every reference to
		// "" removes exactly the references.
		if got := vars.Expand(in, func(vars.Ref) (string, bool) { return "", false }); got != in {
			t.Fatalf("Expand with no values changed %q to %q", in, got)
		}
		removed := 0
		for _, r := range refs {
			removed += len(r.Raw)
		}
		if got := vars.Expand(in, func(vars.Ref) (string, bool) { return "", true }); len(got) != len(in)-removed {
			t.Fatalf("Expand to empty: %d bytes from %d, %d in references", len(got), len(in), removed)
		}
	})
}

func BenchmarkExpand(b *testing.B) {
	text := strings.Repeat("Deploy {{var.branch}} after {{node.4.comments}}; keep {{ci.tag}}. ", 100)
	for b.Loop() {
		vars.Expand(text, lookup)
	}
	b.SetBytes(int64(len(text)))
}
