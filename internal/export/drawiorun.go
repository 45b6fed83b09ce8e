package export

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// drawioMaxInflate caps what the compressed pages of one file inflate to,
// as the reader does.
const drawioMaxInflate = 64 << 20

// DrawioRun writes src, a draw.io file, with the run of o.Trace drawn on
// it (readme/drawio.md#the-run-drawn-back): the style of each node the run
// entered and each edge it took gets strokeColor, fillColor (nodes) and
// strokeWidth, green, or red (orange for a limit) for the node it stopped
// at, and a tooltip saying "dtree run ID: ✓ 2 visits" (a cell with no
// Edit Data is wrapped in the <object> draw.io uses for a tooltip). What
// the author had there is kept in the wrapper's dtree-drawn attribute
// (drawnAttr), so that an earlier run drawn on src is undone first: the
// result is the run drawn on the author's own file. A colour the author
// changed since that earlier run was drawn is the author's: it is kept,
// and said in the returned notes. Every other byte of src is kept, except
// that a compressed page is written back plain. doc is the chart read
// from src (its ids name the cells as the reader gives them). Its time is
// linear in src.
func DrawioRun(ctx context.Context, w io.Writer, src string, doc *types.Document, o PictureOptions) (notes []string, err error) {
	marks := map[string]drawioMark{}
	if o.Trace != nil {
		marks = drawioMarks(doc, o.Trace)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	undo := &drawioEditor{undo: true, seen: map[string]bool{}, pageIDs: map[string]bool{}}
	plain, err := undo.file(src)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e := &drawioEditor{marks: marks, seen: map[string]bool{}, pageIDs: map[string]bool{}}
	out, err := e.file(plain)
	if err != nil {
		return nil, err
	}
	_, err = io.WriteString(w, out)
	return undo.notes, err
}

// drawioMark is what the run changes on one cell.
type drawioMark struct {
	style   [][2]string // keys replaced or added
	tooltip string
}

// drawioMarks are the run's marks by cell id, as the pictures mark a run
// (picture.mark, note, takenEdges): a run of 100,000 steps is marked in
// linear time.
func drawioMarks(doc *types.Document, t *Trace) map[string]drawioMark {
	marks := map[string]drawioMark{}
	prefix := "dtree run " + t.RunID + ": "
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		nd := picNode{id: n.ID, kind: n.Kind, visits: t.Visits[n.ID], retries: t.Retries[n.ID]}
		if nd.visits > 0 {
			nd.state = stateVisited
		}
		if t.Interrupted[n.ID] {
			nd.stop("interrupted")
		}
		if n.ID == t.Stopped && t.Stopped != "" {
			nd.stop(t.StoppedHow)
		}
		var stroke, fill, width string
		switch nd.state {
		case stateVisited:
			stroke, fill, width = colorVisited, fillVisited, "3"
		case stateFailed, stateInterrupted:
			stroke, fill, width = colorFailed, fillFailed, "4"
		case stateLimit:
			stroke, fill, width = colorLimit, fillLimit, "4"
		default:
			continue
		}
		marks[n.ID] = drawioMark{style: [][2]string{{"strokeColor", stroke}, {"fillColor", fill}, {"strokeWidth", width}},
			tooltip: prefix + note(&nd)}
	}
	keys := make([][2]string, len(doc.Edges))
	labels := make([]string, len(doc.Edges))
	for i, e := range doc.Edges {
		keys[i], labels[i] = [2]string{e.From, e.To}, e.Label
	}
	taken := takenEdges(keys, labels, t.Steps, func(s Step) ([2]string, bool) { return [2]string{s.From, s.To}, true })
	for i, n := range taken {
		id := doc.Edges[i].ID
		if id == "" || n == 0 {
			continue
		}
		how := "taken"
		if n > 1 {
			how = fmt.Sprintf("taken %d times", n)
		}
		marks[id] = drawioMark{style: [][2]string{{"strokeColor", colorVisited}, {"strokeWidth", "3"}}, tooltip: prefix + how}
	}
	return marks
}

