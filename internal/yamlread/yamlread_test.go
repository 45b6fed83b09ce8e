package yamlread_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/yamlread"
)

// The line is where a person editing the file should look: counted from 1
// for the scanner's and the parser's errors alike.
func TestSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		wantLine int
		wantMsg  string
	}{
		{name: "mapping value in a scalar", in: "a: b\nc: d: e\n", wantLine: 2, wantMsg: "mapping values are not allowed in this context"},
		{name: "tab indent", in: "a:\n\tb: c\n", wantLine: 2, wantMsg: "found character that cannot start any token"},
		// A list left open on the first line is found where the next
		// line starts; further down, at the line the list starts.
		{name: "unclosed flow list on line 1", in: "a: [b, c\nd: e\n", wantLine: 2, wantMsg: "did not find expected ',' or ']'"},
		{name: "unclosed flow list on line 3", in: "x: 1\ny: 2\na: [b, c\nd: e\n", wantLine: 3, wantMsg: "did not find expected ',' or ']'"},
		{name: "list item missing its dash", in: "- a\n- b\nc: d\n", wantLine: 3, wantMsg: "did not find expected '-' indicator"},
		{name: "unclosed quote", in: "a: b\nc: \"d\n", wantLine: 2, wantMsg: "found unexpected end of stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var n yaml.Node
			err := yaml.Unmarshal([]byte(tt.in), &n)
			require.Error(t, err)
			line, msg := yamlread.Syntax(err)
			assert.Equal(t, tt.wantLine, line, "error was %q", err)
			assert.Contains(t, msg, tt.wantMsg)
			assert.NotContains(t, msg, "yaml:")
		})
	}
}

func TestResolveAndDescribe(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("a: &x [1, 2]\nb: *x\nc: ~\nd: {k: v}\ne: hello\n"), &doc))
	m := doc.Content[0]
	got := map[string]string{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		got[m.Content[i].Value] = yamlread.Describe(yamlread.Resolve(m.Content[i+1]))
	}
	assert.Equal(t, map[string]string{"a": "a list", "b": "a list", "c": "empty", "d": "a mapping", "e": `"hello"`}, got)
}
