package yamlread_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

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

func TestCheckAliases(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1<<20)
	var reuse strings.Builder
	reuse.WriteString("a: &t " + big + "\nb:\n")
	for range 300 {
		reuse.WriteString("  - *t\n")
	}
	// billion laughs: each level ten aliases of the one before
	laughs := "l0: &l0 [lol]\n"
	for i := 1; i <= 12; i++ {
		laughs += fmt.Sprintf("l%d: &l%d [*l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d]\n", i, i, i-1)
	}
	tests := []struct {
		name string
		in   string
		line int // of the alias refused; 0 for none
	}{
		{"no aliases", "a: " + big + "\n", 0},
		{"a few small aliases", "d: &d {cli: claude, retries: 2}\nn:\n  - *d\n  - *d\n  - *d\n", 0},
		{"a 1 MB text used ten times", strings.Replace(reuse.String(), strings.Repeat("  - *t\n", 290), "", 1), 0},
		{"a 1 MB text used 300 times", reuse.String(), 3 + 15}, // the 16th alias passes 16 MiB
		{"billion laughs", laughs, 7},                          // l6, whose aliases add 3.5 MiB each
	}
	for _, tt := range tests {
		var doc yaml.Node
		require.NoError(t, yaml.Unmarshal([]byte(tt.in), &doc), tt.name)
		start := time.Now()
		err := yamlread.CheckAliases(&doc, yamlread.MaxAliasBytes)
		assert.Less(t, time.Since(start), time.Second, tt.name)
		if tt.line == 0 {
			assert.NoError(t, err, tt.name)
			continue
		}
		var ae *yamlread.AliasError
		require.ErrorAs(t, err, &ae, tt.name)
		assert.Equal(t, tt.line, ae.Line, tt.name)
		assert.Contains(t, err.Error(), "aliases would add more than 16 MiB to the file once followed", tt.name)
	}
}