// drawioEditor rewrites a draw.io file's cells. seen and pageIDs follow
// the reader's naming: a cell id an earlier page used is "PAGE:ID", a page
// id used before is "ID-N".
type drawioEditor struct {
	marks    map[string]drawioMark
	undo     bool     // undo what an earlier run drew, instead of marking
	notes    []string // the author's colours kept while undoing
	seen     map[string]bool
	pageIDs  map[string]bool
	pages    int
	inflated int64
}

// xmlTok is one piece of markup: a start tag (with its attributes), an end
// tag, or (name "") anything else.
type xmlTok struct {
	start, end int // offsets in the text
	name       string
	closing    bool // </name>
	selfClose  bool // <name … />
	attrs      []xmlAttrPos
}

type xmlAttrPos struct {
	name           string
	at             int // where the attribute's name starts
	valStart, valE int // the raw value, between its quotes
	quote          byte
}

func (t *xmlTok) attr(s, name string) (xmlAttrPos, bool) {
	for _, a := range t.attrs {
		if a.name == name {
			return a, true
		}
	}
	return xmlAttrPos{}, false
}

func (a xmlAttrPos) value(s string) string { return html.UnescapeString(s[a.valStart:a.valE]) }

// next reads the markup at s[pos:] (s[pos] is '<'), or returns an error.
func nextTok(s string, pos int) (xmlTok, error) {
	rest := s[pos:]
	skipTo := func(end string) (xmlTok, error) {
		i := strings.Index(rest, end)
		if i < 0 {
			return xmlTok{}, fmt.Errorf("offset %d: unclosed %.9s", pos, rest)
		}
		return xmlTok{start: pos, end: pos + i + len(end)}, nil
	}
	switch {
	case strings.HasPrefix(rest, "<!--"):
		return skipTo("-->")
	case strings.HasPrefix(rest, "<![CDATA["):
		return skipTo("]]>")
	case strings.HasPrefix(rest, "<?"):
		return skipTo("?>")
	case strings.HasPrefix(rest, "<!"):
		return skipTo(">")
	}
	t := xmlTok{start: pos}
	i := pos + 1
	if i < len(s) && s[i] == '/' {
		t.closing = true
		i++
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" \t\r\n/>", rune(s[j])) {
		j++
	}
	t.name = s[i:j]
	if t.name == "" {
		return t, fmt.Errorf("offset %d: a tag with no name", pos)
	}
	i = j
	for {
		for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
			i++
		}
		if i >= len(s) {
			return t, fmt.Errorf("offset %d: the tag <%s is not closed", pos, t.name)
		}
		switch {
		case s[i] == '>':
			t.end = i + 1
			return t, nil
		case s[i] == '/' && i+1 < len(s) && s[i+1] == '>':
			t.selfClose, t.end = true, i+2
			return t, nil
		}
		a := xmlAttrPos{at: i}
		for i < len(s) && !strings.ContainsRune(" \t\r\n=/>", rune(s[i])) {
			i++
		}
		a.name = s[a.at:i]
		for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
			i++
		}
		if a.name == "" || i >= len(s) || s[i] != '=' {
			return t, fmt.Errorf("offset %d: attribute %q of <%s> has no value", a.at, a.name, t.name)
		}
		i++
		for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
			i++
		}
		if i >= len(s) || (s[i] != '"' && s[i] != '\'') {
			return t, fmt.Errorf("offset %d: attribute %q of <%s> is not quoted", a.at, a.name, t.name)
		}
		a.quote = s[i]
		a.valStart = i + 1
		k := strings.IndexByte(s[a.valStart:], a.quote)
		if k < 0 {
			return t, fmt.Errorf("offset %d: attribute %q of <%s> is not closed", a.at, a.name, t.name)
		}
		a.valE = a.valStart + k
		i = a.valE + 1
		t.attrs = append(t.attrs, a)
	}
}

