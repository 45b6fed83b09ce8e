package document

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/dtree-dev/dtree/types"
)

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
				Hint: cannotTellHint()}
		}
	}
	f, ok := ByName(format)
	if !ok {
		return nil, &UnreadableError{Path: name, Err: fmt.Errorf("unknown format %q", format),
			Hint: UnknownFormatHint()}
	}
	doc, err := f.Read(br, size)
	if err != nil {
		return nil, &UnreadableError{Path: name, Err: err}
	}
	doc.Source = name
	if doc.Format == FormatDrawio && path != "-" {
		doc.Title = DrawioTitle(path)
	}
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

// Detect tells a chart's format from its file extension, else from its first
// bytes; "" when neither says.
func Detect(path string, head []byte) string {
	if f, ok := ByExtension(path); ok {
		return f.Name
	}
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	head = bytes.TrimLeft(head, " \t\r\n")
	for _, f := range detectOrder() {
		if f.Detect != nil && f.Detect(head) {
			return f.Name
		}
	}
	return ""
}
