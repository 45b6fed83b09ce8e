package export

import (
	"context"
	"fmt"
	"github.com/dtree-dev/dtree/internal/atomicfile"
	"io"
	"path/filepath"

	"github.com/dtree-dev/dtree/types"
)

// WriteFile replaces path with what write writes, in one step
// (atomicfile): a failed write leaves the old file as it was.
func WriteFile(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, 0o644, atomicfile.Options{Follow: true}, write)
}

// pictureFiles are the names WriteRunPicture gives a run's picture.
var pictureFiles = map[string]string{"svg": "graph.svg", "mermaid": "graph.mmd", "dot": "graph.dot"}

// Picture writes doc as a picture in format: mermaid, dot or svg. Its time
// grows linearly with the chart (see wrap); it stops with ctx's error when
// ctx ends.
func Picture(ctx context.Context, w io.Writer, doc *types.Document, format string, o PictureOptions) error {
	switch format {
	case "mermaid":
		return Mermaid(ctx, w, doc, o)
	case "dot":
		return DOT(ctx, w, doc, o)
	case "svg":
		return SVG(ctx, w, doc, o)
	}
	return fmt.Errorf("unknown picture format %q", format)
}

// WriteRunPicture draws doc with the run logged in runDir marked on it —
// the page it ran, the nodes it entered, the edges it took, its retries
// and where it stopped — into runDir as graph.svg, graph.mmd or graph.dot
// (format svg, mermaid or dot), and returns the file's path. It reads the
// run's events.jsonl, so call it once the run has ended. When ctx ends
// it stops, and writes nothing. mask, when not nil, masks the secrets in
// its texts (PictureOptions.Mask).
func WriteRunPicture(ctx context.Context, runDir string, doc *types.Document, format string, mask func(string) string) (string, error) {
	name, ok := pictureFiles[format]
	if !ok {
		return "", fmt.Errorf("unknown picture format %q", format)
	}
	t, err := ReadTrace(runDir)
	if err != nil {
		return "", fmt.Errorf("read run: %w", err)
	}
	o := PictureOptions{Trace: t, Mask: mask}
	for _, p := range doc.Pages {
		if p.ID == t.Page {
			o.Page = p.ID
		}
	}
	path := filepath.Join(runDir, name)
	if err := WriteFile(path, func(w io.Writer) error { return Picture(ctx, w, doc, format, o) }); err != nil {
		return "", err
	}
	return path, nil
}
