package document

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// FormatDrawio is a draw.io (diagrams.net) file: an <mxfile> of <diagram>
// pages, or a bare <mxGraphModel>.
const FormatDrawio = "drawio"

// drawioMaxInflate caps the model (after the URL escapes are decoded) that
// the compressed pages of one file inflate to, all pages together: a real
// diagram of 100,000 shapes is about 30 MiB of XML, testchart's indented one
// 54 MiB. Pages are read as they inflate, a window at a time: this bounds the
// time, and the window a page of one endless token (a bomb of zeros) needs.
const drawioMaxInflate = 64 << 20

// drawioMaxDepth caps element nesting: draw.io writes mxfile > diagram >
// mxGraphModel > root > object > mxCell > mxGeometry > mxPoint/Array, under 10.
const drawioMaxDepth = 64

const drawioHint = "open the file in draw.io (diagrams.net) and save it again; dtree reads .drawio files as draw.io writes them"

// FromDrawio reads a draw.io file (readme/drawio.md): every <diagram> is a
// page, its vertices are shapes and its edges lines, and the shared graph
// rules follow. The error is only for a failure to read r; a file that is not
// draw.io's is a malformed_drawio finding.
func FromDrawio(r io.Reader) (*types.Document, error) {
	return fromDrawio(r, sizeOf(r))
}

func fromDrawio(r io.Reader, size int64) (*types.Document, error) {
	b := newBuilder(FormatDrawio)
	dr := &drawioReader{b: b, seen: map[string]bool{}, interned: map[string]string{}}
	if err := dr.read(r, size); err != nil {
		var re readErr
		if errors.As(err, &re) {
			return nil, re.err
		}
		b.errorf("malformed_drawio", nil, 0, drawioHint, "not a draw.io file: %v", err)
		return b.doc, nil
	}
	if len(dr.pages) == 0 {
		b.errorf("malformed_drawio", nil, 0, drawioHint, "not a draw.io file: no <mxfile> with <diagram> pages and no <mxGraphModel>")
		return b.doc, nil
	}
	cells := 0
	for i := range dr.pages {
		cells += dr.pages[i].cells.n
	}
	b.reserve(cells) // tables sized once, from the cells read
	for i := range dr.pages {
		dr.page(&dr.pages[i], i)
		dr.pages[i] = drawioPage{}
	}
	if dr.named != "" {
		// A draw.io file has no title: read from a file, it is the file's
		// name (Read sets it); from stdin, the first page's name.
		b.doc.Title = cleanText(dr.named)
	}
	doc := b.build()
	for _, list := range [][]types.Diagnostic{doc.Errors, doc.Warnings} {
		for i := range list {
			d := &list[i]
			if h, ok := drawioHints[d.Class]; ok {
				d.Hint = h
			}
			if name, ok := dr.compressed[d.Page]; ok && d.Line == 0 {
				// A compressed page has no lines: the message names the
				// cell, and this its page.
				d.Message += fmt.Sprintf(" (on page %q, saved compressed: no line to name)", name)
			}
		}
	}
	return doc, nil
}

// NamePages makes the findings raised on a draw.io chart after it was
// read (lint's, the node settings') name their page, as the reader's own
// do: one on a page saved compressed, whose cells have no line, gets
// ` (on page "NAME", saved compressed: no line to name)`, one on a page of
// a file of several pages ` (on page "NAME")`. A finding that names its
// page already is left as it is; other formats' are. Linear in the chart
// and the findings.
func NamePages(doc *types.Document, diags []types.Diagnostic) {
	if doc.Format != FormatDrawio || len(diags) == 0 {
		return
	}
	lined := map[string]bool{} // pages with a cell that has a line: plain
	for i := range doc.Nodes {
		if doc.Nodes[i].Line > 0 {
			lined[doc.Nodes[i].Page] = true
		}
	}
	names := make(map[string]string, len(doc.Pages))
	for _, p := range doc.Pages {
		names[p.ID] = p.Title
		if p.Title == "" {
			names[p.ID] = p.ID
		}
	}
	for i := range diags {
		d := &diags[i]
		name, ok := names[d.Page]
		if !ok || strings.Contains(d.Message, fmt.Sprintf("page %q", name)) {
			continue
		}
		switch {
		case d.Line == 0 && !lined[d.Page]:
			d.Message += fmt.Sprintf(" (on page %q, saved compressed: no line to name)", name)
		case len(doc.Pages) > 1:
			d.Message += fmt.Sprintf(" (on page %q)", name)
		}
	}
}

