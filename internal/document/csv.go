package document

import (
	"encoding/csv"
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dtree-dev/dtree/internal/graph"
	"github.com/dtree-dev/dtree/types"
)

// requiredColumns are the CSV columns without which a chart cannot be read
// (rule 3).
var requiredColumns = []string{"Id", "Name", "Page ID", "Line Source", "Line Destination", "Source Arrow", "Destination Arrow", "Text Area 1"}

// knownColumns are the standard columns; every other column is a custom-data
// key.
var knownColumns = []string{"Shape Library", "Contained By", "Group", "Tags", "Status", "Comments"}

var textAreaColumn = regexp.MustCompile(`(?i)^text area (\d+)$`)

// columns holds the index of each known column, -1 when absent.
type columns struct {
	id, name, library, page, containedBy, group, src, dst, srcArrow, dstArrow, tags, status, comments int
	textAreas                                                                                         []int // textAreas[i] is the column of Text Area i+1, -1 when missing
	custom                                                                                            []int
	header                                                                                            []string
}

func findColumns(header []string) (*columns, []string) {
	idx := make(map[string]int, len(header))
	c := &columns{header: header}
	for i, h := range header {
		h = strings.TrimSpace(h)
		header[i] = h
		if m := textAreaColumn.FindStringSubmatch(h); m != nil {
			n, err := strconv.Atoi(m[1])
			if err == nil && n >= 1 && n <= 10000 {
				for len(c.textAreas) < n {
					c.textAreas = append(c.textAreas, -1)
				}
				if c.textAreas[n-1] < 0 {
					c.textAreas[n-1] = i
				}
				continue
			}
		}
		key := strings.ToLower(h)
		if _, dup := idx[key]; !dup {
			idx[key] = i
		}
	}
	col := func(name string) int {
		if i, ok := idx[strings.ToLower(name)]; ok {
			return i
		}
		return -1
	}
	var missing []string
	for _, name := range requiredColumns {
		if name == "Text Area 1" {
			if len(c.textAreas) == 0 || c.textAreas[0] < 0 {
				missing = append(missing, name)
			}
		} else if col(name) < 0 {
			missing = append(missing, name)
		}
	}
	c.id, c.name, c.page = col("Id"), col("Name"), col("Page ID")
	c.src, c.dst, c.srcArrow, c.dstArrow = col("Line Source"), col("Line Destination"), col("Source Arrow"), col("Destination Arrow")
	c.library, c.containedBy, c.group = col("Shape Library"), col("Contained By"), col("Group")
	c.tags, c.status, c.comments = col("Tags"), col("Status"), col("Comments")
	known := map[int]bool{}
	for _, name := range append(append([]string{}, requiredColumns...), knownColumns...) {
		if i := col(name); i >= 0 {
			known[i] = true
		}
	}
	for _, i := range c.textAreas {
		known[i] = true
	}
	for i, h := range header {
		if !known[i] && h != "" && idx[strings.ToLower(h)] == i {
			c.custom = append(c.custom, i)
		}
	}
	return c, missing
}

// FromCSV reads a Lucid "CSV of shape data" export (rules 1-5, then the
// shared graph rules). The error is only for a failure to read r.
func FromCSV(r io.Reader) (*types.Document, error) {
	return fromCSV(r, sizeOf(r))
}

// sizeOf returns the bytes left in r when r can tell (a file, an in-memory
// reader), else 0.
func sizeOf(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len())
	case interface{ Stat() (os.FileInfo, error) }:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return 0
}

// bytesPerRow estimates a Lucid CSV row's size (exports run 60-100 bytes a
// row), to size the builder's tables from the file size instead of growing
// them row by row. Too low wastes memory; too high costs one regrowth.
const bytesPerRow = 64