// textEdit replaces s[from:to] with text.
type textEdit struct {
	from, to int
	text     string
}

func applyEdits(s string, edits []textEdit) string {
	if len(edits) == 0 {
		return s
	}
	// An insertion before a replacement at the same place: edits never
	// overlap otherwise.
	order := func(a, b textEdit) int {
		if a.from != b.from {
			return a.from - b.from
		}
		return a.to - b.to
	}
	if !slices.IsSortedFunc(edits, order) { // they come in order, cell by cell
		slices.SortStableFunc(edits, order)
	}
	var b strings.Builder
	b.Grow(len(s) + 64*len(edits))
	at := 0
	for _, e := range edits {
		b.WriteString(s[at:e.from])
		b.WriteString(e.text)
		at = e.to
	}
	b.WriteString(s[at:])
	return b.String()
}

// drawioCellPos is one cell of a page as the editor found it.
type drawioCellPos struct {
	id      string
	wrapper *xmlTok // <object>/<UserObject>, nil when none
	cell    xmlTok  // <mxCell …>
	end     int     // after the cell's end (its </mxCell>, or its />)
}

// file edits a whole file: an <mxfile> of <diagram> pages, or a bare
// <mxGraphModel>.
func (e *drawioEditor) file(s string) (string, error) {
	var edits []textEdit
	var page *drawioPageEdit // the plain page being read
	for pos := 0; pos < len(s); {
		lt := strings.IndexByte(s[pos:], '<')
		if lt < 0 {
			break
		}
		t, err := nextTok(s, pos+lt)
		if err != nil {
			return "", err
		}
		pos = t.end
		switch {
		case t.name == "diagram" && !t.closing && !t.selfClose:
			id := ""
			if a, ok := t.attr(s, "id"); ok {
				id = a.value(s)
			}
			// plain (an <mxGraphModel> child) or compressed (text)
			body := strings.Index(s[pos:], "</diagram>")
			if body < 0 {
				return "", errors.New("a <diagram> is not closed")
			}
			inner := s[pos : pos+body]
			if strings.Contains(inner, "<mxGraphModel") {
				page = e.newPage(id)
				continue
			}
			pageEd := e.newPage(id)
			if strings.TrimSpace(inner) == "" {
				pageEd.finish(e)
				continue
			}
			model, err := e.inflate(strings.TrimSpace(inner))
			if err != nil {
				return "", err
			}
			cells, err := scanCells(model, 0)
			if err != nil {
				return "", fmt.Errorf("a compressed page: %w", err)
			}
			pageEd.cells = cells
			pageEd.finish(e)
			if edited := e.edits(pageEd, model); len(edited) > 0 {
				edits = append(edits, textEdit{from: pos, to: pos + body, text: applyEdits(model, edited)})
			}
			pos += body
		case t.name == "mxGraphModel" && !t.closing && !t.selfClose:
			if page == nil { // a bare model: page "0"
				page = e.newPage("0")
			}
			end := strings.Index(s[pos:], "</mxGraphModel>")
			if end < 0 {
				return "", errors.New("an <mxGraphModel> is not closed")
			}
			cells, err := scanCells(s[:pos+end], pos)
			if err != nil {
				return "", err
			}
			page.cells = cells
			page.finish(e)
			edits = append(edits, e.edits(page, s)...)
			page = nil
			pos += end
		}
	}
	return applyEdits(s, edits), nil
}

// drawioPageEdit is one page: its id as the reader names it, and its cells.
type drawioPageEdit struct {
	id    string
	cells []drawioCellPos
	docID map[int]string // cell index -> the id dtree gives it
}

func (e *drawioEditor) newPage(id string) *drawioPageEdit {
	e.pages++
	if id == "" {
		id = strconv.Itoa(e.pages)
	}
	if e.pageIDs[id] {
		id = id + "-" + strconv.Itoa(e.pages)
	}
	e.pageIDs[id] = true
	return &drawioPageEdit{id: id}
}

