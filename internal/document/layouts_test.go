package document_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realLayouts are the charts in testdata/charts/rules that must differ from a
// real Lucid export of their year only in their text, with the header of that
// export and the libraries its shapes were in
// (readme/charts.md#exporting-from-lucid). The import tests of these charts
// (ruleCases) are only worth as much as the charts' likeness to what users
// export.
var realLayouts = []struct {
	file, export string
	header       string
	libraries    []string // every Shape Library a shape row may have
}{
	{
		file: "03_2026_export.csv", export: "MonadsCLI test/AnimalTest.csv (2026, no tags)",
		header:    "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Status,Text Area 1,Comments",
		libraries: []string{"Flowchart Shapes/Containers"},
	},
	{
		file: "03_2026_export_tags.csv", export: "MonadsCLI test/sample_data.csv (2026, tags and custom data)",
		header:    "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Tags,Status,Text Area 1,Comments,retries",
		libraries: []string{"Flowchart Shapes/Containers"},
	},
	{
		file: "03_2022_export.csv", export: "lucidchart2sqlalchemy CamperVanPricing_en_v2.csv (2022)",
		header:    "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Status,Text Area 1,Text Area 2,Text Area 3",
		libraries: []string{"Flowchart Shapes", "Standard"},
	},
	{
		file: "03_2020_export.csv", export: "Lucidchart-to-Java Examples/input.csv (2020)",
		header:    "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Text Area 1,Text Area 2,Text Area 3",
		libraries: []string{"Flowchart Shapes", "Standard"},
	},
	{
		file: "08_not_a_flowchart_2020.csv", export: "Lucidchart-to-Java Examples/input.csv (2020, UML)",
		header:    "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Text Area 1,Text Area 2,Text Area 3",
		libraries: []string{"UML", "Standard"},
	},
	{
		file: "08_not_a_flowchart_2022.csv", export: "lucidchart2sqlalchemy CamperVanPricing_en_v2.csv (2022, UML)",
		header:    "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Status,Text Area 1,Text Area 2,Text Area 3",
		libraries: []string{"UML", "Standard"},
	},
}

// TestRealExportLayouts checks those charts byte for byte against what Lucid
// writes: UTF-8 without BOM, LF row ends, no newline after the last row,
// quotes only where a cell needs them, ids 1..N in row order, a Document
// row (except 2020) then the Page row, shapes, lines, and Group rows last.
func TestRealExportLayouts(t *testing.T) {
	t.Parallel()
	for _, tc := range realLayouts {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(rulesDir, tc.file))
			require.NoError(t, err)
			assert.False(t, bytes.HasPrefix(data, []byte("\ufeff")), "no BOM")
			assert.NotContains(t, string(data), "\r", "LF row ends only")
			assert.False(t, bytes.HasSuffix(data, []byte("\n")), "no newline after the last row")

			rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			require.NoError(t, err, "every row has the header's number of cells")
			assert.Equal(t, tc.header, strings.Join(rows[0], ","), "the header of %s", tc.export)

			// Minimal quoting: writing the rows back gives the same bytes.
			var buf bytes.Buffer
			w := csv.NewWriter(&buf)
			require.NoError(t, w.WriteAll(rows))
			assert.Equal(t, string(data), strings.TrimSuffix(buf.String(), "\n"), "quotes only where a cell needs them")

			col := func(name string) int { return slices.Index(rows[0], name) }
			stage := 0 // 0 document, 1 page, 2 shapes, 3 lines, 4 groups
			tagged := false
			for i, r := range rows[1:] {
				assert.Equal(t, strconv.Itoa(i+1), r[col("Id")], "ids are 1..N in row order")
				name, lib := r[col("Name")], r[col("Shape Library")]
				at := 2
				switch {
				case name == "Document" && r[col("Page ID")] == "":
					at = 0
				case name == "Page" && r[col("Page ID")] == "":
					at = 1
				case name == "Line":
					at = 3
				case strings.HasPrefix(name, "Group "):
					at = 4
				default:
					assert.Contains(t, tc.libraries, lib, "row %d: %s's library", i+1, name)
				}
				if at == 0 || at == 1 || at == 3 || at == 4 {
					assert.Empty(t, lib, "row %d: a %s row has no library", i+1, name)
				}
				assert.GreaterOrEqual(t, at, stage, "row %d (%s) is out of Lucid's row order", i+1, name)
				stage = at
				if c := col("Tags"); c >= 0 && r[c] != "" {
					tagged = true
				}
			}
			assert.Equal(t, col("Tags") >= 0, tagged, "a Tags column exactly when some shape has a tag")
			hasDocument := rows[1][col("Name")] == "Document"
			assert.Equal(t, !strings.Contains(tc.export, "2020"), hasDocument, "a Document row in every export but 2020's")
		})
	}
}
