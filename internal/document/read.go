package document

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// Formats dtree reads.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
	FormatYAML = "yaml"
)

// Formats lists the accepted values of --format.
var Formats = []string{FormatCSV, FormatJSON, FormatYAML, FormatDrawio}

// UnreadableError is a chart that could not be read at all: a missing file,
// a directory, an unknown format. It is a chart error (exit 3), not a usage
// error.
type UnreadableError struct {
	Path string
	Err  error
	Hint string
}

func (e *UnreadableError) Error() string {
	err := e.Err
	// "open x.csv: no such file or directory" says the path a second time
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("read chart %s: %v", e.Path, err)
}
func (e *UnreadableError) Unwrap() error { return e.Err }

// Read imports the chart at path ("-" for stdin) in the given format, or the
// format its extension or content shows when format is empty.
func Read(path, format string, stdin io.Reader) (*types.Document, error) {
	var r io.Reader
	var size int64
	name := path
	if path == "-" {
		r, name = stdin, "stdin"
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, &UnreadableError{Path: path, Err: err, Hint: "check the path; pass - to read the chart from stdin"}
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return nil, &UnreadableError{Path: path, Err: fmt.Errorf("is a directory"), Hint: "pass the chart file itself"}
		} else if err == nil {
			size = st.Size()
		}
		r = f
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if format == "" {
		head, _ := br.Peek(4096)
		format = Detect(path, head)
		if format == "" {
			return nil, &UnreadableError{Path: name, Err: fmt.Errorf("cannot tell its format"),
				Hint: "name the file .csv (Lucid's CSV of shape data), .json (Lucid API contents) or .yaml (dtree's own format), .drawio (draw.io), or pass --format"}
		}
	}
	var doc *types.Document
	var err error
	switch format {
	case FormatCSV:
		doc, err = fromCSV(br, size)
	case FormatJSON:
		doc, err = fromJSON(br, size)
	case FormatYAML:
		doc, err = FromYAML(br)
	case FormatDrawio:
		doc, err = fromDrawio(br, size)
	default:
		return nil, &UnreadableError{Path: name, Err: fmt.Errorf("unknown format %q", format),
			Hint: "use --format csv, json, yaml or drawio"}
	}
	if err != nil {
		return nil, &UnreadableError{Path: name, Err: err}
	}
	doc.Source = name
	if path == "-" {
		// Nothing to export again: what pipes the chart in sent nothing.
		for i := range doc.Errors {
			if doc.Errors[i].Class == "empty_chart" {
				doc.Errors[i].Hint = "nothing came on stdin: check the command that pipes the chart in, or pass the chart's file instead of -"
			}
		}
	}
	return doc, nil
}

// yamlStart matches the first line of a YAML chart: a comment, a document
// start or directive, or a "key:" at the start of the line. A Lucid CSV
// header starts with a column name and a comma, never like that.
var yamlStart = regexp.MustCompile(`^(#|---|%YAML|[A-Za-z_][A-Za-z0-9_-]*[ \t]*:([ \t\r]|$))`)

// Detect tells a chart's format from its file extension, else from its first
// bytes; "" when neither says.
func Detect(path string, head []byte) string {
	if l := strings.ToLower(path); strings.HasSuffix(l, ".drawio.xml") {
		return FormatDrawio
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".drawio", ".dio":
		return FormatDrawio
	case ".csv":
		return FormatCSV
	case ".json":
		return FormatJSON
	case ".yaml", ".yml":
		return FormatYAML
	}
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) == 0 {
		return FormatCSV // nothing to tell by: the CSV importer reports it empty
	}
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return FormatJSON
	}
	if isDrawioHead(trimmed) {
		return FormatDrawio
	}
	firstLine, _, _ := bytes.Cut(trimmed, []byte("\n"))
	if yamlStart.Match(firstLine) {
		return FormatYAML
	}
	if bytes.Contains(firstLine, []byte(",")) {
		return FormatCSV
	}
	return ""
}

// isDrawioHead reports whether a file's first bytes open an <mxfile> or an
// <mxGraphModel>, after an XML declaration and comments (an .xml of draw.io's).
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
