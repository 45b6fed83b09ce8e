package testchart

import (
	"bufio"
	"compress/flate"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// LinearDrawio writes a draw.io file (uncompressed, as draw.io saves by
// default) of a chain of n shapes: a terminator "Start", n-2 process steps
// and a terminator "End", each joined to the next by an edge, in the styles
// of draw.io's Flowchart sidebar. n = 100000 gives about 40 MB.
func LinearDrawio(w io.Writer, n int) error {
	if n < 2 {
		return fmt.Errorf("testchart: linear chart needs n >= 2, got %d", n)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, `<mxfile host="app.diagrams.net" version="24.9.1">
  <diagram name="Linear chain of %d steps" id="linear">
    `, n)
	if err := linearDrawioModel(bw, n); err != nil {
		return err
	}
	bw.WriteString("\n  </diagram>\n</mxfile>\n")
	return bw.Flush()
}

// linearDrawioModel writes the chain's <mxGraphModel> element.
func linearDrawioModel(bw *bufio.Writer, n int) error {
	fmt.Fprintf(bw, `<mxGraphModel dx="1194" dy="756" grid="1" gridSize="10" guides="1" tooltips="1" connect="1" arrows="1" fold="1" page="1" pageScale="1" pageWidth="827" pageHeight="1169" math="0" shadow="0">
      <root>
        <mxCell id="0" />
        <mxCell id="1" parent="0" />
`)
	const (
		term = "strokeWidth=2;html=1;shape=mxgraph.flowchart.terminator;whiteSpace=wrap;"
		proc = "rounded=1;whiteSpace=wrap;html=1;absoluteArcSize=1;arcSize=14;strokeWidth=2;"
		edge = "edgeStyle=orthogonalEdgeStyle;rounded=0;orthogonalLoop=1;jettySize=auto;html=1;"
	)
	for i := range n {
		style, text := proc, processText(i)
		switch i {
		case 0:
			style, text = term, "Start"
		case n - 1:
			style, text = term, "End"
		}
		fmt.Fprintf(bw, `        <mxCell id="v%d" value="`, i)
		if err := xml.EscapeText(bw, []byte(text)); err != nil {
			return err
		}
		fmt.Fprintf(bw, `" style="%s" vertex="1" parent="1">
          <mxGeometry x="340" y="%d" width="120" height="60" as="geometry" />
        </mxCell>
`, style, 40+100*i)
	}
	for i := range n - 1 {
		fmt.Fprintf(bw, `        <mxCell id="e%d" style="%s" edge="1" parent="1" source="v%d" target="v%d">
          <mxGeometry relative="1" as="geometry" />
        </mxCell>
`, i, edge, i, i+1)
	}
	bw.WriteString("      </root>\n    </mxGraphModel>")
	return nil
}

// LinearDrawioCompressed writes the chain of LinearDrawio as draw.io saves it
// with compression on (older versions' default, File > Properties >
// Compressed): the <mxGraphModel> URL-encoded as encodeURIComponent does,
// deflated raw, base64 in the <diagram> element.
func LinearDrawioCompressed(w io.Writer, n int) error {
	if n < 2 {
		return fmt.Errorf("testchart: linear chart needs n >= 2, got %d", n)
	}
	// Streamed, model to URL encoding to deflate to base64 to w, so that a
	// 100,000-shape chart is not held in memory (benchimport's children
	// would inherit the peak in their ru_maxrss).
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "<mxfile host=\"app.diagrams.net\" version=\"24.9.1\" compressed=\"true\">\n  <diagram name=\"Linear chain of %d steps\" id=\"linear\">", n)
	enc := base64.NewEncoder(base64.StdEncoding, bw)
	fw, err := flate.NewWriter(enc, flate.DefaultCompression)
	if err != nil {
		return err
	}
	model := bufio.NewWriterSize(uriWriter{fw}, 64<<10)
	if err := linearDrawioModel(model, n); err != nil {
		return err
	}
	for _, f := range []func() error{model.Flush, fw.Close, enc.Close} {
		if err := f(); err != nil {
			return err
		}
	}
	bw.WriteString("</diagram>\n</mxfile>\n")
	return bw.Flush()
}

// uriWriter writes what it is given through encodeURIComponent.
type uriWriter struct{ w io.Writer }

func (u uriWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(u.w, encodeURIComponent(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// encodeURIComponent escapes as JavaScript's function does: all but
// A-Z a-z 0-9 - _ . ! ~ * ' ( ).
func encodeURIComponent(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) * 2)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
