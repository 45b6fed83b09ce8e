package document

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

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
	b := newBuilder("csv")
	br := bufio.NewReaderSize(r, 64<<10)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\ufeff")) {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		b.errorf("empty_chart", nil, 0, "export the chart again with File > Export > CSV of shape data", "the file is empty")
		return b.doc, nil
	}
	if err != nil {
		return csvError(b, err)
	}
	cols, missing := findColumns(append([]string(nil), header...))
	if len(missing) > 0 {
		b.errorf("missing_columns", nil, 1,
			"export with File > Export > CSV of shape data, with Lucid's language set to English (dtree reads English column names only)",
			"the header has no column %s; found: %s", strings.Join(missing, ", "), strings.Join(cols.header, ", "))
		return b.doc, nil
	}
	var rows []csvRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return csvError(b, err)
		}
		ln, _ := cr.FieldPos(0)
		row, ok := cols.row(rec, ln)
		if ok {
			rows = append(rows, row)
		}
	}
	return b.fromRows(cols, rows), nil
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

// csvRow is one data row with the cells dtree uses.
type csvRow struct {
	line                                 int
	id, name, library, page, containedBy string
	group, src, dst, srcArrow, dstArrow  string
	tags, status, comments               string
	textAreas                            []string
	custom                               []string // parallel to columns.custom
}

func (c *columns) row(rec []string, line int) (csvRow, bool) {
	cell := func(i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return rec[i]
	}
	empty := true
	for _, v := range rec {
		if strings.TrimSpace(v) != "" {
			empty = false
			break
		}
	}
	if empty {
		return csvRow{}, false
	}
	r := csvRow{
		line: line, id: strings.TrimSpace(cell(c.id)), name: strings.TrimSpace(cell(c.name)),
		library: strings.TrimSpace(cell(c.library)), page: strings.TrimSpace(cell(c.page)),
		containedBy: strings.TrimSpace(cell(c.containedBy)), group: strings.TrimSpace(cell(c.group)),
		src: strings.TrimSpace(cell(c.src)), dst: strings.TrimSpace(cell(c.dst)),
		srcArrow: cell(c.srcArrow), dstArrow: cell(c.dstArrow),
		tags: cell(c.tags), status: strings.TrimSpace(cell(c.status)), comments: cell(c.comments),
	}
	last := -1
	areas := make([]string, len(c.textAreas))
	for i, col := range c.textAreas {
		areas[i] = cell(col)
		if strings.TrimSpace(areas[i]) != "" {
			last = i
		}
	}
	r.textAreas = areas[:last+1]
	if len(c.custom) > 0 {
		r.custom = make([]string, len(c.custom))
		for i, col := range c.custom {
			r.custom[i] = cell(col)
		}
	}
	return r, true
}

// fromRows classifies the rows (rule 4) and feeds the builder.
func (b *builder) fromRows(c *columns, rows []csvRow) *types.Document {
	// Ids that other rows name as their group or container are not steps.
	holders := map[string]bool{}
	for _, r := range rows {
		if r.group != "" {
			holders[r.group] = true
		}
		for _, ref := range strings.Split(r.containedBy, "|") {
			if id, _, _ := strings.Cut(strings.TrimSpace(ref), ":"); id != "" {
				holders[id] = true
			}
		}
	}
	byID := make(map[string]int, len(rows))
	for i, r := range rows {
		if r.id == "" {
			b.errorf("malformed_csv", nil, r.line, "every row of a Lucid export has an Id; export the chart again",
				"row on line %d has no Id", r.line)
			continue
		}
		if j, dup := byID[r.id]; dup {
			b.errorf("malformed_csv", []string{r.id}, r.line, "every row of a Lucid export has its own Id; export the chart again",
				"Id %s is used on line %d and again on line %d", r.id, rows[j].line, r.line)
			continue
		}
		byID[r.id] = i
	}
	for i, r := range rows {
		if r.id == "" || byID[r.id] != i {
			continue
		}
		lower := strings.ToLower(r.name)
		switch {
		case lower == "document" && r.page == "" && r.library == "":
			b.doc.Title = cleanText(first(r.textAreas))
			b.doc.Status = r.status
		case lower == "page" && r.page == "":
			b.addPage(r.id, cleanText(first(r.textAreas)))
		case lower == "line":
			b.addLine(line{id: r.id, page: r.page, ends: [2]string{r.src, r.dst},
				styles: [2]string{r.srcArrow, r.dstArrow}, labels: r.textAreas, srcLn: r.line})
		default:
			b.addShape(b.csvShape(c, r, laneTitle(r, rows, byID), holders[r.id]))
		}
	}
	return b.build()
}

func (b *builder) csvShape(c *columns, r csvRow, lane string, holder bool) shape {
	areas := make([]string, len(r.textAreas))
	for i, t := range r.textAreas {
		areas[i] = cleanText(t)
	}
	container, _, _ := strings.Cut(r.containedBy, "|")
	container, _, _ = strings.Cut(container, ":")
	n := types.Node{
		ID: r.id, Page: r.page, Kind: kindOf(r.name), Shape: r.name,
		Text: first(areas), TextAreas: areas, Tags: splitTags(r.tags),
		Metadata: map[string]string{}, Lane: lane, Container: strings.TrimSpace(container),
		Group: r.group, Comments: []string{}, Line: r.line,
	}
	if cm := cleanText(r.comments); cm != "" {
		n.Comments = append(n.Comments, cm)
	}
	for i, col := range c.custom {
		if v := strings.TrimSpace(r.custom[i]); v != "" {
			n.Metadata[c.header[col]] = v
		}
	}
	return shape{
		node:       n,
		container:  holder || isContainerShape(r.name, r.library),
		annotation: isTextOnly(r.name),
	}
}

// splitTags splits a Tags cell on commas and semicolons (rule 5).
func splitTags(cell string) []string {
	tags := []string{}
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

// laneTitle is the title of the swim lane a row sits in: Contained By is
// "swimlaneId:laneNumber" and the title is the swim lane's Text Area
// laneNumber (rule 5).
func laneTitle(r csvRow, rows []csvRow, byID map[string]int) string {
	ref, _, _ := strings.Cut(r.containedBy, "|")
	id, num, ok := strings.Cut(strings.TrimSpace(ref), ":")
	if !ok {
		return ""
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	j, found := byID[strings.TrimSpace(id)]
	if err != nil || !found || n < 1 || n > len(rows[j].textAreas) {
		return ""
	}
	return cleanText(rows[j].textAreas[n-1])
}
