package export_test

import (
	"bytes"
	"encoding/xml"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// svgLabel is an edge label's white ground in an SVG picture.
type svgLabel struct {
	page       string
	text       string
	x, y, w, h float64
}

// svgLabels reads the label grounds of an SVG picture: in each edge's
// group, a rect followed by the label's text.
func svgLabels(t *testing.T, picture []byte) []svgLabel {
	t.Helper()
	var doc struct {
		Pages []struct {
			ID    string `xml:"data-page,attr"`
			Edges []struct {
				Class string `xml:"class,attr"`
				Rects []struct {
					X float64 `xml:"x,attr"`
					Y float64 `xml:"y,attr"`
					W float64 `xml:"width,attr"`
					H float64 `xml:"height,attr"`
				} `xml:"rect"`
				Texts []string `xml:"text"`
			} `xml:"g"`
		} `xml:"g"`
	}
	require.NoError(t, xml.Unmarshal(picture, &doc))
	var out []svgLabel
	for _, p := range doc.Pages {
		for _, e := range p.Edges {
			if e.Class != "edge" || len(e.Rects) == 0 {
				continue
			}
			r := e.Rects[0]
			out = append(out, svgLabel{page: p.ID, text: strings.Join(e.Texts, ""), x: r.X, y: r.Y, w: r.W, h: r.H})
		}
	}
	return out
}

// TestSVGLabelsNeverOverlap draws every chart of testdata as SVG, its
// errors marked as dtree graph marks them, and checks that no two edge
// labels of a page cover each other: a label under another could not be
// read ("✗ unlabeled_" half hidden under "✗ unlabeled_branch").
func TestSVGLabelsNeverOverlap(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "testdata")
	var charts []string
	for _, dir := range []string{"charts", "quickstart"} {
		require.NoError(t, filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch filepath.Ext(path) {
			case ".csv", ".json", ".yaml":
				if !strings.HasSuffix(path, ".answers.yaml") {
					charts = append(charts, path)
				}
			}
			return nil
		}))
	}
	require.NotEmpty(t, charts)
	for _, path := range charts {
		t.Run(filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator))), func(t *testing.T) {
			t.Parallel()
			c, err := chart.Load(path, nil, chart.Options{Defaults: types.BuiltinDefaults(), Names: anyCLI{}})
			if err != nil {
				t.Skipf("not a chart: %v", err)
			}
			if len(c.Doc.Pages) == 0 {
				t.Skip("no page: nothing to draw")
			}
			var buf bytes.Buffer
			require.NoError(t, export.SVG(t.Context(), &buf, c.Doc, export.PictureOptions{Errors: c.Errors}))
			labels := svgLabels(t, buf.Bytes())
			for i, a := range labels {
				for _, b := range labels[i+1:] {
					if a.page != b.page {
						continue
					}
					overlap := a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h
					assert.False(t, overlap, "label %q at (%.0f,%.0f %.0fx%.0f) overlaps %q at (%.0f,%.0f %.0fx%.0f)",
						a.text, a.x, a.y, a.w, a.h, b.text, b.x, b.y, b.w, b.h)
				}
			}
		})
	}
}
