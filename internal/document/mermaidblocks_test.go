package document

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMermaidBlocks(t *testing.T) {
	bodies := func(src string) []string {
		var out []string
		for _, r := range MermaidBlocks([]byte(src)) {
			out = append(out, src[r[0]:r[1]])
		}
		return out
	}
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"mmd file", "flowchart TD\n  A --> B\n", []string{"flowchart TD\n  A --> B\n"}},
		{"mmd with comments and front matter", "%% a comment\n---\ntitle: x\n---\ngraph LR\nA-->B", []string{"%% a comment\n---\ntitle: x\n---\ngraph LR\nA-->B"}},
		{"two blocks", "# T\n\n```mermaid\nflowchart TD\nA-->B\n```\n\ntext\n\n```mermaid\ngraph LR\nC-->D\n```\n",
			[]string{"flowchart TD\nA-->B\n", "graph LR\nC-->D\n"}},
		{"sequence diagram skipped", "```mermaid\nsequenceDiagram\nA->>B: hi\n```\n```mermaid\nflowchart TD\nX\n```\n", []string{"flowchart TD\nX\n"}},
		{"other language skipped", "```go\nflowchart TD\n```\n", nil},
		{"tildes and longer fence", "~~~~ mermaid\nflowchart TD\n```\nA\n~~~~\n", []string{"flowchart TD\n```\nA\n"}},
		{"indented fence", "   ```Mermaid\nflowchart\n   ```\n", []string{"flowchart\n"}},
		{"unclosed block runs to the end", "```mermaid\nflowchart TD\nA-->B", []string{"flowchart TD\nA-->B"}},
		{"no blocks", "# README\n\nnothing here\n", nil},
		{"CRLF", "```mermaid\r\nflowchart TD\r\nA\r\n```\r\n", []string{"flowchart TD\r\nA\r\n"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, bodies(tt.src))
		})
	}
}
