package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// cmdMasked is `masked VAR FILE...`: the value of $VAR is nowhere in the
// files, in no form dtree could write it in (as is, JSON-escaped with or
// without HTML escapes, Go-quoted, XML-escaped), and a file that is JSON
// (.json), JSON lines (.jsonl), YAML (.yaml) or SVG (.svg) still parses
// and decodes to no text that holds it.
func cmdMasked(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: masked VAR FILE...")
	}
	secret := ts.Getenv(args[0])
	if secret == "" {
		ts.Fatalf("$%s is empty", args[0])
	}
	var xmlForm bytes.Buffer
	_ = xml.EscapeText(&xmlForm, []byte(secret))
	q := strconv.Quote(secret)
	forms := []string{secret, jsonInside(secret, true), jsonInside(secret, false), q[1 : len(q)-1], xmlForm.String()}
	for _, name := range args[1:] {
		data, err := os.ReadFile(ts.MkAbs(name))
		ts.Check(err)
		for _, f := range forms {
			if bytes.Contains(data, []byte(f)) {
				ts.Fatalf("%s holds the secret as %s", name, f)
			}
		}
		var texts []string
		switch filepath.Ext(name) {
		case ".json":
			texts, err = jsonTexts(data)
		case ".jsonl":
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 64<<20)
			for n := 1; sc.Scan(); n++ {
				t, lerr := jsonTexts(sc.Bytes())
				if lerr != nil {
					ts.Fatalf("%s:%d: %v", name, n, lerr)
				}
				texts = append(texts, t...)
			}
		case ".yaml":
			var v any
			if err = yaml.Unmarshal(data, &v); err == nil {
				texts = []string{fmt.Sprint(v)} // every key and scalar
			}
		case ".svg":
			texts, err = xmlTexts(data)
		}
		if err != nil {
			ts.Fatalf("%s does not parse: %v", name, err)
		}
		for _, t := range texts {
			if strings.Contains(t, secret) {
				ts.Fatalf("%s decodes to the secret: %q", name, t)
			}
		}
	}
}

// cmdJSONOK is `jsonok FILE...`: each .json file is one JSON document,
// each .jsonl file one per line.
func cmdJSONOK(ts *testscript.TestScript, neg bool, args []string) {
	for _, name := range args {
		data, err := os.ReadFile(ts.MkAbs(name))
		ts.Check(err)
		docs := [][]byte{data}
		if filepath.Ext(name) == ".jsonl" {
			docs = bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		}
		for i, d := range docs {
			if ok := json.Valid(d); ok == neg {
				ts.Fatalf("%s: document %d: valid JSON %v: %s", name, i+1, ok, d)
			}
		}
	}
}

func jsonInside(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s)
	return strings.TrimSuffix(strings.TrimSuffix(b.String(), "\n")[1:], `"`)
}

// jsonTexts is every string, key or value, in the JSON document b.
func jsonTexts(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if s, ok := tok.(string); ok {
			out = append(out, s)
		}
	}
}

// xmlTexts is every character data and attribute value in the XML b.
func xmlTexts(b []byte) ([]string, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	var out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			out = append(out, string(t))
		case xml.StartElement:
			for _, a := range t.Attr {
				out = append(out, a.Value)
			}
		}
	}
}
