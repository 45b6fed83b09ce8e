package document

import "strconv"

// decodeJSONDoc fills doc from data as json.Unmarshal would, without
// reflection or a second pass over the input: strings without escapes are
// substrings of data, and only the fields of jsonDoc are decoded (the rest
// is checked and skipped). It reports false, leaving doc in any state, when
// data holds something it leaves to json.Unmarshal: a syntax error, a value
// of the wrong type, a field given twice, an object key with an escape or a
// non-ASCII byte (which json.Unmarshal may match to a field by Unicode case
// folding), or nesting deeper than maxSkipDepth. The caller then runs
// json.Unmarshal, which gives the same document or the exact error.
// FuzzJSONDecode holds the two to the same result.
//
// counted, when not nil, is told the length of each page's list of shapes
// and of lines as their decoding starts, so that the caller can prepare
// for them on another goroutine.
func decodeJSONDoc(data string, doc *jsonDoc, counted func(list string, n int)) bool {
	return decodeJSON(data, doc, counted, len(data) >= aheadMin)
}

// decodeJSON is decodeJSONDoc, with the first page's lines decoded on
// another goroutine when ahead is set (jsonahead.go).
func decodeJSON(data string, doc *jsonDoc, counted func(list string, n int), ahead bool) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if r != errNotFast {
				panic(r)
			}
			ok = false
		}
	}()
	d := &jsonDecoder{data: data, counted: counted}
	if ahead {
		d.ahead = decodeLinesAhead(data)
	}
	d.space()
	if d.peek() != '{' {
		return false // null, or a type error: json.Unmarshal says which
	}
	d.doc(doc)
	d.space()
	return d.pos == len(d.data)
}

// An empty JSON array decodes to an empty slice, null or no field to nil;
// the decoders below keep that difference, as json.Unmarshal does.

var docFields = []string{"title", "pages"}

func (d *jsonDecoder) doc(doc *jsonDoc) {
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, docFields, &seen) {
		case 0:
			doc.Title = d.flex()
		case 1:
			doc.Pages = nil
			if d.open('[') {
				pages := []jsonPage{}
				for first := true; d.elem(first); first = false {
					pages = append(pages, jsonPage{})
					d.page(&pages[len(pages)-1])
				}
				doc.Pages = &pages
			}
		default:
			d.skip(1)
		}
	}
}

var pageFields = []string{"id", "title", "index", "items", "customData"}
var itemsFields = []string{"shapes", "lines", "groups"}

func (d *jsonDecoder) page(p *jsonPage) {
	if !d.open('{') {
		return // null leaves the page empty
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, pageFields, &seen) {
		case 0:
			p.ID = d.flex()
		case 1:
			p.Title = d.flex()
		case 2:
			p.Index = nil
			if d.value() == '-' || '0' <= d.peek() && d.peek() <= '9' {
				f, err := strconv.ParseFloat(d.number(), 64)
				if err != nil {
					d.fail()
				}
				p.Index = &f
			} else if !d.null() {
				d.fail()
			}
		case 3:
			if !d.open('{') {
				continue // null leaves the items as they are
			}
			var seen uint
			for first := true; ; first = false {
				key, ok := d.member(first)
				if !ok {
					break
				}
				switch d.field(key, itemsFields, &seen) {
				case 0:
					p.Items.Shapes = decodeLongList(d, "shapes", (*jsonDecoder).shape)
				case 1:
					if lines, ok := d.takeLinesAhead(); ok {
						p.Items.Lines = lines
					} else {
						p.Items.Lines = decodeLongList(d, "lines", (*jsonDecoder).line)
					}
				case 2:
					p.Items.Groups = decodeLongList(d, "groups", (*jsonDecoder).group)
				default:
					d.skip(1)
				}
			}
		case 4:
			p.CustomData = decodeList(d, (*jsonDecoder).pair)
		default:
			d.skip(1)
		}
	}
}

// decodeList decodes an array of objects with elem, or null as nil.
func decodeList[T any](d *jsonDecoder, elem func(*jsonDecoder, *T)) []T {
	return decodeListCap(d, elem, 0)
}

// decodeLongList decodes a long array, such as a page's shapes, into a
// slice allocated once for its length, which countElems finds first:
// growing it by append (by 1.25 times past 256 elements) would allocate
// and copy about four times the final slice, most of a large chart's
// memory and a third of its import time.
func decodeLongList[T any](d *jsonDecoder, list string, elem func(*jsonDecoder, *T)) []T {
	if d.value() != '[' {
		return decodeList(d, elem)
	}
	n := countElems(d.data[d.pos:])
	if d.counted != nil {
		d.counted(list, n)
	}
	return decodeListCap(d, elem, n)
}

func decodeListCap[T any](d *jsonDecoder, elem func(*jsonDecoder, *T), n int) []T {
	if !d.open('[') {
		return nil
	}
	list := make([]T, 0, n)
	for first := true; d.elem(first); first = false {
		var v T
		list = append(list, v)
		elem(d, &list[len(list)-1])
	}
	return list
}