// DrawioTitle is the title of a draw.io file read from path: its name
// without the extension, as draw.io names the diagram in its title bar.
func DrawioTitle(path string) string {
	base := filepath.Base(path)
	lower := strings.ToLower(base)
	for _, ext := range []string{".drawio.xml", ".drawio", ".dio", ".xml"} {
		if strings.HasSuffix(lower, ext) && len(base) > len(ext) {
			return base[:len(base)-len(ext)]
		}
	}
	return base
}

// drawioHints say what to do in draw.io where the shared rules' hints say
// what to do in Lucid.
var drawioHints = map[string]string{
	"dangling_line":       "in draw.io, drag the edge's end onto the shape until the shape's outline turns blue, then save",
	"ignored_empty_shape": "delete the shape in draw.io if it is a leftover; if it is a step, type its task in it and connect it with edges",
	"empty_chart":         "draw at least one shape in draw.io (a rectangle with the task as its text), then save",
	"duplicate_line":      "delete one of the two edges in draw.io",
	"unlabeled_branch":    "in draw.io, double-click the edge and type the answer that leads this way (for example Yes or No); or, if the edges should all run at once, add the property parallel: true to the node (Edit Data, Ctrl+M)",
	"not_a_flowchart":     "dtree runs flowcharts: draw the workflow with draw.io's Flowchart shapes (a Terminator to start, rectangles as steps, Decision diamonds with labelled edges)",
}

// readErr is an I/O error of the reader, passed on as FromDrawio's error.
type readErr struct{ err error }

func (e readErr) Error() string { return e.err.Error() }

type drawioCell struct {
	id, value, style, parent, source, target string
	data                                     [][2]string // the wrapper's attributes, Edit Data's properties
	line                                     int32       // in the file; 0 in a compressed page
	vertex, edge                             bool
}

// drawioCells holds a page's cells in blocks, so that growing it copies
// none and reserves no more than a block ahead.
type drawioCells struct {
	blocks [][]drawioCell
	n      int
}

const drawioBlockBits = 10

func (cs *drawioCells) add(c drawioCell) {
	if cs.n&(1<<drawioBlockBits-1) == 0 {
		cs.blocks = append(cs.blocks, make([]drawioCell, 0, 1<<drawioBlockBits))
	}
	b := &cs.blocks[len(cs.blocks)-1]
	*b = append(*b, c)
	cs.n++
}

func (cs *drawioCells) at(i int) *drawioCell {
	return &cs.blocks[i>>drawioBlockBits][i&(1<<drawioBlockBits-1)]
}

type drawioPage struct {
	id, name   string
	cells      drawioCells
	compressed bool
}

type drawioReader struct {
	b          *builder
	pages      []drawioPage
	inflated   int64
	seen       map[string]bool   // cell ids of earlier pages
	named      string            // the first <diagram>'s name attribute
	compressed map[string]string // page id in the document: name, of the pages saved compressed
	// What is kept of the decoder's window is copied into arena blocks;
	// styles and parents, which repeat, once each.
	arena    strings.Builder
	interned map[string]string
}

// keep copies s out of the decoder's window, so that the window is not held.
func (dr *drawioReader) keep(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) > 4<<10:
		return strings.Clone(s)
	}
	if dr.arena.Cap()-dr.arena.Len() < len(s) {
		dr.arena = strings.Builder{}
		dr.arena.Grow(256 << 10)
	}
	at := dr.arena.Len()
	dr.arena.WriteString(s)
	return dr.arena.String()[at:]
}

