package testchart

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// The types below mirror the parts of Lucid's document-contents response that
// a chain needs (readme/charts.md#exporting-from-lucid). Field order is the
// output order.
type (
	jsonTextArea struct {
		Label string `json:"label"`
		Text  string `json:"text"`
	}
	jsonShape struct {
		ID         string         `json:"id"`
		Class      string         `json:"class"`
		TextAreas  []jsonTextArea `json:"textAreas"`
		CustomData []struct{}     `json:"customData"`
		LinkedData []struct{}     `json:"linkedData"`
	}
	jsonEndpoint struct {
		Style       string `json:"style"`
		ConnectedTo string `json:"connectedTo"`
	}
	jsonLine struct {
		ID        string         `json:"id"`
		Endpoint1 jsonEndpoint   `json:"endpoint1"`
		Endpoint2 jsonEndpoint   `json:"endpoint2"`
		TextAreas []jsonTextArea `json:"textAreas"`
	}
)

// LinearJSON writes the chain of LinearCSV as a Lucid document-contents
// response: one page whose shapes are a TerminatorBlock "Start", n-2
// ProcessBlocks and a TerminatorBlock "End", and whose n-1 lines run from
// each shape to the next with the arrowhead at endpoint2. Items are written
// one at a time, so memory stays flat however large n is.
func LinearJSON(w io.Writer, n int) error {
	if n < 2 {
		return fmt.Errorf("testchart: linear chart needs n >= 2, got %d", n)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	title, err := json.Marshal(fmt.Sprintf("Linear chain of %d steps", n))
	if err != nil {
		return fmt.Errorf("testchart: encode title: %w", err)
	}
	fmt.Fprintf(bw, `{"id":"6f1c2a4e-0d5b-4c37-9a8e-%012d","title":%s,"product":"lucidchart",`, n, title)
	bw.WriteString(`"pages":[{"id":"0_0","title":"Page 1","index":0,"items":{"shapes":[`)
	for i := range n {
		s := jsonShape{
			ID:         lucidID(i),
			Class:      "ProcessBlock",
			CustomData: []struct{}{},
			LinkedData: []struct{}{},
		}
		text := ""
		switch i {
		case 0:
			s.Class, text = "TerminatorBlock", "Start"
		case n - 1:
			s.Class, text = "TerminatorBlock", "End"
		default:
			text = processText(i)
		}
		s.TextAreas = []jsonTextArea{{Label: "Text", Text: text}}
		if err := writeItem(bw, i, s); err != nil {
			return err
		}
	}
	bw.WriteString(`],"lines":[`)
	for i := range n - 1 {
		l := jsonLine{
			ID:        lucidID(n + i),
			Endpoint1: jsonEndpoint{Style: "None", ConnectedTo: lucidID(i)},
			Endpoint2: jsonEndpoint{Style: "Arrow", ConnectedTo: lucidID(i + 1)},
			TextAreas: []jsonTextArea{},
		}
		if err := writeItem(bw, i, l); err != nil {
			return err
		}
	}
	bw.WriteString(`],"groups":[],"layers":[]}}]}`)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("testchart: write json: %w", err)
	}
	return nil
}

// writeItem writes one array element, preceded by a comma unless it is the
// first (i == 0).
func writeItem(bw *bufio.Writer, i int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("testchart: encode item %d: %w", i, err)
	}
	if i > 0 {
		bw.WriteByte(',')
	}
	_, err = bw.Write(b)
	if err != nil {
		return fmt.Errorf("testchart: write json: %w", err)
	}
	return nil
}
