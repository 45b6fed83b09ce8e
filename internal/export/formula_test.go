package export_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/types"
)

// Cells a spreadsheet would run as formulas are named in one warning,
// and written unchanged: Lucid reads them back as the chart's text.
func TestFormulaWarning(t *testing.T) {
	t.Parallel()
	doc := chain("Start", "=HYPERLINK(\"http://x\",\"click\")", "plain", "+1", "-rm", "@SUM(A1)", "\tx", "a = b")
	for i := range doc.Edges {
		doc.Edges[i].Label = ""
	}
	assert.Equal(t, `5 cells of the CSV start with =, +, -, @, a tab or a carriage return, which a spreadsheet may run as a formula: node n1's text, node n3's text, node n4's text, node n5's text, node n6's text. Lucid reads them as text; before opening the file in a spreadsheet, see its section Formula cells in 'dtree docs convert'`,
		export.FormulaWarning(doc))
	var buf bytes.Buffer
	_, err := export.CSV(&buf, doc)
	require.NoError(t, err)
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	var texts []string
	for _, r := range rows[3:] { // header, Document, Page
		if r[1] == "Process" {
			texts = append(texts, r[12])
		}
	}
	assert.Equal(t, []string{"Start", "=HYPERLINK(\"http://x\",\"click\")", "plain", "+1", "-rm", "@SUM(A1)", "\tx", "a = b"}, texts)

	// labels, titles, metadata and tags count too; a clean chart says nothing
	doc = chain("a", "b")
	assert.Empty(t, export.FormulaWarning(doc))
	doc.Title = "=1+1"
	doc.Edges[0].Label = "-yes"
	doc.Nodes[0].Metadata = types.Metadata{"model": "@x"}
	doc.Nodes[1].Tags = []string{"+t"}
	assert.Contains(t, export.FormulaWarning(doc), "4 cells of the CSV start with =, +, -, @, a tab or a carriage return, which a spreadsheet may run as a formula: the title, node n0's model, node n1's tags, the label of the line from n0 to n1.")

	// bounded however many cells
	var texts2 []string
	for i := range 10000 {
		texts2 = append(texts2, fmt.Sprintf("=A%d", i))
	}
	assert.Less(t, len(export.FormulaWarning(chain(texts2...))), 400)
}
