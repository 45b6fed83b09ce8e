package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// csvColumns are the standard columns of a 2026 Lucid "CSV of shape data"
// export, in its order (readme/charts.md#exporting-from-lucid); Text Area
// 1..N go where Text Area 1 is, and the custom-data keys after Comments.
var csvColumns = []string{
	"Id", "Name", "Shape Library", "Page ID", "Contained By", "Group",
	"Line Source", "Line Destination", "Source Arrow", "Destination Arrow",
	"Tags", "Status", "Text Area 1", "Comments",
}

var textAreaHeader = regexp.MustCompile(`(?i)^text area \d+$`)

// flowchartLibrary is the Shape Library Lucid's 2026 CSV export gives every
// flowchart shape (readme/charts.md#exporting-from-lucid); the CSV written
// here is laid out as that export is.
const flowchartLibrary = "Flowchart Shapes/Containers"

// csvNames are the Lucid shape names and libraries for each kind.
var csvNames = map[string][2]string{
	types.KindTerminator: {"Terminator", flowchartLibrary},
	types.KindProcess:    {"Process", flowchartLibrary},
	types.KindDecision:   {"Decision", flowchartLibrary},
	types.KindSubprocess: {"Predefined process", flowchartLibrary},
}

// flowchartShapes are the shapes of Lucid's Flowchart Shapes library besides
// the four a kind names, keyed in lower case: a node of kind other with one
// of these shapes is written from that library under the name as Lucid spells
// it, any other shape from the Standard library. Terminator, Process,
// Decision, Predefined process and Connector are seen in real exports
// (readme/charts.md#exporting-from-lucid); the rest are the names the library
// shows, not yet seen in an export.
var flowchartShapes = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"Connector", "Data", "Database", "Delay", "Display", "Document", "Manual input",
		"Manual operation", "Merge", "Multiple documents", "Off-page link", "Or", "Preparation",
		"Stored data", "Internal storage", "Direct access storage", "Paper tape", "Card",
		"Summing junction", "Collate", "Sort", "Extract", "Loop limit",
	} {
		m[strings.ToLower(s)] = s
	}
	return m
}()

// csvShape is the Name and Shape Library a node is written with.
func csvShape(n *types.Node) (name, library string) {
	if s, ok := csvNames[n.Kind]; ok {
		return s[0], s[1]
	}
	shape := strings.TrimSpace(n.Shape)
	if s, ok := flowchartShapes[strings.ToLower(shape)]; ok {
		return s, flowchartLibrary
	}
	if shape == "" {
		return "Rectangle", "Standard"
	}
	return shape, "Standard"
}

// CSV writes doc as a Lucid "CSV of shape data" file, in the layout Lucid
// exports (that Lucid's CSV import reads it whole is not confirmed:
// readme/convert.md): a Document row, then per page its Page row, its
// shapes and its lines, with ids 1..N in row order (Lucid numbers rows so;
// the chart's own ids are not kept). Lines carry an arrowhead at their
// destination. Tags are joined with "; ", which dtree reads back; how
// Lucid joins several tags is unconfirmed. It returns what the CSV drops.
func CSV(w io.Writer, doc *types.Document) ([]string, error) {
	keys, err := customKeys(doc)
	if err != nil {
		return nil, err
	}
	areas := 1
	for _, e := range doc.Edges {
		areas = max(areas, 1+len(e.ExtraLabels))
	}
	header := append([]string{}, csvColumns[:12]...)
	for i := range areas {
		header = append(header, fmt.Sprintf("Text Area %d", i+1))
	}
	header = append(header, "Comments")
	header = append(header, keys...)
	col := make(map[string]int, len(header))
	for i, h := range header {
		col[h] = i
	}
	cw := csv.NewWriter(w)
	row := func(cells map[string]string) {
		rec := make([]string, len(header))
		for k, v := range cells {
			rec[col[k]] = v
		}
		_ = cw.Write(rec) // the error sticks: cw.Error below
	}
	_ = cw.Write(header)
	lost := losses{format: "CSV"}
	starts := lucidStarts(doc, &lost)
	next := 1
	newID := func() string { next++; return strconv.Itoa(next - 1) }
	row(map[string]string{"Id": newID(), "Name": "Document", "Status": doc.Status, "Text Area 1": doc.Title})
	ids := make(map[string]string, len(doc.Nodes))
	lines := edgesByPage(doc)
	for _, p := range doc.Pages {
		pageID := newID()
		row(map[string]string{"Id": pageID, "Name": "Page", "Text Area 1": p.Title})
		nodes := nodesOn(doc, p.ID)
		start := ""
		if starts[p.ID] {
			start = newID()
			row(map[string]string{"Id": start, "Name": "Terminator", "Shape Library": flowchartLibrary, "Page ID": pageID, "Text Area 1": "Start"})
		}
		for _, n := range nodes {
			ids[n.ID] = newID()
		}
		for _, n := range nodes {
			lost.node(n, false)
			name, library := csvShape(n)
			cells := map[string]string{"Id": ids[n.ID], "Name": name, "Shape Library": library, "Page ID": pageID,
				"Tags": strings.Join(n.Tags, "; "), "Text Area 1": n.Text, "Comments": strings.Join(n.Comments, "\n")}
			for k, v := range n.Metadata {
				cells[strings.TrimSpace(k)] = v
			}
			row(cells)
		}
		if start != "" {
			row(map[string]string{"Id": newID(), "Name": "Line", "Page ID": pageID,
				"Line Source": start, "Line Destination": ids[p.Root], "Source Arrow": "None", "Destination Arrow": "Arrow"})
		}
		for _, e := range lines[p.ID] {
			cells := map[string]string{"Id": newID(), "Name": "Line", "Page ID": pageID,
				"Line Source": ids[e.From], "Line Destination": ids[e.To], "Source Arrow": "None", "Destination Arrow": "Arrow",
				"Text Area 1": e.Label}
			for i, l := range e.ExtraLabels {
				cells[fmt.Sprintf("Text Area %d", i+2)] = l
			}
			row(cells)
		}
	}
	cw.Flush()
	return lost.list(), cw.Error()
}

// ColumnError is metadata that a CSV cannot hold as a column of its own.
type ColumnError struct{ msg string }

func (e *ColumnError) Error() string { return e.msg }

// customKeys returns the metadata keys of every node, sorted: the custom
// columns. A key that is a standard column's name, or that differs from
// another only in case, cannot be a column of its own.
func customKeys(doc *types.Document) ([]string, error) {
	seen := map[string]string{} // lower case -> as written
	for _, n := range doc.Nodes {
		for k := range n.Metadata {
			k = strings.TrimSpace(k)
			lower := strings.ToLower(k)
			if other, ok := seen[lower]; ok && other != k {
				return nil, &ColumnError{fmt.Sprintf("metadata keys %q and %q differ only in case; a CSV column holds one of them", other, k)}
			}
			if textAreaHeader.MatchString(k) || isStandardColumn(k) {
				return nil, &ColumnError{fmt.Sprintf("node %s: metadata key %q is the name of a Lucid CSV column", n.ID, k)}
			}
			seen[lower] = k
		}
	}
	keys := make([]string, 0, len(seen))
	for _, k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

func isStandardColumn(k string) bool {
	for _, c := range csvColumns {
		if strings.EqualFold(c, k) {
			return true
		}
	}
	return false
}