// finish names the page's cells as the reader does, then counts their ids
// as seen for the pages after it.
func (p *drawioPageEdit) finish(e *drawioEditor) {
	p.docID = make(map[int]string, len(p.cells))
	for i, c := range p.cells {
		if e.seen[c.id] {
			p.docID[i] = p.id + ":" + c.id
		} else {
			p.docID[i] = c.id
		}
	}
	for _, c := range p.cells {
		if c.id != "" {
			e.seen[c.id] = true
		}
	}
}

// edits are the changes to the page's cells in s: the run's marks, or,
// undoing, what an earlier run drew undone.
func (e *drawioEditor) edits(p *drawioPageEdit, s string) []textEdit {
	if e.undo {
		var out []textEdit
		for i, c := range p.cells {
			if c.wrapper == nil {
				continue
			}
			if a, ok := c.wrapper.attr(s, drawnAttr); ok {
				out = append(out, e.undoCell(s, c, p.docID[i], a.value(s))...)
			}
		}
		return out
	}
	return p.edits(s, e.marks)
}

// drawnAttr is the attribute of a drawn cell's <object> that says what
// dtree changed on it, so that the next run drawn undoes it first: its
// value is a list of entries, each ended by ";": "KEY=OLD>NEW" for a
// style key the author had as OLD and dtree set to NEW, "KEY>NEW" for one
// the author did not have, and flags: +wrapped (dtree wrapped the cell in
// the <object>), +novalue (the cell had no value), +nostyle (no style),
// +bare (its style did not end with ";"), +notooltip (the author's
// wrapper had no tooltip). The readers leave it out of the custom data.
const drawnAttr = "dtree-drawn"

// drawnEntry is one style key of a drawnAttr.
type drawnEntry struct {
	key, old, new string
	had           bool // the author had the key: old is its value
}

type drawnCell struct {
	keys                                       []drawnEntry
	wrapped, novalue, nostyle, bare, notooltip bool
}

func parseDrawn(v string) drawnCell {
	var d drawnCell
	for _, part := range strings.Split(v, ";") {
		switch part {
		case "":
		case "+wrapped":
			d.wrapped = true
		case "+novalue":
			d.novalue = true
		case "+nostyle":
			d.nostyle = true
		case "+bare":
			d.bare = true
		case "+notooltip":
			d.notooltip = true
		default:
			before, nw, ok := strings.Cut(part, ">")
			if !ok {
				continue
			}
			k, old, had := strings.Cut(before, "=")
			d.keys = append(d.keys, drawnEntry{key: k, old: old, new: nw, had: had})
		}
	}
	return d
}

func (d drawnCell) String() string {
	var b strings.Builder
	for _, k := range d.keys {
		b.WriteString(k.key)
		if k.had {
			b.WriteString("=" + k.old)
		}
		b.WriteString(">" + k.new + ";")
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{d.wrapped, "+wrapped"}, {d.novalue, "+novalue"}, {d.nostyle, "+nostyle"}, {d.bare, "+bare"}, {d.notooltip, "+notooltip"}} {
		if f.on {
			b.WriteString(f.name + ";")
		}
	}
	return b.String()
}

// styleGet is key's value in a draw.io style, and whether it has it.
func styleGet(style, key string) (string, bool) {
	for _, part := range strings.Split(style, ";") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.TrimSpace(k) == key {
			return v, true
		}
	}
	return "", false
}