// intern is keep for the strings that repeat (styles, parents): one copy
// of each.
func (dr *drawioReader) intern(s string) string {
	if v, ok := dr.interned[s]; ok {
		return v
	}
	v := dr.keep(s)
	if len(dr.interned) < 1<<16 { // a chart has a handful; a hostile file no more than this
		dr.interned[v] = v
	}
	return v
}

func (dr *drawioReader) read(r io.Reader, size int64) error {
	// The file is read a window at a time: what is kept of it is copied.
	window := drawioWindow
	if size > 0 { // a small file is read in one window the size of it
		window = int(min(int64(window), size+1))
	}
	ahead := readAhead(r, window)
	defer ahead.Close()
	d := newDrawioReader(ahead)
	d.want = window
	for {
		k, err := d.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if k != xmlStart {
			continue
		}
		switch d.name {
		case "mxfile":
			return dr.mxfile(d)
		case "mxGraphModel":
			p := drawioPage{id: "0", name: "Page-1"}
			if err := dr.model(d, &p); err != nil {
				return err
			}
			dr.pages = append(dr.pages, p)
			return nil
		default:
			return fmt.Errorf("its root element is <%s>, not <mxfile> or <mxGraphModel>", d.name)
		}
	}
}

// mxfile reads the <diagram> pages of an <mxfile>.
func (dr *drawioReader) mxfile(d *drawioDecoder) error {
	for {
		k, err := d.next()
		if err != nil {
			if err == io.EOF {
				return errors.New("the file ends inside <mxfile>")
			}
			return err
		}
		switch k {
		case xmlEnd:
			return nil
		case xmlStart:
			if d.name != "diagram" {
				if err := d.skip(); err != nil {
					return err
				}
				continue
			}
			p := drawioPage{id: dr.keep(d.attr("id")), name: dr.keep(d.attr("name"))}
			if len(dr.pages) == 0 {
				dr.named = p.name
			}
			if p.id == "" {
				p.id = strconv.Itoa(len(dr.pages) + 1)
			}
			if p.name == "" {
				p.name = "Page-" + strconv.Itoa(len(dr.pages)+1)
			}
			if err := dr.diagram(d, &p); err != nil {
				return fmt.Errorf("page %q: %w", p.name, err)
			}
			dr.pages = append(dr.pages, p)
		}
	}
}

// diagram reads one <diagram>: an <mxGraphModel> child, or its compressed
// text (base64 of raw deflate of the URL-encoded model).
func (dr *drawioReader) diagram(d *drawioDecoder, p *drawioPage) error {
	// The text is the file's own substring unless it comes in pieces
	// (around a comment, say): then they are joined, up to the bound.
	var first string
	var more strings.Builder
	model := false
	for {
		k, err := d.next()
		if err != nil {
			if err == io.EOF {
				return errors.New("the file ends inside <diagram>")
			}
			return err
		}
		switch k {
		case xmlText:
			switch {
			case model:
			case first == "" && more.Len() == 0:
				first = d.text
			case len(first)+more.Len() < drawioMaxInflate:
				if more.Len() == 0 {
					more.WriteString(first)
				}
				more.WriteString(d.text)
			}
		case xmlStart:
			if d.name == "mxGraphModel" && !model {
				model = true
				if err := dr.model(d, p); err != nil {
					return err
				}
			} else if err := d.skip(); err != nil {
				return err
			}
		case xmlEnd:
			if model {
				return nil
			}
			s := first
			if more.Len() > 0 {
				s = more.String()
			}
			s = strings.TrimSpace(s)
			if s == "" {
				return nil // an empty page
			}
			first, more = "", strings.Builder{}
			return dr.compressedModel(dr.inflate(s), p)
		}
	}
}

// inflate undoes draw.io's compression as a stream: base64 is decoded as
// the deflate reader asks, the URL escapes as it inflates, and the model is
// read a window at a time from that, so what is held is a window, not the
// page (nor its URL-encoded form, twice its size). Bounded by
// drawioMaxInflate of model over the whole file.
func (dr *drawioReader) inflate(s string) *drawioInflater {
	if strings.ContainsAny(s, " \t") { // base64's reader skips only \r and \n
		s = strings.Join(strings.Fields(s), "")
	}
	in := &drawioInflater{dr: dr, b64: &errReader{r: base64.NewDecoder(base64.StdEncoding, strings.NewReader(s))}}
	in.fr = flate.NewReader(in.b64)
	return in
}

