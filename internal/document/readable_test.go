package document

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Lucid classes in words, for the message of a chart that is not a
// flowchart.
func TestReadableShape(t *testing.T) {
	t.Parallel()
	for class, want := range map[string]string{
		"IntelligentMindMapNodeBlock":     "Mind Map Node",
		"IntelligentMindMapRootNodeBlock": "Mind Map Root Node",
		"UMLClassBlock":                   "UML Class",
		"ERDEntityBlock4":                 "ERD Entity",
		"BPMNActivity":                    "BPMN Activity",
		"NET_Router":                      "NET Router",
		"TreeNodeBlock":                   "Tree Node",
		"Block":                           "Block",
		"UML Class":                       "UML Class", // a CSV name: already words
		"X":                               "X",
		"4":                               "4",
		"_":                               "_",
	} {
		assert.Equal(t, want, readableShape(class), class)
	}
}
