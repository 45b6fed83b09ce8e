package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/readme"
)

// What dtree says to users (help texts, hints, errors) points to its docs
// as `dtree docs TOPIC`, which works wherever dtree is installed, never to
// a readme/ path that only a clone has; and each topic named exists.
func TestUserTextsPointToDocsThatExist(t *testing.T) {
	t.Parallel()
	docs := regexp.MustCompile(`dtree docs ([a-z-]+)`)
	fset := token.NewFileSet()
	var named int
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			assert.NotContains(t, s, "readme/", "%s: a readme/ path in a string: say 'dtree docs TOPIC'", fset.Position(lit.Pos()))
			for _, m := range docs.FindAllStringSubmatch(s, -1) {
				named++
				_, ok := readme.Read(m[1])
				assert.True(t, ok, "%s: no topic %q", fset.Position(lit.Pos()), m[1])
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, named, 10, "the texts name their topics")
}

// Every command's --help has examples, and each example is a command line
// dtree takes: its command exists and its flags parse. (What an example
// does is for the scripts; here, that it cannot have drifted from the
// flags.)
func TestHelpExamplesParse(t *testing.T) {
	t.Parallel()
	a := &App{Getenv: func(string) string { return "" }}
	root := a.newRoot()
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.HasParent() && c.Parent().Name() == "completion" {
			return
		}
		t.Run(c.CommandPath(), func(t *testing.T) {
			require.NotEmpty(t, c.Example, "%s --help has no examples", c.CommandPath())
			for _, line := range strings.Split(c.Example, "\n") {
				args := exampleArgs(line)
				require.NotEmpty(t, args, "%q: no dtree command in the example", line)
				fresh := (&App{Getenv: func(string) string { return "" }}).newRoot()
				cmd, rest, err := fresh.Find(args)
				require.NoError(t, err, "%q", line)
				require.NoError(t, cmd.ParseFlags(rest), "%q", line)
				if cmd.Args != nil {
					assert.NoError(t, cmd.Args(cmd, cmd.Flags().Args()), "%q", line)
				}
			}
		})
		for _, sub := range c.Commands() {
			check(sub)
		}
	}
	check(root)
}

// exampleArgs are the arguments after "dtree" in an example line: up to a
// pipe, a redirection or a comment, with single quotes and $(…) taken as
// they come.
func exampleArgs(line string) []string {
	_, after, ok := strings.Cut(line, "dtree ")
	if !ok {
		return nil
	}
	var args []string
	for _, f := range strings.Fields(after) {
		if f == "|" || f == ">" || f == "#" || strings.HasPrefix(f, ")") {
			break
		}
		args = append(args, strings.TrimSuffix(f, ")\""))
	}
	return args
}