// drawioInflater reads the model of a compressed page.
type drawioInflater struct {
	dr  *drawioReader
	b64 *errReader
	fr  io.ReadCloser
	u   urlUnescaper
	raw []byte
	buf []byte // unescaped
	out []byte // what of buf is not yet read
	err error
}

func (in *drawioInflater) Read(p []byte) (int, error) {
	for len(in.out) == 0 {
		if in.err != nil {
			return 0, in.err
		}
		if in.raw == nil {
			in.raw = make([]byte, 64<<10)
		}
		n, err := in.fr.Read(in.raw)
		if n > 0 {
			var uerr error
			in.buf, uerr = in.u.write(in.buf[:0], in.raw[:n])
			in.out = in.buf
			if uerr != nil {
				in.err = fmt.Errorf("its compressed content is not URL-encoded (%v)", uerr)
				in.out = in.out[:0]
			}
			in.dr.inflated += int64(len(in.out))
			if in.dr.inflated > drawioMaxInflate {
				in.err = fmt.Errorf("its compressed content inflates to more than %d MiB, more than any diagram draw.io saves: refused as a compression bomb", drawioMaxInflate>>20)
				in.out = in.out[:0]
			}
		}
		switch {
		case in.err != nil:
		case err == io.EOF:
			in.err = io.EOF
			if in.u.n > 0 {
				in.err = fmt.Errorf("its compressed content is not URL-encoded (invalid URL escape %q)", in.u.pend[:in.u.n])
			}
		case err != nil && in.b64.err != nil:
			in.err = fmt.Errorf("its compressed content is not base64 (%v)", in.b64.err)
		case err != nil:
			in.err = fmt.Errorf("its compressed content does not inflate (%v)", err)
		}
	}
	n := copy(p, in.out)
	in.out = in.out[n:]
	return n, nil
}

// errReader keeps the error its reader gave, which the deflate reader
// passes on as its own.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// urlUnescaper decodes %XX escapes as url.PathUnescape does (a + stays a
// +), across the chunks it is given.
type urlUnescaper struct {
	pend [3]byte
	n    int
}

func (u *urlUnescaper) write(out, p []byte) ([]byte, error) {
	// An escape cut by the end of the last chunk first.
	for u.n > 0 && len(p) > 0 {
		u.pend[u.n] = p[0]
		u.n++
		p = p[1:]
		if u.n == 3 {
			hi, lo := hexVal[u.pend[1]], hexVal[u.pend[2]]
			if hi|lo > 0x0f {
				return out, fmt.Errorf("invalid URL escape %q", u.pend[:])
			}
			out = append(out, hi<<4|lo)
			u.n = 0
		}
	}
	// Then byte by byte into room made once: the runs between escapes are
	// a few bytes in URL-encoded XML, too short for a search to pay.
	at := len(out)
	out = slices.Grow(out, len(p))[:at+len(p)]
	i := 0
	for i < len(p) {
		c := p[i]
		if c != '%' {
			out[at] = c
			at++
			i++
			continue
		}
		if i+2 >= len(p) {
			u.n = copy(u.pend[:], p[i:])
			break
		}
		hi, lo := hexVal[p[i+1]], hexVal[p[i+2]]
		if hi|lo > 0x0f {
			return out[:at], fmt.Errorf("invalid URL escape %q", p[i:i+3])
		}
		out[at] = hi<<4 | lo
		at++
		i += 3
	}
	return out[:at], nil
}

