package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/types"
)

// The Lucid document-contents response
// (readme/charts.md#exporting-from-lucid), as far as dtree reads it. Ids and
// values are flexString so that a hand-written file with a numeric id still
// imports.
type (
	jsonDoc struct {
		Title flexString  `json:"title"`
		Pages *[]jsonPage `json:"pages"`
	}
	jsonPage struct {
		ID         flexString `json:"id"`
		Title      flexString `json:"title"`
		Index      *float64   `json:"index"`
		CustomData []jsonPair `json:"customData"`
		Items      struct {
			Shapes []jsonShape `json:"shapes"`
			Lines  []jsonLine  `json:"lines"`
			Groups []jsonGroup `json:"groups"`
		} `json:"items"`
	}
	jsonShape struct {
		ID         flexString     `json:"id"`
		Class      flexString     `json:"class"`
		TextAreas  []jsonTextArea `json:"textAreas"`
		CustomData []jsonPair     `json:"customData"`
		LinkedData []jsonLinked   `json:"linkedData"`
		Contains   *struct {
			Shapes []flexString `json:"shapes"`
		} `json:"contains"`
	}
	jsonTextArea struct {
		Label flexString `json:"label"`
		Text  flexString `json:"text"`
	}
	jsonPair struct {
		Key   flexString `json:"key"`
		Name  flexString `json:"name"`
		Value flexString `json:"value"`
	}
	jsonLinked struct {
		jsonPair
		Data []jsonPair `json:"data"`
	}
	jsonLine struct {
		ID        flexString     `json:"id"`
		Endpoint1 jsonEndpoint   `json:"endpoint1"`
		Endpoint2 jsonEndpoint   `json:"endpoint2"`
		TextAreas []jsonTextArea `json:"textAreas"`
	}
	jsonEndpoint struct {
		Style       flexString `json:"style"`
		ConnectedTo flexString `json:"connectedTo"`
	}
	jsonGroup struct {
		ID      flexString   `json:"id"`
		Members []flexString `json:"members"`
	}
)

// flexString accepts a JSON string, number, bool or null as text.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) >= 2 && b[0] == '"' && plainJSONString(b[1:len(b)-1]):
		*f = flexString(b[1 : len(b)-1])
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	case bytes.Equal(b, []byte("null")):
		*f = ""
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return errors.New("want a string, got " + map[byte]string{'{': "an object", '[': "an array"}[b[0]])
	default:
		*f = flexString(b)
	}
	return nil
}

// plainJSONString reports whether the inside of a JSON string literal needs
// no decoding: no escapes and no control or non-ASCII bytes (which the full
// decoder checks and replaces when invalid).
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// Known container classes that may come without a contains object (rule 7).
var jsonContainerClasses = []string{"AdvancedSwimLaneBlock", "SparkFrameBlock", "ContainerBlock"}

// FromJSON reads a Lucid API document-contents JSON (rules 6-7, then the
// shared graph rules). The error is only for a failure to read r.
func FromJSON(r io.Reader) (*types.Document, error) {
	return fromJSON(r, sizeOf(r))
}

func fromJSON(r io.Reader, size int64) (*types.Document, error) {
	// The whole file is read into one string, which is not copied again:
	// decodeJSONDoc takes ids and texts as substrings of it.
	var sb strings.Builder
	sb.Grow(int(min(size, 1<<30)) + 1)
	if _, err := io.Copy(&sb, r); err != nil {
		return nil, err
	}
	b := newBuilder(FormatJSON)
	text := strings.TrimPrefix(sb.String(), "\ufeff")
	var doc jsonDoc
	var shapesAhead <-chan []types.Node
	counted := func(list string, n int) {
		if list == "shapes" && shapesAhead == nil {
			shapesAhead = allocAhead[types.Node](n)
		}
	}
	if !decodeJSONDoc(text, &doc, counted) {
		doc = jsonDoc{}
		data := []byte(text)
		if err := json.Unmarshal(data, &doc); err != nil {
			b.errorf("malformed_json", nil, errorLine(data, err),
				"pass the body of Lucid's GET /documents/{id}/contents response, unchanged",
				"not a Lucid document: %s", describeJSONError(data, err))
			return b.doc, nil
		}
	}
	if doc.Pages == nil {
		b.errorf("malformed_json", nil, 0,
			"pass the body of Lucid's GET /documents/{id}/contents response, unchanged",
			"not a Lucid document: it has no \"pages\" array")
		return b.doc, nil
	}
	b.doc.Title = cleanText(string(doc.Title))
	pages := *doc.Pages
	b.reserveJSON(pages, shapesAhead)
	order := make([]int, len(pages))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		return pageIndex(pages[order[x]], order[x]) < pageIndex(pages[order[y]], order[y])
	})
	for _, i := range order {
		for _, kv := range pages[i].CustomData {
			if k, v := kv.name(), strings.TrimSpace(string(kv.Value)); k != "" && v != "" {
				if b.doc.Metadata == nil {
					b.doc.Metadata = map[string]string{}
				}
				if _, set := b.doc.Metadata[k]; !set {
					b.doc.Metadata[k] = v
				}
			}
		}
		b.jsonPage(&pages[i], i)
		pages[i] = jsonPage{} // the builder holds what it needs
	}
	return b.build(), nil
}