func fromCSV(r io.Reader, size int64) (*types.Document, error) {
	b := newBuilder(FormatCSV)
	rows := int(min(size/bytesPerRow, 1<<22))
	b.reserve(rows)
	// The whole file is read into one string: fields are substrings of it,
	// so the rows cost no copies (see csvScanner).
	var sb strings.Builder
	sb.Grow(int(min(size, 1<<30)) + 1)
	pf := newPrefault(b)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() { // while the file is read, the other core is free
		defer close(done)
		pf.touch(0, len(pf.shapes), &stop)
	}()
	_, err := io.Copy(&sb, r)
	stop.Store(true)
	<-done
	if err != nil {
		return nil, err
	}
	sc := newCSVScanner(strings.TrimPrefix(sb.String(), "\ufeff"))
	header, hline, err := sc.next()
	if errors.Is(err, io.EOF) {
		b.errorf("empty_chart", nil, 0, "export the chart again with File > Export > CSV of shape data", "the file is empty")
		return b.doc, nil
	}
	if err != nil {
		return csvError(b, err)
	}
	cols, missing := findColumns(append([]string(nil), header...))
	if len(missing) > 0 {
		b.errorf("missing_columns", nil, hline,
			"export with File > Export > CSV of shape data, with Lucid's language set to English (dtree reads English column names only)",
			"the header has no column %s; found: %s", strings.Join(missing, ", "), strings.Join(cols.header, ", "))
		return b.doc, nil
	}
	rd := csvReader{b: b, cols: cols, holders: map[string]bool{}, other: graph.NewIDs(0), classes: map[[2]string]shapeClass{},
		areas: make([]string, 0, rows)}
	// Scanning and row handling take about as long as each other, so they
	// run on two goroutines: the scanner fills batches of records, the rows
	// are read from them in order, and the batches go back to be refilled.
	full, free := make(chan *recordBatch, 2), make(chan *recordBatch, 3)
	for range cap(free) {
		free <- &recordBatch{fields: make([]string, 0, batchRecords*len(header))}
	}
	go scanBatches(sc, full, free, pf)
	var scanErr error
	for batch := range full {
		for i := range batch.lines {
			rd.row(batch.fields[batch.ends[i]:batch.ends[i+1]], batch.lines[i])
		}
		scanErr = batch.err
		free <- batch
	}
	if scanErr != nil {
		return csvError(b, scanErr)
	}
	rd.finish()
	return b.build(), nil
}

// recordBatch holds scanned records: record i's fields are
// fields[ends[i]:ends[i+1]], starting on lines[i]. err ends the scan.
type recordBatch struct {
	fields []string
	ends   []int
	lines  []int
	err    error
}

const batchRecords = 2048

// scanBatches scans the rest of the file into batches taken from free and
// sends them, in order, on full, which it closes at the end of the data or
// at the first error. Before sending a batch it prefaults the shapes and
// lines its rows may add: scanning is the lighter of the two goroutines.
func scanBatches(sc *csvScanner, full chan<- *recordBatch, free <-chan *recordBatch, pf prefault) {
	defer close(full)
	sent := 0 // records sent
	send := func(batch *recordBatch) {
		pf.touch(sent, sent+len(batch.lines), nil)
		sent += len(batch.lines)
		full <- batch
	}
	for {
		batch := <-free
		batch.fields, batch.ends, batch.lines, batch.err = batch.fields[:0], append(batch.ends[:0], 0), batch.lines[:0], nil
		for len(batch.lines) < batchRecords {
			rec, ln, err := sc.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					batch.err = err
				}
				send(batch)
				return
			}
			batch.fields = append(batch.fields, rec...)
			batch.ends = append(batch.ends, len(batch.fields))
			batch.lines = append(batch.lines, ln)
		}
		send(batch)
	}
}

// prefault takes the page faults of the builder's reserved shapes and lines
// off the row reader. In this VM the first write to a page costs a fault
// that took half of the row reader's time (readme/performance.md); writing
// once to each page beforehand, on the other core, moves that cost to where
// there is time for it: the file's read, and the scanner, which is ahead.
//
// It never writes an element the row reader may be using: the row of
// record r adds at most shape and line r, so touch(from, to) before the
// records from..to are sent leaves the rows already sent alone, and the
// channel orders it before the rows that use those elements. Past the
// reserved capacity, append moves the slices and these writes go to the
// old arrays, unused.
type prefault struct {
	shapes []types.Node
	lines  []line
}

func newPrefault(b *builder) prefault {
	return prefault{shapes: b.shapes[:cap(b.shapes)], lines: b.lines[:cap(b.lines)]}
}