// undoCell puts back what the author had on cell c, whose wrapper's
// drawnAttr is drawn: each style key dtree set, unless the author changed
// it since (then the author's value is kept, and a note says so), the
// tooltip without dtree's line, and the cell unwrapped when dtree wrapped
// it and the author added no Edit Data to the wrapper since.
func (e *drawioEditor) undoCell(s string, c drawioCellPos, id, drawn string) []textEdit {
	d := parseDrawn(drawn)
	w := *c.wrapper
	tag := s[c.cell.start:c.cell.end]
	var cellEdits []textEdit
	if a, ok := c.cell.attr(s, "style"); ok {
		parts := strings.Split(a.value(s), ";")
		for _, k := range d.keys {
			for i, part := range parts {
				key, v, ok := strings.Cut(part, "=")
				if !ok || strings.TrimSpace(key) != k.key {
					continue
				}
				switch {
				case v != k.new:
					e.notes = append(e.notes, fmt.Sprintf("cell %s: %s=%s is not what the run drawn before set (%s): kept as yours", id, k.key, v, k.new))
				case k.had:
					parts[i] = k.key + "=" + k.old
				default:
					parts = slices.Delete(parts, i, i+1)
				}
				break
			}
		}
		style := strings.Join(parts, ";")
		if d.bare {
			style = strings.TrimSuffix(style, ";")
		}
		if style == "" && d.nostyle {
			cellEdits = append(cellEdits, dropAttr(s, a, c.cell.start))
		} else {
			cellEdits = append(cellEdits, textEdit{from: a.valStart - c.cell.start, to: a.valE - c.cell.start, text: xmlAttr(style)})
		}
	}
	old := ""
	tip, hasTip := w.attr(s, "tooltip")
	if hasTip {
		old = authorTooltip(tip.value(s))
	}
	data := false // Edit Data the author added to dtree's wrapper
	for _, a := range w.attrs {
		switch a.name {
		case "label", "tooltip", "id", drawnAttr:
		default:
			data = true
		}
	}
	if d.wrapped && old == "" && !data {
		// <object label=V tooltip=… id=I …><mxCell …> is
		// <mxCell id=I value=V …> again, and its </object> goes.
		var b strings.Builder
		b.WriteString("<" + c.cell.name)
		if a, ok := w.attr(s, "id"); ok {
			b.WriteString(" id=" + string(a.quote) + s[a.valStart:a.valE] + string(a.quote))
		}
		if a, ok := w.attr(s, "label"); ok && !d.novalue {
			b.WriteString(" value=" + string(a.quote) + s[a.valStart:a.valE] + string(a.quote))
		}
		at := 1 + len(c.cell.name)
		rest := applyEdits(tag, cellEdits)[at:]
		b.WriteString(rest)
		out := []textEdit{{from: w.start, to: c.cell.end, text: b.String()}}
		after := c.end
		for after < len(s) && strings.ContainsRune(" \t\r\n", rune(s[after])) {
			after++
		}
		if end := "</" + w.name + ">"; strings.HasPrefix(s[after:], end) {
			out = append(out, textEdit{from: c.end, to: after + len(end)})
		}
		return out
	}
	var out []textEdit
	for _, a := range w.attrs {
		switch {
		case a.name == drawnAttr:
			out = append(out, dropAttr(s, a, 0))
		case a.name == "tooltip" && old == "" && (d.notooltip || d.wrapped):
			out = append(out, dropAttr(s, a, 0))
		case a.name == "tooltip" && old != tip.value(s):
			out = append(out, textEdit{from: a.valStart, to: a.valE, text: xmlAttr(old)})
		}
	}
	if len(cellEdits) > 0 {
		out = append(out, textEdit{from: c.cell.start, to: c.cell.end, text: applyEdits(tag, cellEdits)})
	}
	return out
}

// dropAttr removes attribute a, and the space before it, from a tag that
// starts at offset base of s (its edit is relative to base).
func dropAttr(s string, a xmlAttrPos, base int) textEdit {
	from := a.at
	for from > 0 && strings.ContainsRune(" \t\r\n", rune(s[from-1])) {
		from--
	}
	return textEdit{from: from - base, to: a.valE + 1 - base}
}