// hexVal is each byte's value as a hex digit, 0xff for the others: a
// table, where a switch on ranges was a fifth of unescaping a page.
var hexVal = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = byte(c - 'A' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// compressedModel reads the <mxGraphModel> a compressed page holds. It is
// not decompressed again: a model inside holds no further pages.
func (dr *drawioReader) compressedModel(in *drawioInflater, p *drawioPage) error {
	defer in.fr.Close()
	p.compressed = true
	ahead := readAhead(in, drawioWindow)
	defer ahead.Close()
	d := newDrawioReader(ahead)
	for {
		k, err := d.next()
		if err == io.EOF {
			return errors.New("its compressed content holds no <mxGraphModel>")
		}
		if err != nil {
			var re readErr
			if errors.As(err, &re) {
				return re.err // the inflater's finding, not the file's I/O
			}
			return fmt.Errorf("its compressed content: %w", err)
		}
		if k == xmlStart {
			if d.name != "mxGraphModel" {
				return fmt.Errorf("its compressed content is <%s>, not <mxGraphModel>", d.name)
			}
			if err := dr.model(d, p); err != nil {
				var re readErr
				if errors.As(err, &re) {
					return re.err
				}
				return err
			}
			return nil
		}
	}
}

// model reads the cells of an <mxGraphModel> (its start tag read).
func (dr *drawioReader) model(d *drawioDecoder, p *drawioPage) error {
	depth := 1
	var wrapper []xml.Attr // the attributes of an <object>/<UserObject> around the next cell
	wrapped := false
	for depth > 0 {
		k, err := d.next()
		if err != nil {
			if err == io.EOF {
				return errors.New("the file ends inside <mxGraphModel>")
			}
			return err
		}
		switch k {
		case xmlStart:
			depth++
			switch d.name {
			case "mxCell":
				c := drawioCell{}
				for i := len(d.attrs) - 1; i >= 0; i-- { // backwards: the first of a name counts
					a := &d.attrs[i]
					if a.Name.Space != "" {
						continue
					}
					switch a.Name.Local {
					case "id":
						c.id = dr.keep(a.Value)
					case "value":
						c.value = dr.keep(a.Value)
					case "style":
						c.style = dr.intern(a.Value)
					case "parent":
						c.parent = dr.intern(a.Value)
					case "source":
						c.source = dr.keep(a.Value)
					case "target":
						c.target = dr.keep(a.Value)
					case "vertex":
						c.vertex = a.Value == "1"
					case "edge":
						c.edge = a.Value == "1"
					}
				}
				if !p.compressed {
					c.line = int32(min(d.startLine(), 1<<31-1))
				}
				if wrapped {
					c.id, c.value = "", ""
					placeholders := false
					for i := len(wrapper) - 1; i >= 0; i-- { // backwards: the first of a name counts
						switch a := &wrapper[i]; {
						case a.Name.Space != "":
						case a.Name.Local == "id":
							c.id = dr.keep(a.Value)
						case a.Name.Local == "label":
							c.value = dr.keep(a.Value)
						case a.Name.Local == "placeholders":
							placeholders = a.Value == "1"
						}
					}
					for _, a := range wrapper {
						switch a.Name.Local {
						case "id", "label", "placeholders":
						default:
							c.data = append(c.data, [2]string{dr.keep(a.Name.Local), dr.keep(a.Value)})
						}
					}
					if placeholders {
						c.value = fillPlaceholders(c.value, c.data)
					}
					wrapped = false
				}
				p.cells.add(c)
				if err := d.skip(); err != nil {
					return err
				}
				depth--
			case "object", "UserObject":
				wrapper = append(wrapper[:0], d.attrs...)
				wrapped = true
			case "root":
			default:
				if err := d.skip(); err != nil {
					return err
				}
				depth--
			}
		case xmlEnd:
			depth--
			if d.name == "object" || d.name == "UserObject" {
				wrapped = false
			}
		}
	}
	return nil
}

// fillPlaceholders replaces %name% in a label with the property's value, as
// draw.io shows a shape with placeholders=1.
func fillPlaceholders(label string, data [][2]string) string {
	if !strings.Contains(label, "%") {
		return label
	}
	pairs := make([]string, 0, 2*len(data))
	for _, kv := range data {
		pairs = append(pairs, "%"+kv[0]+"%", kv[1])
	}
	return strings.NewReplacer(pairs...).Replace(label)
}

// page turns one page's cells into the builder's shapes and lines.
func (dr *drawioReader) page(p *drawioPage, pos int) {
	b := dr.b
	pageID := p.id
	if _, dup := b.pages[pageID]; dup {
		pageID = p.id + "-" + strconv.Itoa(pos+1)
	}
	b.addPage(pageID, cleanText(p.name))
	if p.compressed {
		if dr.compressed == nil {
			dr.compressed = map[string]string{}
		}
		dr.compressed[pageID] = cleanText(p.name)
	}

	// parents finds the cells that hold others (the root, the layers,
	// containers, edges with labels) by id: a few, where a map of every
	// cell's id cost a tenth of the import. A cell whose id another has is
	// found by the builder (the shapes and lines) or here (the parents).
	const unseen = -1
	parents := map[string]int{}
	last := ""
	for i := 0; i < p.cells.n; i++ {
		if c := p.cells.at(i); c.parent != "" && c.parent != last {
			last = c.parent
			parents[c.parent] = unseen
		}
	}
	var dups map[int]bool
	for i := 0; i < p.cells.n; i++ {
		c := p.cells.at(i)
		if at, ok := parents[c.id]; ok {
			if at != unseen {
				if dups == nil {
					dups = map[int]bool{}
				}
				dups[i] = true
				continue
			}
			parents[c.id] = i
		}
	}
	parentOf := func(c *drawioCell) *drawioCell {
		if at, ok := parents[c.parent]; ok && at != unseen {
			return p.cells.at(at)
		}
		return nil
	}
	// A cell's id in the document: its own, unless an earlier page used it
	// (a copied page), then page id ":" cell id.
	docID := func(id string) string {
		if dr.seen[id] {
			return pageID + ":" + id
		}
		return id
	}
	// Which vertices hold others, and which cells are edge labels.
	holds := map[string]bool{}
	labels := map[string][]string{}
	for i := 0; i < p.cells.n; i++ {
		c := p.cells.at(i)
		parent := parentOf(c)
		switch {
		case parent == nil:
		case parent.edge && c.vertex:
			labels[c.parent] = append(labels[c.parent], drawioText(c.value, c.style))
		case parent.vertex && (c.vertex || c.edge):
			holds[c.parent] = true
		}
	}
	// A chart has a handful of styles: each is parsed, and its shape
	// classified, once.
	type styleInfo struct {
		st                    drawioStyle
		heads                 [2]string
		kind, name            string
		container, annotation bool
	}
	styles := map[string]*styleInfo{}
	var areas []string // the nodes' text areas, from shared blocks
	for ci := 0; ci < p.cells.n; ci++ {
		c := p.cells.at(ci)
		switch {
		case c.id == "":
			b.errorf("malformed_drawio", nil, 0, drawioHint, "a cell on page %q has no id", p.name)
			continue
		case dups[ci]:
			b.errorf("malformed_drawio", []string{docID(c.id)}, int(c.line), drawioHint, "cell id %q is used twice on page %q", c.id, p.name)
			continue
		}
		if !c.vertex && !c.edge {
			// The root cell (id 0) and the layers: the document's
			// properties are the root's Edit Data.
			if c.parent == "" && len(c.data) > 0 {
				for _, kv := range c.data {
					if k, v := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1]); k != "" && v != "" {
						if b.doc.Metadata == nil {
							b.doc.Metadata = map[string]string{}
						}
						if _, set := b.doc.Metadata[k]; !set {
							b.doc.Metadata[k] = v
						}
					}
				}
			}
			continue
		}
		parent := parentOf(c)
		if c.vertex && parent != nil && parent.edge {
			continue // an edge's label
		}
		id := docID(c.id)
		if b.has(id) {
			b.errorf("malformed_drawio", []string{id}, int(c.line), drawioHint, "cell id %q is used twice on page %q", c.id, p.name)
			continue
		}
		si := styles[c.style]
		if si == nil {
			st := parseStyle(c.style)
			head := func(key, def string) string {
				v, ok := st.get(key)
				if !ok {
					v = def
				}
				if v == "" || v == "none" {
					return "None"
				}
				return "Arrow"
			}
			si = &styleInfo{st: st, heads: [2]string{head("startArrow", "none"), head("endArrow", "classic")}}
			si.kind, si.name, si.container, si.annotation = drawioShape(st, false)
			styles[c.style] = si
		}
		if c.edge {
			ls := []string{}
			if v := drawioText(c.value, c.style); v != "" {
				ls = append(ls, v)
			}
			if len(labels) > 0 {
				ls = append(ls, labels[c.id]...)
			}
			var ends [2]string
			if c.source != "" {
				ends[0] = docID(c.source)
			}
			if c.target != "" {
				ends[1] = docID(c.target)
			}
			b.addLine(line{id: id, page: pageID, ends: ends, labels: ls, srcLn: int(c.line)}, si.heads)
			continue
		}
		kind, shapeName, container, note := si.kind, si.name, si.container, si.annotation
		if len(holds) > 0 && holds[c.id] {
			kind, shapeName, container, note = drawioShape(si.st, true)
		}
		n := types.Node{
			ID: id, Page: pageID, Kind: kind, Shape: shapeName, Line: int(c.line),
			Tags: []string{}, Comments: []string{},
			Text: drawioText(c.value, c.style),
		}
		n.TextAreas = []string{}
		if n.Text != "" {
			if len(areas) == cap(areas) {
				areas = make([]string, 0, 1024)
			}
			areas = append(areas, n.Text)
			n.TextAreas = areas[len(areas)-1 : len(areas) : len(areas)]
		}
		for _, kv := range c.data {
			switch kv[0] {
			case "tags": // Edit > Edit Tags: dtree's tags (charts.md#tags)
				n.Tags = append(n.Tags, strings.Fields(kv[1])...)
				continue
			case "link", "linkTarget", "tooltip": // draw.io's own, not Edit Data's
				continue
			case "dtree-drawn": // what a run drawn on the cell changed (readme/drawio.md)
				continue
			}
			if k, v := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1]); k != "" && v != "" {
				if n.Metadata == nil {
					n.Metadata = map[string]string{}
				}
				n.Metadata[k] = v
			}
		}
		if parent != nil && parent.vertex {
			n.Container = docID(c.parent)
			if drawioIsSwimlane(parseStyle(parent.style)) {
				n.Lane = drawioText(parent.value, parent.style)
			}
		}
		b.addShape(shape{node: n, shapeFlags: shapeFlags{container: container, annotation: note}})
	}
	if pos < len(dr.pages)-1 { // the ids a later page may repeat
		for i := 0; i < p.cells.n; i++ {
			if id := p.cells.at(i).id; id != "" {
				dr.seen[id] = true
			}
		}
	}
}

