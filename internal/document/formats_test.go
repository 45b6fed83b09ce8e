package document_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
)

// The words the commands say about formats all come from the table; these
// are the words users see (--help, usage errors, completion).
func TestFormatTableWords(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"csv", "json", "yaml", "drawio", "mermaid"}, document.Names())
	assert.Equal(t, "csv, json, yaml, drawio or mermaid", document.NameList())
	assert.Equal(t, "use --format csv, json, yaml, drawio or mermaid", document.UnknownFormatHint())
	assert.Equal(t, []string{"csv", "json", "yaml", "yml", "drawio", "drawio.xml", "dio", "mmd", "mermaid", "md"}, document.Extensions())
	assert.Equal(t, "fix the errors above in the Mermaid text", document.FixHint("mermaid"))
	assert.Equal(t, "fix the errors above in draw.io and save the file", document.FixHint("drawio"))
	assert.Equal(t, "fix the errors above in Lucid and export the chart again", document.FixHint("csv"))
	assert.Equal(t, "fix the errors above in Lucid and export the chart again", document.FixHint("json"))
	assert.Equal(t, "fix the errors above in the chart", document.FixHint("yaml"))
	assert.Equal(t, "fix the errors above in Lucid and export the chart again", document.FixHint(""))
}

func TestFormatLookups(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, want string }{
		{"a.csv", "csv"},
		{"dir.v2/A.JSON", "json"},
		{"c.yml", "yaml"},
		{"c.yaml", "yaml"},
		{"flow.drawio", "drawio"},
		{"Flow.DRAWIO.xml", "drawio"},
		{"flow.dio", "drawio"},
		{"flow.xml", ""},
		{"flow.mmd", "mermaid"},
		{"flow.Mermaid", "mermaid"},
		{"README.md", "mermaid"},
		{"c.txt", ""},
		{"-", ""},
		{"csv", ""},
	} {
		f, ok := document.ByExtension(tc.path)
		assert.Equal(t, tc.want != "", ok, tc.path)
		assert.Equal(t, tc.want, f.Name, tc.path)
	}
	f, ok := document.ByName("yaml")
	require.True(t, ok)
	assert.Equal(t, []string{".yaml", ".yml"}, f.Extensions)
	_, ok = document.ByName("YAML")
	assert.False(t, ok, "--format takes the name as written")
	_, ok = document.ByName("")
	assert.False(t, ok)
}

// A chart whose format neither name nor content tells gets a hint that
// names every format's extension, and an unknown --format the list.
func TestReadFormatHints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/notes.txt"
	require.NoError(t, os.WriteFile(path, []byte("hello\n"), 0o644))
	_, err := document.Read(path, "", nil)
	var ue *document.UnreadableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "cannot tell its format", ue.Err.Error())
	assert.Equal(t, "name the file .csv (Lucid's CSV of shape data), .json (Lucid API contents), .yaml (dtree's own format), .drawio (draw.io) or .mmd or .md (Mermaid), or pass --format", ue.Hint)

	_, err = document.Read(path, "xml", nil)
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, `unknown format "xml"`, ue.Err.Error())
	assert.Equal(t, "use --format csv, json, yaml, drawio or mermaid", ue.Hint)
}

// Detect tries CSV's test (a comma on the first line, or nothing at all)
// last: a JSON or YAML first line may hold a comma too.
func TestDetectOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ head, want string }{
		{"", "csv"},
		{"  \n\t", "csv"},
		{`{"a": 1, "b": 2}`, "json"},
		{"title: a, b\n", "yaml"},
		{"Id,Name\n", "csv"},
		{"hello\nId,Name\n", ""},
		{"flowchart TD\nA --> B\n", "mermaid"},
		{"%% comment\ngraph LR;A-->B", "mermaid"},
		{"---\ntitle: Flow\n---\nflowchart\n", "mermaid"},
		{"graph: x\n", "yaml"},
		{"sequenceDiagram\n", ""},
		{"# Flows\n\n```mermaid\nflowchart TD\n```\n", "mermaid"},
		{"# comment\nnodes:\n  - id: a\n    text: |\n      ```mermaid\n", "yaml"},
	} {
		assert.Equal(t, tc.want, document.Detect("-", []byte(tc.head)), "%q", tc.head)
	}
}
