package export_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// TestYAMLScalars writes each awkward string as a node's id, text, tag,
// metadata key and value and branch label, and reads it back unchanged.
func TestYAMLScalars(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"plain", "3", "1.50", "0x10", "Yes", "no", "NULL", "~", "<<", "- x", "a: b", "a:", "#x", "a #b", "?", "[x]", "{x}",
		"a, b", "'q'", `"dq"`, "`t`", "%x", "@x", "!x", "&x", "*x", "|x", ">x", "tab\there", "ünï 🚀", "\u2028", "\uFEFFbom",
		"ctl\x01", "\\", "---", "...", "a\nb", "a\n\nb", "a\n  b", "a\n \nb", "a\r\nb", "a\n\tb", "\ta\nb", "line1\n# not a comment",
	} {
		doc := &types.Document{Pages: []types.Page{{ID: "1"}}, Nodes: []types.Node{
			{ID: "x" + s, Page: "1", Kind: types.KindProcess, Text: s, Tags: []string{strings.NewReplacer(",", "", ";", "").Replace(s)},
				Metadata: types.Metadata{"k" + s: s}},
			{ID: "end", Page: "1", Kind: types.KindProcess},
		}, Edges: []types.Edge{{ID: "e", Page: "1", From: "x" + s, To: "end", Label: s}}}
		if strings.TrimSpace(s) == "" {
			continue
		}
		var buf bytes.Buffer
		_, err := export.YAML(&buf, doc)
		require.NoError(t, err)
		back, err := document.FromYAML(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err)
		require.Empty(t, back.Errors, "%q written as:\n%s", s, buf.String())
		n := back.Nodes[0]
		want := strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
		assert.Equal(t, strings.TrimSpace("x"+s), n.ID, "id %q", s)
		assert.Equal(t, want, n.Text, "text %q:\n%s", s, buf.String())
		assert.Equal(t, types.Metadata{strings.TrimSpace("k" + s): strings.TrimSpace(s)}, n.Metadata, "metadata %q", s)
		assert.Equal(t, want, back.Edges[0].Label, "label %q", s)
	}
}