// drawioStyle is a parsed style attribute: "ellipse;whiteSpace=wrap;html=1;".
type drawioStyle struct {
	first string // a bare first token: ellipse, rhombus, text, swimlane, group
	kv    map[string]string
}

func parseStyle(s string) drawioStyle {
	st := drawioStyle{kv: map[string]string{}}
	for i, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			if i == 0 {
				st.first = part
			} else {
				st.kv[part] = "1" // a bare name later on: a named style
			}
			continue
		}
		st.kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return st
}

func (s drawioStyle) get(k string) (string, bool) {
	v, ok := s.kv[k]
	return v, ok
}

func (s drawioStyle) is(name string) bool {
	return s.first == name || s.kv["shape"] == name
}

func drawioIsSwimlane(s drawioStyle) bool {
	return s.is("swimlane") || s.kv["swimlane"] == "1"
}

// drawioShape classifies a vertex by its style: its kind, the shape name
// messages use, and whether it is a container or a note.
func drawioShape(s drawioStyle, holdsOthers bool) (kind, name string, container, note bool) {
	shapeKey := s.kv["shape"]
	switch {
	case drawioIsSwimlane(s):
		return types.KindOther, "swimlane", true, false
	case s.is("group"):
		return types.KindOther, "group", true, false
	case s.kv["container"] == "1" || s.is("table") || s.is("tableRow") || holdsOthers:
		return types.KindOther, "container", true, false
	case s.is("text") || s.is("edgeLabel"):
		return types.KindOther, "text", false, true
	}
	switch shapeKey {
	case "mxgraph.flowchart.terminator", "mxgraph.flowchart.start_1", "mxgraph.flowchart.start_2":
		return types.KindTerminator, "Terminator", false, false
	case "mxgraph.flowchart.decision":
		return types.KindDecision, "Decision", false, false
	case "mxgraph.flowchart.predefined_process", "process":
		return types.KindSubprocess, "Predefined process", false, false
	case "mxgraph.flowchart.manual_operation":
		// A person's step: an approval gate (readme/charts.md#approval-gates).
		return types.KindProcess, "Manual operation", false, false
	}
	if s.is("trapezoid") && s.kv["flipV"] == "1" {
		// The Flowchart sidebar's Manual Operation is a trapezoid turned
		// upside down; the General sidebar's trapezoid is not flipped.
		return types.KindProcess, "Manual operation", false, false
	}
	switch {
	case strings.HasPrefix(shapeKey, "mxgraph.flowchart.end") || strings.HasSuffix(shapeKey, "endEvent"):
		return types.KindTerminator, "Terminator", false, false
	case s.is("ellipse") || s.is("doubleEllipse"):
		return types.KindTerminator, "Terminator", false, false
	case s.is("rhombus"):
		return types.KindDecision, "Decision", false, false
	}
	if s.kv["rounded"] == "1" && shapeKey == "" {
		// A stadium: rounded with an arc of half the height (arcSize is a
		// percentage, 50 the most); absoluteArcSize makes it pixels.
		if a, err := strconv.ParseFloat(s.kv["arcSize"], 64); err == nil && a >= 40 && s.kv["absoluteArcSize"] != "1" {
			return types.KindTerminator, "Terminator", false, false
		}
	}
	return types.KindProcess, "Process", false, false
}

