package document_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

// TestNotAFlowchart checks when a chart is reported as not a flowchart at
// all: shapes, but none of a flowchart kind. The one error names what the
// chart holds instead, and stands alone.
func TestNotAFlowchart(t *testing.T) {
	t.Parallel()
	const csvHeader = "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Status,Text Area 1,Comments\n" +
		"1,Document,,,,,,,,,Draft,Chart,\n2,Page,,,,,,,,,,Page 1,\n"
	jsonChart := func(classes ...string) string {
		var shapes []string
		for i, c := range classes {
			shapes = append(shapes, `{"id": "s`+string(rune('a'+i))+`", "class": "`+c+`", "textAreas": [{"label": "Text", "text": "T"}]}`)
		}
		return `{"title": "T", "pages": [{"id": "p", "title": "P", "index": 0, "items": {"shapes": [` +
			strings.Join(shapes, ", ") + `], "lines": [{"id": "l", "endpoint1": {"style": "None", "connectedTo": "sa"}, ` +
			`"endpoint2": {"style": "Generalization", "connectedTo": "sb"}}]}}]}`
	}
	cases := []struct {
		name, format, chart string
		want                string // the message, "" when the chart must not be reported
	}{
		{
			name: "ERD entities in JSON", format: "json",
			chart: jsonChart("ERDEntityBlock4", "ERDEntityBlock4", "ERDEntityBlock4"),
			want:  "the chart is an entity-relationship diagram: it has 3 ERD Entity shapes and no flowchart shapes (Terminator, Process, Decision, Predefined process), so it is not a flowchart dtree can run",
		},
		{
			name: "UML classes and a BPMN activity in JSON: two kinds, none named", format: "json",
			chart: jsonChart("UMLClassBlock", "UMLClassBlock", "BPMNActivity"),
			want:  "the chart has 2 UML Class shapes, 1 BPMN Activity shape and no flowchart shapes",
		},
		{
			name: "a mind map in JSON is called one, not by Lucid's classes", format: "json",
			chart: jsonChart("IntelligentMindMapRootNodeBlock", "IntelligentMindMapNodeBlock", "IntelligentMindMapNodeBlock"),
			want:  "the chart is a mind map: it has 2 Mind Map Node shapes, 1 Mind Map Root Node shape and no flowchart shapes",
		},
		{
			name: "an org chart in JSON", format: "json",
			chart: jsonChart("TreeNodeBlock", "TreeNodeBlock"),
			want:  "the chart is an org chart: it has 2 Tree Node shapes and no flowchart shapes",
		},
		{
			name: "a UML class diagram with a box in CSV: one kind", format: "csv",
			chart: csvHeader + "3,Class,UML,2,,,,,,,,A,\n4,Class,UML,2,,,,,,,,B,\n5,Rectangle,Standard,2,,,,,,,,A box,",
			want:  "the chart is a UML diagram: it has 2 UML Class shapes, 1 Standard Rectangle shape and no flowchart shapes",
		},
		{
			name: "many kinds of shape: the three commonest, then the rest", format: "csv",
			chart: csvHeader + "3,Entity,Entity Relationship,2,,,,,,,,A,\n4,Entity,Entity Relationship,2,,,,,,,,B,\n" +
				"5,Class,UML,2,,,,,,,,C,\n6,Actor,UML Use Case,2,,,,,,,,D,\n7,Cloud,AWS,2,,,,,,,,E,\n8,Note,Standard,2,,,,,,,,F,",
			want: "the chart has 2 Entity Relationship Entity shapes, 1 UML Class shape, 1 UML Use Case Actor shape, 2 other shapes and no flowchart shapes",
		},
		{
			name: "one flowchart shape among others is a flowchart", format: "csv",
			chart: csvHeader + "3,Class,UML,2,,,,,,,,A,\n4,Process,Flowchart Shapes/Containers,2,,,,,,,,B,\n5,Line,,2,,,4,3,None,Arrow,,,",
		},
		{
			name: "a flowchart of Data and Document shapes only is still reported", format: "csv",
			chart: csvHeader + "3,Data,Flowchart Shapes/Containers,2,,,,,,,,A,",
			want:  "the chart has 1 Data shape and no flowchart shapes",
		},
		{
			name: "only notes: empty, not a class diagram", format: "csv",
			chart: csvHeader + "3,Text,Standard,2,,,,,,,,A note,",
		},
		{
			name: "YAML nodes of kind other are written on purpose", format: "yaml",
			chart: "title: T\nnodes:\n  - id: a\n    kind: other\n    text: Do it\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var doc *types.Document
			var err error
			switch tc.format {
			case "csv":
				doc, err = document.FromCSV(strings.NewReader(tc.chart))
			case "json":
				doc, err = document.FromJSON(strings.NewReader(tc.chart))
			case "yaml":
				doc, err = document.FromYAML(strings.NewReader(tc.chart))
			}
			require.NoError(t, err)
			var found []types.Diagnostic
			for _, d := range doc.Errors {
				if d.Class == "not_a_flowchart" {
					found = append(found, d)
				}
			}
			if tc.want == "" {
				assert.Empty(t, found)
				return
			}
			require.Len(t, doc.Errors, 1, "one error and no other: %v", doc.Errors)
			assert.Empty(t, doc.Warnings, "no warnings about reading it as a flowchart")
			assert.Empty(t, doc.Nodes)
			assert.Empty(t, doc.Edges)
			assert.Contains(t, doc.Errors[0].Message, tc.want)
			assert.NotRegexp(t, `Block\b|[a-z][A-Z]`, doc.Errors[0].Message, "no Lucid class names")
			assert.NotEmpty(t, doc.Errors[0].Hint)
		})
	}
}
