package cli

import (
	"github.com/dtree-dev/dtree/types"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/golden"
)

// TestGoldenPictures pins the pictures `graph --to mermaid` and `convert
// --to dot`, and the Mermaid chart `convert --to mermaid` writes, for
// every chart under testdata/charts and the quickstart chart, as
// CHART.graph.mmd, CHART.graph.dot and CHART.mmd (CHART.md for a chart
// of several pages, which is Markdown) under testdata/golden,
// laid out as the charts are (golden/rules/…, golden/quickstart/…); a
// chart with errors is drawn and converted too, its errors marked in the
// pictures, and the command exits 3. `make conformance` parses every
// .mmd here with Mermaid 11.
func TestGoldenPictures(t *testing.T) {
	root := filepath.Join("..", "..")
	var charts []string
	err := filepath.WalkDir(filepath.Join(root, "testdata", "charts"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isTestChart(p) {
			charts = append(charts, p)
		}
		return err
	})
	require.NoError(t, err)
	charts = append(charts, filepath.Join(root, "testdata", "quickstart", "update-deps.csv"))
	t.Chdir(root)
	for _, p := range charts {
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		name := strings.TrimPrefix(strings.TrimPrefix(filepath.ToSlash(rel), "testdata/"), "charts/")
		t.Run(name, func(t *testing.T) {
			base := filepath.Join("testdata", "golden", name)
			_, _, lintCode := runDtree(t, "lint", rel)
			for _, f := range []struct{ cmd, to, ext string }{{"graph", "mermaid", ".graph.mmd"}, {"convert", "dot", ".graph.dot"}, {"convert", "mermaid", ".mmd"}} {
				out, stderr, code := runDtree(t, f.cmd, "--to", f.to, rel)
				if lintCode == types.ExitChart {
					// Drawn all the same, its errors marked; exit 3.
					assert.Equal(t, types.ExitChart, code, "%s must exit 3 on a chart with errors", f.cmd)
				} else {
					require.Equal(t, types.ExitOK, code, stderr)
				}
				ext := f.ext
				if f.cmd == "convert" && strings.HasPrefix(out, "```mermaid\n") || strings.Contains(out, "\n```mermaid\n") {
					ext = ".md" // a chart of several pages: Markdown
				}
				golden.Assert(t, base+ext, []byte(out))
			}
		})
	}
}