// edits are the run's marks on the page's cells, in s, and what the
// author had there in each wrapper's drawnAttr.
func (p *drawioPageEdit) edits(s string, marks map[string]drawioMark) []textEdit {
	var out []textEdit
	for i, c := range p.cells {
		m, ok := marks[p.docID[i]]
		if !ok || c.id == "" {
			continue
		}
		var d drawnCell
		style, hasStyle := "", false
		if a, ok := c.cell.attr(s, "style"); ok {
			style, hasStyle = a.value(s), true
		}
		for _, kv := range m.style {
			old, had := styleGet(style, kv[0])
			d.keys = append(d.keys, drawnEntry{key: kv[0], old: old, new: kv[1], had: had})
		}
		d.nostyle = !hasStyle
		d.bare = style != "" && !strings.HasSuffix(style, ";")
		cellTag := rebuildTag(s, c.cell, m.style, c.wrapper == nil)
		if c.wrapper != nil {
			// The wrapper holds the tooltip; the cell, the style.
			old := ""
			a, hasTip := c.wrapper.attr(s, "tooltip")
			if hasTip {
				old = a.value(s)
			}
			d.notooltip = !hasTip
			out = append(out, setAttr(s, *c.wrapper, "tooltip", tooltip(m.tooltip, old)))
			out = append(out, setAttr(s, *c.wrapper, drawnAttr, d.String()))
			out = append(out, textEdit{from: c.cell.start, to: c.cell.end, text: cellTag})
			continue
		}
		// Wrap the cell, as draw.io does when a tooltip is set: the
		// wrapper takes its value as label, and its id.
		d.wrapped = true
		var w strings.Builder
		w.WriteString("<object label=")
		if a, ok := c.cell.attr(s, "value"); ok {
			w.WriteString(string(a.quote) + s[a.valStart:a.valE] + string(a.quote))
		} else {
			d.novalue = true
			w.WriteString(`""`)
		}
		w.WriteString(` tooltip="` + xmlAttr(m.tooltip) + `" id=`)
		a, _ := c.cell.attr(s, "id")
		w.WriteString(string(a.quote) + s[a.valStart:a.valE] + string(a.quote))
		w.WriteString(" " + drawnAttr + `="` + xmlAttr(d.String()) + `">`)
		out = append(out, textEdit{from: c.cell.start, to: c.cell.end, text: w.String() + cellTag})
		out = append(out, textEdit{from: c.end, to: c.end, text: "</object>"})
	}
	return out
}

// tooltip is the run's note, before the author's own tooltip; the note of
// an earlier run drawn on the file is replaced.
func tooltip(note, old string) string {
	old = authorTooltip(old)
	if old == "" {
		return note
	}
	return note + "\n" + old
}

// authorTooltip is a tooltip without the line a run drawn on it wrote.
func authorTooltip(tip string) string {
	if strings.HasPrefix(tip, "dtree run ") {
		_, tip, _ = strings.Cut(tip, "\n")
	}
	return tip
}

// setAttr sets attribute name of tag t to value: its value replaced, or
// the attribute added, after the tag's name (the tooltip draw.io shows
// first) or, last, at its end (dtree's drawnAttr).
func setAttr(s string, t xmlTok, name, value string) textEdit {
	if a, ok := t.attr(s, name); ok {
		return textEdit{from: a.valStart, to: a.valE, text: xmlAttr(value)}
	}
	at := t.start + 1 + len(t.name)
	if name == drawnAttr {
		at = t.end - 1
		if t.selfClose {
			at--
		}
	}
	return textEdit{from: at, to: at, text: " " + name + `="` + xmlAttr(value) + `"`}
}