// drawioText is a cell's label as text: with html=1 in its style, the HTML is
// taken out (<br>, <div>, <p>, <li> are line breaks, entities decoded).
func drawioText(value, style string) string {
	if value == "" {
		return ""
	}
	if !strings.Contains(style, "html=1") || !strings.ContainsAny(value, "<&") {
		return cleanText(value)
	}
	return cleanText(stripHTML(value))
}

// stripHTML removes tags in one pass: block and break tags become line
// breaks, other tags nothing; the text's entities are decoded.
func stripHTML(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			out.WriteString(html.UnescapeString(s))
			break
		}
		out.WriteString(html.UnescapeString(s[:lt]))
		s = s[lt:]
		gt := strings.IndexByte(s, '>')
		if gt < 0 {
			out.WriteString(html.UnescapeString(s))
			break
		}
		tag := strings.ToLower(strings.TrimLeft(s[1:gt], "/ "))
		if i := strings.IndexAny(tag, " \t\n/"); i >= 0 {
			tag = tag[:i]
		}
		switch tag {
		case "br", "div", "p", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6":
			if out.Len() > 0 && !strings.HasSuffix(out.String(), "\n") {
				out.WriteByte('\n')
			}
		}
		s = s[gt+1:]
	}
	// Lines as draw.io shows them: each trimmed, runs of blank lines one.
	lines := strings.Split(strings.ReplaceAll(out.String(), "\u00a0", " "), "\n")
	kept := lines[:0]
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" && (len(kept) == 0 || kept[len(kept)-1] == "") {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

// isDrawioHead reports whether a file's first bytes (white space and a
// byte order mark removed) open an <mxfile> or an <mxGraphModel>, after an
// XML declaration and comments: a .xml saved by draw.io.
func isDrawioHead(head []byte) bool {
	for {
		head = bytes.TrimLeft(head, " \t\r\n")
		switch {
		case bytes.HasPrefix(head, []byte("<?")):
			_, rest, ok := bytes.Cut(head, []byte("?>"))
			if !ok {
				return false
			}
			head = rest
		case bytes.HasPrefix(head, []byte("<!--")):
			_, rest, ok := bytes.Cut(head, []byte("-->"))
			if !ok {
				return false
			}
			head = rest
		default:
			return bytes.HasPrefix(head, []byte("<mxfile")) || bytes.HasPrefix(head, []byte("<mxGraphModel"))
		}
	}
}