// reserveJSON sizes the builder's tables for the items of pages, so that each
// is allocated once rather than grown item by item. Lines are reserved page
// by page (jsonPage), after the page's decoded shapes are dropped: the
// collection the new memory brings on then finds them garbage.
func (b *builder) reserveJSON(pages []jsonPage, shapesAhead <-chan []types.Node) {
	shapes, lines := 0, 0
	for i := range pages {
		shapes += len(pages[i].Items.Shapes) + len(pages[i].Items.Groups)
		lines += len(pages[i].Items.Lines)
	}
	b.items = graph.NewIDs(shapes + lines)
	b.shapes = nil
	if shapesAhead != nil {
		b.shapes = <-shapesAhead
	}
	if cap(b.shapes) < shapes {
		b.shapes = make([]types.Node, 0, shapes)
	}
	b.flags = make([]shapeFlags, 0, shapes)
}

func pageIndex(p jsonPage, pos int) float64 {
	if p.Index != nil {
		return *p.Index
	}
	return float64(pos)
}

func (b *builder) jsonPage(p *jsonPage, pos int) {
	pageID := string(p.ID)
	if pageID == "" {
		pageID = strconv.Itoa(pos)
	}
	if _, dup := b.pages[pageID]; dup {
		b.errorf("malformed_json", []string{pageID}, 0, "pass Lucid's response unchanged", "page id %q is used twice", pageID)
		return
	}
	b.addPage(pageID, cleanText(string(p.Title)))

	// Containers: the innermost one (fewest shapes listed) holds a shape.
	holders := map[string]*jsonHolder{}
	var laneHolders []*jsonHolder // in page order, for a lane found by label alone
	containerOf := map[string]*jsonHolder{}
	classes := jsonClasses{}
	for _, s := range p.Items.Shapes {
		if s.Contains == nil && !classes.of(s.Class).container {
			continue
		}
		h := &jsonHolder{id: string(s.ID), lanes: map[string]string{}}
		for _, t := range s.TextAreas {
			if label := string(t.Label); strings.HasPrefix(label, "Primary_") {
				h.lanes[label] = cleanText(string(t.Text))
			}
		}
		if len(h.lanes) > 0 {
			laneHolders = append(laneHolders, h)
		}
		if s.Contains != nil {
			h.size = len(s.Contains.Shapes)
			h.members = make(map[string]bool, h.size)
			for _, m := range s.Contains.Shapes {
				h.members[string(m)] = true
				if cur, ok := containerOf[string(m)]; !ok || h.size < cur.size {
					containerOf[string(m)] = h
				}
			}
		}
		holders[h.id] = h
	}
	groupOf := map[string]string{}
	for _, g := range p.Items.Groups {
		for _, m := range g.Members {
			if _, ok := groupOf[string(m)]; !ok {
				groupOf[string(m)] = string(g.ID)
			}
		}
	}
	// The nodes' text areas are slices of one array, allocated once.
	areas := 0
	for i := range p.Items.Shapes {
		areas += len(p.Items.Shapes[i].TextAreas)
	}
	textAreas := make([]string, 0, areas)
	for _, s := range p.Items.Shapes {
		id := string(s.ID)
		if !b.uniqueJSONID(id, pageID, "shape") {
			continue
		}
		class := classes.of(s.Class)
		n := types.Node{
			ID: id, Page: pageID, Kind: class.kind, Shape: string(s.Class),
			Tags: []string{}, Group: groupOf[id], Comments: []string{},
		}
		text, hasText := "", false
		start := len(textAreas)
		for _, t := range s.TextAreas {
			label := string(t.Label)
			if label == "Placeholder" {
				continue
			}
			v := cleanText(string(t.Text))
			textAreas = append(textAreas, v)
			if label == "Text" && !hasText {
				text, hasText = v, true
			}
		}
		n.TextAreas = textAreas[start:len(textAreas):len(textAreas)]
		if !hasText && len(n.TextAreas) > 0 {
			text = n.TextAreas[0]
		}
		n.Text = text
		for _, kv := range s.CustomData {
			if k, v := kv.name(), strings.TrimSpace(string(kv.Value)); k != "" && v != "" {
				if n.Metadata == nil {
					n.Metadata = map[string]string{}
				}
				n.Metadata[k] = v
			}
		}
		if h, ok := containerOf[id]; ok {
			n.Container = h.id
		}
		n.Lane = laneOf(s.LinkedData, id, laneHolders)
		_, isHolder := holders[id]
		b.addShape(shape{node: n, shapeFlags: shapeFlags{container: isHolder, annotation: class.annotation}})
	}
	for _, g := range p.Items.Groups {
		if id := string(g.ID); b.uniqueJSONID(id, pageID, "group") {
			b.addShape(shape{node: types.Node{ID: id, Page: pageID, Shape: "group"}, shapeFlags: shapeFlags{container: true}})
		}
	}
	p.Items.Shapes = nil
	b.lines = slices.Grow(b.lines, len(p.Items.Lines))
	for _, l := range p.Items.Lines {
		id := string(l.ID)
		if !b.uniqueJSONID(id, pageID, "line") {
			continue
		}
		labels := make([]string, len(l.TextAreas))
		for i, t := range l.TextAreas {
			labels[i] = string(t.Text)
		}
		b.addLine(line{
			id: id, page: pageID,
			ends:   [2]string{string(l.Endpoint1.ConnectedTo), string(l.Endpoint2.ConnectedTo)},
			labels: labels,
		}, [2]string{string(l.Endpoint1.Style), string(l.Endpoint2.Style)})
	}
}