// flexList decodes an array of flexStrings, or null as nil.
func (d *jsonDecoder) flexList() []flexString {
	if !d.open('[') {
		return nil
	}
	list := []flexString{}
	for first := true; d.elem(first); first = false {
		list = append(list, d.flex())
	}
	return list
}

var shapeFields = []string{"id", "class", "textAreas", "customData", "linkedData", "contains"}

func (d *jsonDecoder) shape(s *jsonShape) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, shapeFields, &seen) {
		case 0:
			s.ID = d.flex()
		case 1:
			s.Class = d.flex()
		case 2:
			s.TextAreas = d.textAreas()
		case 3:
			s.CustomData = decodeList(d, (*jsonDecoder).pair)
		case 4:
			s.LinkedData = decodeList(d, (*jsonDecoder).linked)
		case 5:
			s.Contains = nil
			if d.open('{') {
				s.Contains = &struct {
					Shapes []flexString `json:"shapes"`
				}{}
				var seen uint
				for first := true; ; first = false {
					key, ok := d.member(first)
					if !ok {
						break
					}
					if d.field(key, containsFields, &seen) == 0 {
						s.Contains.Shapes = d.flexList()
					} else {
						d.skip(1)
					}
				}
			}
		default:
			d.skip(1)
		}
	}
}

var containsFields = []string{"shapes"}

// textAreas decodes a list of text areas, or null as nil. The lists are
// slices of blocks of areaBlock areas: one allocation per item, most of
// them of one area, cost more than the rest of an item's decoding.
func (d *jsonDecoder) textAreas() []jsonTextArea {
	if !d.open('[') {
		return nil
	}
	if d.areas == nil {
		d.areas = make([]jsonTextArea, 0, areaBlock)
	}
	start := len(d.areas)
	for first := true; d.elem(first); first = false {
		if len(d.areas) == cap(d.areas) { // a new block, with this list so far
			block := make([]jsonTextArea, 0, max(areaBlock, 2*(len(d.areas)-start)))
			d.areas, start = append(block, d.areas[start:]...), 0
		}
		d.areas = append(d.areas, jsonTextArea{})
		d.textArea(&d.areas[len(d.areas)-1])
	}
	return d.areas[start:len(d.areas):len(d.areas)]
}

const areaBlock = 4096

var textAreaFields = []string{"label", "text"}

func (d *jsonDecoder) textArea(t *jsonTextArea) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, textAreaFields, &seen) {
		case 0:
			t.Label = d.flex()
		case 1:
			t.Text = d.flex()
		default:
			d.skip(1)
		}
	}
}

var pairFields = []string{"key", "name", "value", "data"}

func (d *jsonDecoder) pair(kv *jsonPair) {
	d.pairOrLinked(kv, nil)
}

func (d *jsonDecoder) linked(ld *jsonLinked) {
	d.pairOrLinked(&ld.jsonPair, &ld.Data)
}

// pairOrLinked decodes a customData entry, or with data not nil a
// linkedData entry, which has a data list besides.
func (d *jsonDecoder) pairOrLinked(kv *jsonPair, data *[]jsonPair) {
	if !d.open('{') {
		return
	}
	fields := pairFields
	if data == nil {
		fields = fields[:3]
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, fields, &seen) {
		case 0:
			kv.Key = d.flex()
		case 1:
			kv.Name = d.flex()
		case 2:
			kv.Value = d.flex()
		case 3:
			*data = decodeList(d, (*jsonDecoder).pair)
		default:
			d.skip(1)
		}
	}
}

var lineFields = []string{"id", "endpoint1", "endpoint2", "textAreas"}

func (d *jsonDecoder) line(l *jsonLine) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, lineFields, &seen) {
		case 0:
			l.ID = d.flex()
		case 1:
			d.endpoint(&l.Endpoint1)
		case 2:
			d.endpoint(&l.Endpoint2)
		case 3:
			l.TextAreas = d.textAreas()
		default:
			d.skip(1)
		}
	}
}

var endpointFields = []string{"style", "connectedTo"}

func (d *jsonDecoder) endpoint(e *jsonEndpoint) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, endpointFields, &seen) {
		case 0:
			e.Style = d.flex()
		case 1:
			e.ConnectedTo = d.flex()
		default:
			d.skip(1)
		}
	}
}

var groupFields = []string{"id", "members"}

func (d *jsonDecoder) group(g *jsonGroup) {
	if !d.open('{') {
		return
	}
	var seen uint
	for first := true; ; first = false {
		key, ok := d.member(first)
		if !ok {
			return
		}
		switch d.field(key, groupFields, &seen) {
		case 0:
			g.ID = d.flex()
		case 1:
			g.Members = d.flexList()
		default:
			d.skip(1)
		}
	}
}
