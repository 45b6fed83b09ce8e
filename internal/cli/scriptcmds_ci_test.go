package cli

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// What changes from one run to the next: its id, its times.
var (
	runIDPattern    = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{6}`)
	timestampAttr   = regexp.MustCompile(`timestamp="[^"]*"`)
	timeAttr        = regexp.MustCompile(` time="[0-9.]+"`)
	durationPattern = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(ns|µs|ms|h[0-9]+m[0-9]+(\.[0-9]+)?s|m[0-9]+(\.[0-9]+)?s|s)\b`)
)

// cmdSteady: steady FILE... — rewrites each file with what changes from
// one run to the next replaced: run ids by RUNID, JUnit times by T and
// TIME, durations (1.2s, 850ms) by DUR, the script's directory by
// $WORK; everything else stays byte for byte, for cmp against the
// expected file.
func cmdSteady(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: steady FILE...")
	}
	for _, name := range args {
		path := ts.MkAbs(name)
		b, err := os.ReadFile(path)
		ts.Check(err)
		b = []byte(strings.ReplaceAll(string(b), ts.Getenv("WORK"), "$WORK"))
		b = runIDPattern.ReplaceAll(b, []byte("RUNID"))
		b = timestampAttr.ReplaceAll(b, []byte(`timestamp="TIME"`))
		b = timeAttr.ReplaceAll(b, []byte(` time="T"`))
		b = durationPattern.ReplaceAll(b, []byte("DUR"))
		ts.Check(os.WriteFile(path, b, 0o644))
	}
}

// cmdXMLOK: xmlok FILE... — each file is well-formed XML.
func cmdXMLOK(ts *testscript.TestScript, neg bool, args []string) {
	for _, name := range args {
		f, err := os.Open(ts.MkAbs(name))
		ts.Check(err)
		d := xml.NewDecoder(f)
		var perr error
		for {
			if _, err := d.Token(); err != nil {
				if !errors.Is(err, io.EOF) {
					perr = err
				}
				break
			}
		}
		f.Close()
		if (perr == nil) == neg {
			ts.Fatalf("%s: well-formed XML: %v (%v)", name, perr == nil, perr)
		}
	}
}

// cmdMarkerChart: markerchart CHART NODES — writes a YAML chart start →
// NODES process nodes → end, each node's text the runner's "##[" marker
// again and again after a few letters that vary, so that an outline of it
// longer than a buffer has markers wherever the buffer is cut.
func cmdMarkerChart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: markerchart CHART NODES")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	var b strings.Builder
	b.WriteString("title: Markers\nnodes:\n  - {id: start, kind: start, text: Start, next: n0}\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: n%d, tags: [NoValidation], next: n%d, text: '%s%s'}\n", i, i+1, strings.Repeat("x", i%5), strings.Repeat("##[", 12))
	}
	fmt.Fprintf(&b, "  - {id: n%d, kind: end, text: End}\n", n)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}