// uniqueJSONID reports whether id is new, and reports malformed_json when it
// is empty or already used: ids are unique across a document.
func (b *builder) uniqueJSONID(id, page, what string) bool {
	switch {
	case id == "":
		b.errorf("malformed_json", nil, 0, "pass Lucid's response unchanged", "a %s on page %s has no id", what, page)
		return false
	case b.has(id):
		b.errorf("malformed_json", []string{id}, 0, "pass Lucid's response unchanged", "id %q is used by more than one item", id)
		return false
	}
	return true
}

// jsonClasses keeps what each shape class says (rules 7-9): a chart has a
// handful of classes, and working it out lower-cases the class three times.
type jsonClasses map[flexString]jsonClass

type jsonClass struct {
	kind                  string
	container, annotation bool
}

func (c jsonClasses) of(class flexString) jsonClass {
	if v, ok := c[class]; ok {
		return v
	}
	v := jsonClass{kind: kindOf(string(class)), container: isJSONContainerClass(string(class)), annotation: isTextOnly(string(class))}
	c[class] = v
	return v
}

func isJSONContainerClass(class string) bool {
	for _, c := range jsonContainerClasses {
		if class == c {
			return true
		}
	}
	return isContainerShape(class)
}

func (kv jsonPair) name() string {
	if k := strings.TrimSpace(string(kv.Key)); k != "" {
		return k
	}
	return strings.TrimSpace(string(kv.Name))
}

// jsonHolder is a container shape: a swim lane, frame or container.
type jsonHolder struct {
	id      string
	size    int               // shapes it lists in contains
	members map[string]bool   // the shapes it lists
	lanes   map[string]string // lane text area label (Primary_N) -> title
}

// laneOf finds the lane title named by a shape's linked data
// (SpreadsheetRowParentKey or SpreadsheetColumnParentKey = "Primary_N"): in a
// swim lane that lists the shape, else in the first swim lane of the page
// with that lane (rule 7).
func laneOf(linked []jsonLinked, id string, swimLanes []*jsonHolder) string {
	// A shape names its row lane, its column lane, or both (the other
	// then being DEFAULT_EMPTY): the first that names a lane wins.
	var labels []string
	for _, ld := range linked {
		for _, kv := range append([]jsonPair{ld.jsonPair}, ld.Data...) {
			switch kv.name() {
			case "SpreadsheetRowParentKey", "SpreadsheetColumnParentKey":
				if v := strings.TrimSpace(string(kv.Value)); v != "" {
					labels = append(labels, v)
				}
			}
		}
	}
	fallback := ""
	for _, label := range labels {
		for _, h := range swimLanes {
			title, ok := h.lanes[label]
			if !ok {
				continue
			}
			if h.members[id] {
				return title
			}
			if fallback == "" {
				fallback = title
			}
		}
	}
	return fallback
}

func errorLine(data []byte, err error) int {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return 0
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func describeJSONError(data []byte, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("field %q: want %s, got %s (line %d)", te.Field, te.Type, te.Value, errorLine(data, err))
	}
	if l := errorLine(data, err); l > 0 {
		return fmt.Sprintf("%v (line %d)", err, l)
	}
	return err.Error()
}

// allocAhead makes a slice of capacity n on another goroutine and writes
// once to each of its memory pages, so that the page faults of its first
// use (costly in a VM: readme/performance.md) are taken while this
// goroutine decodes. The slice, of length 0, comes on the channel.
func allocAhead[T any](n int) <-chan []T {
	ch := make(chan []T, 1)
	go func() {
		s := make([]T, n)
		var zero T
		for i := 0; i < n; i += max(1, 4096/int(reflect.TypeFor[T]().Size())) {
			s[i] = zero
		}
		ch <- s[:0]
	}()
	return ch
}
