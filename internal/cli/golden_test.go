package cli

import (
	"bytes"
	"context"
	"github.com/dtree-dev/dtree/types"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/golden"
)

// run runs one dtree command line in process from the repository root.
func runDtree(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &App{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: noEnv}
	code = a.Run(context.Background(), args)
	return out.String(), errb.String(), code
}

// TestGoldenCharts pins inspect (text and JSON) and lint --json output for
// every chart under testdata/charts. A chart with errors has the lint and
// inspect text golden files: inspect draws it with its errors marked, and
// exits 3.
func TestGoldenCharts(t *testing.T) {
	root := filepath.Join("..", "..")
	var charts []string
	err := filepath.WalkDir(filepath.Join(root, "testdata", "charts"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isTestChart(p) {
			charts = append(charts, p)
		}
		return err
	})
	require.NoError(t, err)
	require.NotEmpty(t, charts)
	t.Chdir(root)
	for _, p := range charts {
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		name := strings.TrimPrefix(filepath.ToSlash(rel), "testdata/charts/")
		t.Run(name, func(t *testing.T) {
			base := filepath.Join("testdata", "golden", name)
			lintOut, _, code := runDtree(t, "lint", "--json", rel)
			golden.Assert(t, base+".lint.json", []byte(lintOut))
			require.Contains(t, []int{types.ExitOK, types.ExitChart}, code)
			out, stderr, icode := runDtree(t, "inspect", rel)
			if code == types.ExitChart {
				// Drawn all the same, its errors marked; exit 3 as lint.
				assert.Equal(t, types.ExitChart, icode, "inspect must fail like lint")
				assert.Contains(t, stderr, ": error: ")
				golden.Assert(t, base+".inspect.txt", []byte(out))
				return
			}
			require.Equal(t, types.ExitOK, icode, stderr)
			golden.Assert(t, base+".inspect.txt", []byte(out))
			jsonOut, _, _ := runDtree(t, "inspect", "--json", rel)
			golden.Assert(t, base+".inspect.json", []byte(jsonOut))
		})
	}
}

// noEnv is an empty environment: no DTREE_* variables and no user settings
// file, so a developer's own settings cannot change what tests see.
func noEnv(string) string { return "" }

// isTestChart reports whether a file under testdata/charts is a chart: its
// extension is a format's (document's table, so a new format's charts are
// pinned too), and it is not the README that says where they came from.
func isTestChart(p string) bool {
	_, ok := document.ByExtension(p)
	return ok && filepath.Base(p) != "README.md"
}
