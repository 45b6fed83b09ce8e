package testchart

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Header is the column row of a 2026 Lucid CSV export
// (readme/charts.md#exporting-from-lucid).
var Header = []string{
	"Id", "Name", "Shape Library", "Page ID", "Contained By", "Group",
	"Line Source", "Line Destination", "Source Arrow", "Destination Arrow",
	"Tags", "Status", "Text Area 1", "Comments",
}

const (
	docID     = 1
	pageID    = 2
	firstNode = 3 // id of the first shape: after the Document and Page rows
	library   = "Flowchart Shapes"
)

// LinearCSV writes a Lucid CSV export of a chain of n shapes: a Terminator
// "Start", n-2 Process steps and a Terminator "End", then the n-1 lines that
// join each shape to the next. Shapes come before lines, as in Lucid's
// exports, and ids run 1..2n+1 in row order. n = 100000 gives about 16 MB.
func LinearCSV(w io.Writer, n int) error {
	if n < 2 {
		return fmt.Errorf("testchart: linear chart needs n >= 2, got %d", n)
	}
	c := newCSVWriter(w, fmt.Sprintf("Linear chain of %d steps", n))
	for i := range n {
		id := firstNode + i
		switch i {
		case 0:
			c.shape(id, "Terminator", "Start")
		case n - 1:
			c.shape(id, "Terminator", "End")
		default:
			c.shape(id, "Process", processText(i))
		}
	}
	for i := range n - 1 {
		c.line(firstNode+n+i, firstNode+i, firstNode+i+1, "")
	}
	return c.flush()
}

// BinaryTreeCSV writes a Lucid CSV export of a complete binary decision tree
// of depth levels, 2^depth-1 shapes: every inner node is a Decision whose two
// lines are labelled "Yes" and "No", every leaf a Process. Shapes are in
// breadth-first order (the children of the k-th shape are shapes 2k and
// 2k+1), then the lines, two per decision in the same order.
func BinaryTreeCSV(w io.Writer, depth int) error {
	if depth < 1 || depth > 24 {
		return fmt.Errorf("testchart: tree depth must be 1..24, got %d", depth)
	}
	nodes := 1<<depth - 1
	inner := 1<<(depth-1) - 1
	c := newCSVWriter(w, fmt.Sprintf("Binary decision tree of depth %d", depth))
	for k := 1; k <= nodes; k++ {
		if k <= inner {
			c.shape(firstNode+k-1, "Decision", decisionText(k))
		} else {
			c.shape(firstNode+k-1, "Process", leafText(k))
		}
	}
	id := firstNode + nodes
	for k := 1; k <= inner; k++ {
		c.line(id, firstNode+k-1, firstNode+2*k-1, "Yes")
		c.line(id+1, firstNode+k-1, firstNode+2*k, "No")
		id += 2
	}
	return c.flush()
}

// csvWriter writes rows the way Lucid does: LF between rows, none after the
// last, and a cell quoted only when it holds a comma, a quote or a line break.
type csvWriter struct {
	w     *bufio.Writer
	first bool
}

// newCSVWriter writes the header, the Document row and the Page row.
func newCSVWriter(w io.Writer, title string) *csvWriter {
	c := &csvWriter{w: bufio.NewWriterSize(w, 64<<10), first: true}
	c.row(Header...)
	c.row(strconv.Itoa(docID), "Document", "", "", "", "", "", "", "", "", "", "Draft", title, "")
	c.row(strconv.Itoa(pageID), "Page", "", "", "", "", "", "", "", "", "", "", "Page 1", "")
	return c
}

func (c *csvWriter) shape(id int, name, text string) {
	c.row(strconv.Itoa(id), name, library, strconv.Itoa(pageID), "", "", "", "", "", "", "", "", text, "")
}

func (c *csvWriter) line(id, src, dst int, label string) {
	c.row(strconv.Itoa(id), "Line", "", strconv.Itoa(pageID), "", "",
		strconv.Itoa(src), strconv.Itoa(dst), "None", "Arrow", "", "", label, "")
}

// row writes one record. Write errors stick in the bufio.Writer and come
// back from flush.
func (c *csvWriter) row(cells ...string) {
	if !c.first {
		c.w.WriteByte('\n')
	}
	c.first = false
	for i, cell := range cells {
		if i > 0 {
			c.w.WriteByte(',')
		}
		if strings.ContainsAny(cell, ",\"\r\n") {
			c.w.WriteByte('"')
			c.w.WriteString(strings.ReplaceAll(cell, `"`, `""`))
			c.w.WriteByte('"')
		} else {
			c.w.WriteString(cell)
		}
	}
}

func (c *csvWriter) flush() error {
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("testchart: write csv: %w", err)
	}
	return nil
}
