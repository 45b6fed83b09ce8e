package testchart

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// mermaidLabel escapes a label as Mermaid writes it in quotes: #quot; for a
// double quote, <br> for a line break.
var mermaidLabel = strings.NewReplacer(`"`, "#quot;", "\n", "<br>")

// LinearMermaid writes a Mermaid flowchart of a chain of n nodes: a stadium
// "Start", n-2 process steps and a stadium "End", each joined to the next
// by an edge, one "A --> B[…]" statement a line as READMEs write them.
// n = 100000 gives about 8 MB.
func LinearMermaid(w io.Writer, n int) error {
	if n < 2 {
		return fmt.Errorf("testchart: linear chart needs n >= 2, got %d", n)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "---\ntitle: Linear chain of %d steps\n---\nflowchart TD\n    s0([Start])", n)
	for i := 1; i < n; i++ {
		if i == n-1 {
			fmt.Fprintf(bw, "\n    s%d --> s%d([End])\n", i-1, i)
			break
		}
		fmt.Fprintf(bw, "\n    s%d --> s%d[\"%s\"]", i-1, i, mermaidLabel.Replace(processText(i)))
	}
	return bw.Flush()
}
