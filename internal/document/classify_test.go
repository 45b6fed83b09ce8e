package document_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
)

// TestContainerByNameOrReferenceOnly checks which CSV shapes become steps:
// a shape is a container only by its own name or by another row naming it
// in Contained By or Group, never by its Shape Library. Lucid's 2026 export
// puts every flowchart shape in "Flowchart Shapes/Containers".
func TestContainerByNameOrReferenceOnly(t *testing.T) {
	t.Parallel()
	const header = "Id,Name,Shape Library,Page ID,Contained By,Group,Line Source,Line Destination,Source Arrow,Destination Arrow,Status,Text Area 1,Comments\n" +
		"1,Document,,,,,,,,,Draft,Chart,\n2,Page,,,,,,,,,,Page 1,\n"
	cases := []struct {
		name string
		rows string // rows after the Page row; shape 3 is the one asked about
		step bool   // whether shape 3 is a node
	}{
		{"2026 Process in Flowchart Shapes/Containers", "3,Process,Flowchart Shapes/Containers,2,,,,,,,,Plan the work,", true},
		{"2026 Decision in Flowchart Shapes/Containers", "3,Decision,Flowchart Shapes/Containers,2,,,,,,,,Done?,", true},
		{"2026 Terminator in Flowchart Shapes/Containers", "3,Terminator,Flowchart Shapes/Containers,2,,,,,,,,Start,", true},
		{"any library with Container in it", "3,Process,My Containers,2,,,,,,,,Plan the work,", true},
		{"2020 Process in Flowchart Shapes", "3,Process,Flowchart Shapes,2,,,,,,,,Plan the work,", true},
		{"Swim Lane by name", "3,Swim Lane,Flowchart Shapes/Containers,2,,,,,,,,Author,\n4,Process,Flowchart Shapes/Containers,2,,,,,,,,Write,", false},
		{"Container by name, any library", "3,Container,Standard,2,,,,,,,,Box,\n4,Process,Flowchart Shapes/Containers,2,,,,,,,,Write,", false},
		{"Pool by name", "3,Pool,BPMN 2.0,2,,,,,,,,Team,\n4,Process,Flowchart Shapes/Containers,2,,,,,,,,Write,", false},
		{"Frame by name", "3,Frame,Standard,2,,,,,,,,Title,\n4,Process,Flowchart Shapes/Containers,2,,,,,,,,Write,", false},
		{"Group N row", "3,Group 1,,2,,,,,,,,,\n4,Process,Flowchart Shapes/Containers,2,,3,,,,,,Write,", false},
		{"named in a later row's Contained By", "3,Rectangle,Standard,2,,,,,,,,Box,\n4,Process,Flowchart Shapes/Containers,2,3,,,,,,,Write,", false},
		{"named as a lane in Contained By", "3,Rectangle,Standard,2,,,,,,,,A,\n4,Process,Flowchart Shapes/Containers,2,3:1,,,,,,,Write,", false},
		{"named in a Group cell", "3,Rectangle,Standard,2,,,,,,,,Box,\n4,Process,Flowchart Shapes/Containers,2,,3,,,,,,Write,", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc, err := document.FromCSV(strings.NewReader(header + tc.rows))
			require.NoError(t, err)
			ids := []string{}
			for _, n := range doc.Nodes {
				ids = append(ids, n.ID)
			}
			if tc.step {
				assert.Contains(t, ids, "3", "shape 3 must be a step; errors: %v", doc.Errors)
				assert.Empty(t, doc.Errors)
			} else {
				assert.NotContains(t, ids, "3", "shape 3 is a container, not a step")
			}
		})
	}
}
