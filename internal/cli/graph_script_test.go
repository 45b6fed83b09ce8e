package cli

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdSVGCheck: svgcheck FILE ID... — FILE parses as XML (strictly) and has
// a node group for each ID (its data-id attribute).
func cmdSVGCheck(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: svgcheck FILE ID...")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	ids := map[string]bool{}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ts.Fatalf("%s is not XML: %v", args[0], err)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "g" {
			for _, a := range el.Attr {
				if a.Name.Local == "data-id" {
					ids[a.Value] = true
				}
			}
		}
	}
	for _, id := range args[1:] {
		if ids[id] == neg {
			ts.Fatalf("%s has node %s: %v", args[0], id, ids[id])
		}
	}
}