// Elements between two writes, so that each 4 KiB page gets one.
var (
	nodesPerPage = max(1, 4096/int(reflect.TypeFor[types.Node]().Size()))
	linesPerPage = max(1, 4096/int(reflect.TypeFor[line]().Size()))
)

// touch writes to the shapes and lines from index from to index to, until
// stop, when not nil, is set.
func (p prefault) touch(from, to int, stop *atomic.Bool) {
	for i := from; i < min(to, len(p.shapes)) && (stop == nil || !stop.Load()); i += nodesPerPage {
		p.shapes[i].Line = 0
	}
	for i := from; i < min(to, len(p.lines)) && (stop == nil || !stop.Load()); i += linesPerPage {
		p.lines[i].srcLn = 0
	}
}

// csvError turns a reader error into malformed_csv; an I/O error from the
// underlying reader is returned as is.
func csvError(b *builder, err error) (*types.Document, error) {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return nil, err
	}
	b.errorf("malformed_csv", nil, pe.StartLine,
		"export the chart again from Lucid; if a spreadsheet saved it, check that every quoted cell's quote is closed",
		"row starting on line %d: %v", pe.StartLine, pe.Err)
	return b.doc, nil
}

// csvReader classifies rows as they are read (rule 4), in one pass and
// without holding the rows: shapes go to the builder at once, and what needs
// rows not yet read — which ids hold others, lane titles — is settled in
// finish.
type csvReader struct {
	b       *builder
	cols    *columns
	holders map[string]bool // ids named in a Group or Contained By cell
	lanes   []int           // shapes whose Contained By names a lane
	other   *graph.IDs      // ids of Document and Page rows, to their line
	areas   []string        // text areas of all rows, sliced per node or line
	classes map[[2]string]shapeClass
}

// shapeClass is what a shape's name says about a row.
type shapeClass struct {
	kind                  string
	container, annotation bool
}

// classify reads a row's Name (rules 4, 8, 9); its Shape Library never
// makes it a container (isContainerShape). A chart has a handful of
// distinct names, so the answers are kept.
func (r *csvReader) classify(name, library string) shapeClass {
	key := [2]string{name, library}
	if c, ok := r.classes[key]; ok {
		return c
	}
	c := shapeClass{kind: kindOf(name), container: isContainerShape(name), annotation: isTextOnly(name)}
	r.classes[key] = c
	if _, ok := r.b.libraries[name]; !ok && library != "" {
		if r.b.libraries == nil {
			r.b.libraries = map[string]string{}
		}
		r.b.libraries[name] = library
	}
	return c
}

// seenAt returns the line of an earlier row with this id, or 0.
func (r *csvReader) seenAt(id string) int {
	if i, ok := r.b.items.Get(id); ok {
		if i >= 0 {
			return r.b.shapes[i].Line
		}
		return r.b.lines[-1-i].srcLn
	}
	ln, _ := r.other.Get(id)
	return ln
}