// rebuildTag is the <mxCell> start tag t with its style's keys set (and
// without its id and value when unwrapped is set: its wrapper takes them).
func rebuildTag(s string, t xmlTok, style [][2]string, unwrapped bool) string {
	var edits []textEdit
	for _, a := range t.attrs {
		if unwrapped && (a.name == "id" || a.name == "value") {
			from := a.at
			for from > t.start && strings.ContainsRune(" \t\r\n", rune(s[from-1])) {
				from--
			}
			edits = append(edits, textEdit{from: from - t.start, to: a.valE + 1 - t.start})
		}
	}
	tag := s[t.start:t.end]
	if a, ok := t.attr(s, "style"); ok {
		edits = append(edits, textEdit{from: a.valStart - t.start, to: a.valE - t.start, text: xmlAttr(setStyle(a.value(s), style))})
	} else {
		at := 1 + len(t.name)
		edits = append(edits, textEdit{from: at, to: at, text: ` style="` + xmlAttr(setStyle("", style)) + `"`})
	}
	return applyEdits(tag, edits)
}

// setStyle sets keys of a draw.io style ("rounded=1;html=1;"): a key it has
// gets the new value in its place, the others are added at the end.
func setStyle(style string, kv [][2]string) string {
	parts := strings.Split(style, ";")
	done := make([]bool, len(kv))
	for i, part := range parts {
		k, _, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		for j, p := range kv {
			if strings.TrimSpace(k) == p[0] {
				parts[i], done[j] = p[0]+"="+p[1], true
			}
		}
	}
	out := strings.Join(parts, ";")
	if out != "" && !strings.HasSuffix(out, ";") {
		out += ";"
	}
	for j, p := range kv {
		if !done[j] {
			out += p[0] + "=" + p[1] + ";"
		}
	}
	return out
}

// scanCells finds the cells of a model in s[from:]: each <mxCell>, its
// id (its wrapper's when it has one) and where it ends.
func scanCells(s string, from int) ([]drawioCellPos, error) {
	var cells []drawioCellPos
	var wrapper *xmlTok
	open := -1 // the cell whose end is being looked for
	depth := 0 // elements open inside that cell
	for pos := from; pos < len(s); {
		lt := strings.IndexByte(s[pos:], '<')
		if lt < 0 {
			break
		}
		t, err := nextTok(s, pos+lt)
		if err != nil {
			return nil, err
		}
		pos = t.end
		if t.name == "" {
			continue
		}
		if open >= 0 {
			switch {
			case t.closing:
				depth--
			case !t.selfClose:
				depth++
			}
			if depth < 0 {
				cells[open].end, open = t.end, -1
			}
			continue
		}
		switch {
		case t.closing && (t.name == "object" || t.name == "UserObject"):
			wrapper = nil
		case t.closing:
		case t.name == "object" || t.name == "UserObject":
			w := t
			wrapper = &w
		case t.name == "mxCell":
			c := drawioCellPos{cell: t, wrapper: wrapper}
			src := t
			if wrapper != nil {
				src = *wrapper
			}
			if a, ok := src.attr(s, "id"); ok {
				c.id = a.value(s)
			}
			wrapper = nil
			cells = append(cells, c)
			if t.selfClose {
				cells[len(cells)-1].end = t.end
			} else {
				open, depth = len(cells)-1, 0
			}
		}
	}
	if open >= 0 {
		return nil, errors.New("an <mxCell> is not closed")
	}
	return cells, nil
}

// inflate undoes draw.io's compression (base64, raw deflate, URL
// encoding), bounded as the reader bounds it.
func (e *drawioEditor) inflate(s string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		return "", fmt.Errorf("a compressed page is not base64 (%v)", err)
	}
	fr := flate.NewReader(bytes.NewReader(raw))
	defer fr.Close()
	left := drawioMaxInflate - e.inflated
	var out bytes.Buffer
	n, err := io.Copy(&out, io.LimitReader(fr, left+1))
	e.inflated += n
	if err != nil {
		return "", fmt.Errorf("a compressed page does not inflate (%v)", err)
	}
	if n > left {
		return "", fmt.Errorf("the compressed pages inflate to more than %d MiB", drawioMaxInflate>>20)
	}
	return url.PathUnescape(out.String())
}
