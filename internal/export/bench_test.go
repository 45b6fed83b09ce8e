package export_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/testchart"
)

// BenchmarkTraceFrom reads the events.jsonl of a 200-node run, as every
// run does once more at its end to draw graph.svg.
func BenchmarkTraceFrom(b *testing.B) {
	var log bytes.Buffer
	const ts = `{"time":"2026-11-24T06:09:29.123456789Z","event":`
	fmt.Fprintf(&log, `%s"run_start","chart":"","page":"1","run_id":"r","source":"chain.csv","start":"2","graph_digest":"abc"}`+"\n", ts)
	for i := 2; i < 202; i++ {
		fmt.Fprintf(&log, `%s"node_start","cli":"fake","node":"%d","role":"process","run_id":"r","visit":1}`+"\n", ts, i)
		fmt.Fprintf(&log, `%s"agent_call","argv":["/usr/local/bin/fakeagent","<prompt: 317 bytes>"],"attempt":1,"cli":"fake","duration_ms":4,"error":"","exit_code":0,"node":"%d","purpose":"run","run_id":"r","stderr_bytes":0,"stderr_tail":"","stdout_bytes":81,"timed_out":false,"usage":{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null}}`+"\n", ts, i)
		fmt.Fprintf(&log, `%s"node_end","label":"","next":"%d","node":"%d","response":{"completed":true,"secs_taken":0,"tokens_used":0,"comments":["done"]},"run_id":"r","status":"succeeded","usage":{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null,"calls":1,"wall_ms":4}}`+"\n", ts, i+1, i)
	}
	fmt.Fprintf(&log, `%s"run_end","exit_code":0,"path":["2"],"status":"succeeded","steps":200}`+"\n", ts)
	b.SetBytes(int64(log.Len()))
	for b.Loop() {
		t, err := export.TraceFrom(bytes.NewReader(log.Bytes()))
		if err != nil || len(t.Steps) != 200 {
			b.Fatal(err, len(t.Steps))
		}
	}
}

// BenchmarkSVG draws a 200-node chain, the picture every run of such a
// chart leaves as graph.svg.
func BenchmarkSVG(b *testing.B) {
	var csv bytes.Buffer
	if err := testchart.LinearCSV(&csv, 200); err != nil {
		b.Fatal(err)
	}
	doc, err := document.FromCSV(&csv)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := export.SVG(b.Context(), io.Discard, doc, export.PictureOptions{Page: doc.Pages[0].ID}); err != nil {
			b.Fatal(err)
		}
	}
}