func (r *csvReader) row(rec []string, ln int) {
	c := r.cols
	cell := func(i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return rec[i]
	}
	id, name := strings.TrimSpace(cell(c.id)), strings.TrimSpace(cell(c.name))
	if id == "" {
		for _, v := range rec {
			if strings.TrimSpace(v) != "" {
				r.b.errorf("malformed_csv", nil, ln, "every row of a Lucid export has an Id; export the chart again",
					"row on line %d has no Id", ln)
				return
			}
		}
		return // an empty row
	}
	if first := r.seenAt(id); first > 0 {
		r.b.errorf("malformed_csv", []string{id}, ln, "every row of a Lucid export has its own Id; export the chart again",
			"Id %s is used on line %d and again on line %d", id, first, ln)
		return
	}
	page, library := strings.TrimSpace(cell(c.page)), strings.TrimSpace(cell(c.library))
	group, containedBy := strings.TrimSpace(cell(c.group)), strings.TrimSpace(cell(c.containedBy))
	if group != "" {
		r.holders[group] = true
	}
	for ref := range strings.SplitSeq(containedBy, "|") {
		if h, _, _ := strings.Cut(strings.TrimSpace(ref), ":"); h != "" {
			r.holders[h] = true
		}
	}
	last := 0
	for i, col := range c.textAreas {
		if strings.TrimSpace(cell(col)) != "" {
			last = i + 1
		}
	}
	switch {
	case page == "" && library == "" && strings.EqualFold(name, "document"):
		r.other.Set(id, ln)
		r.b.doc.Title = cleanText(cell(c.textArea(0)))
		r.b.doc.Status = strings.TrimSpace(cell(c.status))
		for _, col := range c.custom {
			if v := strings.TrimSpace(cell(col)); v != "" {
				if r.b.doc.Metadata == nil {
					r.b.doc.Metadata = map[string]string{}
				}
				r.b.doc.Metadata[c.header[col]] = v
			}
		}
		return
	case page == "" && strings.EqualFold(name, "page"):
		r.other.Set(id, ln)
		r.b.addPage(id, cleanText(cell(c.textArea(0))))
		return
	case strings.EqualFold(name, "line"):
		start := len(r.areas)
		for i := range last {
			r.areas = append(r.areas, cell(c.textAreas[i]))
		}
		r.b.addLine(line{id: id, page: page, ends: [2]string{strings.TrimSpace(cell(c.src)), strings.TrimSpace(cell(c.dst))},
			labels: r.areas[start:len(r.areas):len(r.areas)], srcLn: ln},
			[2]string{cell(c.srcArrow), cell(c.dstArrow)})
		return
	}
	start := len(r.areas)
	for i := range last {
		r.areas = append(r.areas, cleanText(cell(c.textAreas[i])))
	}
	areas := r.areas[start:len(r.areas):len(r.areas)]
	class := r.classify(name, library)
	n := types.Node{
		ID: id, Page: page, Kind: class.kind, Shape: name,
		Text: first(areas), TextAreas: areas, Tags: splitTags(cell(c.tags)),
		Lane: containedBy, Group: group, Comments: []string{}, Line: ln,
	}
	if n.TextAreas == nil {
		n.TextAreas = []string{}
	}
	if cm := cleanText(cell(c.comments)); cm != "" {
		n.Comments = []string{cm}
	}
	for _, col := range c.custom {
		if v := strings.TrimSpace(cell(col)); v != "" {
			if n.Metadata == nil {
				n.Metadata = map[string]string{}
			}
			n.Metadata[c.header[col]] = v
		}
	}
	if containedBy != "" {
		ref, _, _ := strings.Cut(containedBy, "|")
		n.Container, _, _ = strings.Cut(ref, ":")
		n.Container = strings.TrimSpace(n.Container)
		r.lanes = append(r.lanes, len(r.b.shapes))
	}
	r.b.addShape(shape{node: n, shapeFlags: shapeFlags{container: class.container, annotation: class.annotation}})
}

// finish marks the shapes other rows named as their group or container, and
// sets lane titles: Contained By "swimlaneId:laneNumber" names the swim
// lane's Text Area laneNumber (rule 5). Until now Lane held the raw cell.
func (r *csvReader) finish() {
	b := r.b
	for id := range r.holders {
		if i, ok := b.items.Get(id); ok && i >= 0 {
			b.flags[i].container = true
		}
	}
	for _, i := range r.lanes {
		n := &b.shapes[i]
		ref, _, _ := strings.Cut(n.Lane, "|")
		n.Lane = ""
		id, num, ok := strings.Cut(strings.TrimSpace(ref), ":")
		k, err := strconv.Atoi(strings.TrimSpace(num))
		j, found := b.items.Get(strings.TrimSpace(id))
		if ok && err == nil && found && j >= 0 && k >= 1 && k <= len(b.shapes[j].TextAreas) {
			n.Lane = b.shapes[j].TextAreas[k-1]
		}
	}
}

// textArea returns the column of Text Area i+1.
func (c *columns) textArea(i int) int {
	if i < len(c.textAreas) {
		return c.textAreas[i]
	}
	return -1
}

// splitTags splits a Tags cell on commas and semicolons (rule 5).
func splitTags(cell string) []string {
	tags := []string{}
	if cell == "" {
		return tags
	}
	for _, t := range strings.FieldsFunc(cell, func(r rune) bool { return r == ',' || r == ';' }) {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
