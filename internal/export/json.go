package export

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// The Lucid document-contents shape (readme/charts.md#exporting-from-lucid),
// as far as dtree's JSON importer reads it.
type (
	lucidDoc struct {
		Title string      `json:"title"`
		Pages []lucidPage `json:"pages"`
	}
	lucidPage struct {
		ID    string     `json:"id"`
		Title string     `json:"title"`
		Index int        `json:"index"`
		Items lucidItems `json:"items"`
	}
	lucidItems struct {
		Shapes []lucidShape `json:"shapes"`
		Lines  []lucidLine  `json:"lines"`
		Groups []struct{}   `json:"groups"`
	}
	lucidShape struct {
		ID         string          `json:"id"`
		Class      string          `json:"class"`
		TextAreas  []lucidTextArea `json:"textAreas"`
		CustomData []lucidPair     `json:"customData"`
	}
	lucidTextArea struct {
		Label string `json:"label"`
		Text  string `json:"text"`
	}
	lucidPair struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	lucidLine struct {
		ID        string          `json:"id"`
		Endpoint1 lucidEndpoint   `json:"endpoint1"`
		Endpoint2 lucidEndpoint   `json:"endpoint2"`
		TextAreas []lucidTextArea `json:"textAreas"`
	}
	lucidEndpoint struct {
		Style       string `json:"style"`
		ConnectedTo string `json:"connectedTo"`
	}
)

// jsonClasses are the Lucid classes for each kind.
var jsonClasses = map[string]string{
	types.KindTerminator: "TerminatorBlock",
	types.KindProcess:    "ProcessBlock",
	types.KindDecision:   "DecisionBlock",
	types.KindSubprocess: "PredefinedProcessBlock",
}

// JSON writes doc in the shape of Lucid's document-contents response, which
// dtree reads back: node and page ids are kept, lines point from endpoint1
// to an arrowhead at endpoint2, and metadata is customData. The API has no
// tags, so tags are dropped; so is anything else JSON drops, which it
// returns.
func JSON(w io.Writer, doc *types.Document) ([]string, error) {
	lost := losses{format: "JSON"}
	starts := lucidStarts(doc, &lost)
	out := lucidDoc{Title: doc.Title, Pages: make([]lucidPage, 0, len(doc.Pages))}
	used := make(map[string]bool, len(doc.Nodes)+len(doc.Edges))
	for _, n := range doc.Nodes {
		used[n.ID] = true
	}
	lines := edgesByPage(doc)
	for i, p := range doc.Pages {
		lp := lucidPage{ID: p.ID, Title: p.Title, Index: i,
			Items: lucidItems{Shapes: []lucidShape{}, Lines: []lucidLine{}, Groups: []struct{}{}}}
		if starts[p.ID] {
			id, line := unused(used, "start"), unused(used, "start-line")
			lp.Items.Shapes = append(lp.Items.Shapes, lucidShape{ID: id, Class: "TerminatorBlock",
				TextAreas: []lucidTextArea{{Label: "Text", Text: "Start"}}, CustomData: []lucidPair{}})
			lp.Items.Lines = append(lp.Items.Lines, lucidLine{ID: line, Endpoint1: lucidEndpoint{Style: "None", ConnectedTo: id},
				Endpoint2: lucidEndpoint{Style: "Arrow", ConnectedTo: p.Root}, TextAreas: []lucidTextArea{}})
		}
		for _, n := range nodesOn(doc, p.ID) {
			lost.node(n, true)
			class, ok := jsonClasses[n.Kind]
			if !ok {
				class = n.Shape
				if class == "" || strings.Contains(strings.ToLower(class), "textblock") {
					class = "RectangleBlock"
				}
			}
			s := lucidShape{ID: n.ID, Class: class, TextAreas: []lucidTextArea{}, CustomData: []lucidPair{}}
			if n.Text != "" {
				s.TextAreas = append(s.TextAreas, lucidTextArea{Label: "Text", Text: n.Text})
			}
			for _, k := range sortedKeys(n.Metadata) {
				s.CustomData = append(s.CustomData, lucidPair{Key: k, Value: n.Metadata[k]})
			}
			lp.Items.Shapes = append(lp.Items.Shapes, s)
		}
		for _, e := range lines[p.ID] {
			// Ids are unique across a Lucid document's items: keep the
			// edge's id unless a node or an earlier edge has it.
			id := unused(used, e.ID)
			l := lucidLine{ID: id, Endpoint1: lucidEndpoint{Style: "None", ConnectedTo: e.From},
				Endpoint2: lucidEndpoint{Style: "Arrow", ConnectedTo: e.To}, TextAreas: []lucidTextArea{}}
			for i, label := range append([]string{e.Label}, e.ExtraLabels...) {
				if label != "" {
					l.TextAreas = append(l.TextAreas, lucidTextArea{Label: fmt.Sprintf("t%d", i), Text: label})
				}
			}
			lp.Items.Lines = append(lp.Items.Lines, l)
		}
		out.Pages = append(out.Pages, lp)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return lost.list(), enc.Encode(out)
}

// unused returns id, or id-2, id-3, … if that is taken, and takes it.
func unused(used map[string]bool, id string) string {
	try := id
	for k := 2; try == "" || used[try]; k++ {
		try = fmt.Sprintf("%s-%d", id, k)
	}
	used[try] = true
	return try
}
