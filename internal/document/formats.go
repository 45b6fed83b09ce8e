package document

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// Format is one chart format dtree reads: everything the commands say or
// do about it comes from its row in formats (readme/dev.md, "A new chart
// format"): --format's values and completion, the extensions that name
// it, Detect, Read, the hints.
type Format struct {
	// Name is the value of --format and of types.Document.Format.
	Name string
	// Extensions name the format, lower case with the dot; a longer one
	// (".drawio.xml") wins over a shorter one (".xml").
	Extensions []string
	// Detect tells the format from the first bytes of a file whose
	// extension names none, with a byte order mark and leading white
	// space removed (so empty when the file is blank). Nil: only the
	// extension or --format tells it.
	Detect func(head []byte) bool
	// DetectLast tries Detect after the other formats': for a format
	// whose test would also match another's content (CSV: any first
	// line with a comma).
	DetectLast bool
	// Read reads the whole chart; size is the file's size, 0 when not
	// known (stdin). The error is only for a failure to read r: what is
	// wrong in the chart is in the document's Errors.
	Read func(r io.Reader, size int64) (*types.Document, error)
	// Hint says how to name a file of the format, in the hint of a chart
	// whose format cannot be told: ".csv (Lucid's CSV of shape data)".
	Hint string
	// Fix says where a chart's errors are mended, before "; 'dtree lint
	// FILE' lists them" in the hint of a command that stops on them.
	Fix string
	// Hints replace the hints of these finding classes for a chart of the
	// format (Localize): a YAML chart's say which key to change.
	Hints map[string]string
	// Output are the extensions of a file that convert -o writes in the
	// format (export.Writers has its writer); none for a format dtree
	// only reads.
	Output []string
	// Written is set for a format a person types (YAML), as against one a
	// diagram tool saves: a shape with no text and no line is then kept
	// (it is written on purpose), shapes need no flowchart library, and
	// the document's custom data are not its variables (it lists vars:).
	Written bool
}

// Names of the formats, as in the table.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
	FormatYAML = "yaml"
)

// formats are the formats dtree reads, in the order they are listed to
// the user (--format's values, completion, hints). Set in init: the
// readers reach the builder, which looks formats up (an initialization
// cycle otherwise).
var formats []Format

func init() {
	formats = []Format{
		{
			Name:       FormatCSV,
			Extensions: []string{".csv"},
			// Nothing to tell by in a blank file: the CSV importer
			// reports it empty.
			Detect: func(head []byte) bool {
				first, _, _ := bytes.Cut(head, []byte("\n"))
				return len(head) == 0 || bytes.Contains(first, []byte(","))
			},
			DetectLast: true,
			Read:       fromCSV,
			Output:     []string{".csv"},
			Hint:       ".csv (Lucid's CSV of shape data)",
			Fix:        "fix the errors above in Lucid and export the chart again",
		},
		{
			Name:       FormatJSON,
			Extensions: []string{".json"},
			Detect:     func(head []byte) bool { return len(head) > 0 && head[0] == '{' },
			Read:       fromJSON,
			Output:     []string{".json"},
			Hint:       ".json (Lucid API contents)",
			Fix:        "fix the errors above in Lucid and export the chart again",
		},
		{
			Name:       FormatYAML,
			Extensions: []string{".yaml", ".yml"},
			Detect: func(head []byte) bool {
				first, _, _ := bytes.Cut(head, []byte("\n"))
				// Mermaid's front matter starts with --- too, and a
				// Markdown file with # (a heading).
				return yamlStart.Match(first) && !isMermaidDetect(head)
			},
			Read:    func(r io.Reader, _ int64) (*types.Document, error) { return FromYAML(r) },
			Output:  []string{".yaml", ".yml"},
			Hint:    ".yaml (dtree's own format)",
			Fix:     "fix the errors above in the chart",
			Hints:   yamlHints,
			Written: true,
		},
		{
			Name:       FormatDrawio,
			Extensions: []string{".drawio", ".drawio.xml", ".dio"},
			Detect:     isDrawioHead,
			Read:       fromDrawio,
			Output:     []string{".drawio", ".drawio.xml", ".dio"},
			Hint:       ".drawio (draw.io)",
			Fix:        "fix the errors above in draw.io and save the file",
			Hints:      drawioHints,
		},
		{
			Name: FormatMermaid,
			// .md: the flowcharts of its ```mermaid blocks, one page each.
			Extensions: []string{".mmd", ".mermaid", ".md"},
			Detect:     isMermaidDetect,
			Read:       fromMermaid,
			// A .md is written as Markdown, a ```mermaid block a page.
			Output: []string{".mmd", ".mermaid", ".md"},
			Hint:   ".mmd or .md (Mermaid)",
			Fix:    "fix the errors above in the Mermaid text",
			Hints:  mermaidHints,
		},
	}
}

// yamlStart matches the first line of a YAML chart: a comment, a document
// start or directive, or a "key:" at the start of the line. A Lucid CSV
// header starts with a column name and a comma, never like that.
var yamlStart = regexp.MustCompile(`^(#|---|%YAML|[A-Za-z_][A-Za-z0-9_-]*[ \t]*:([ \t\r]|$))`)

// ByName is the format named name (exactly, as --format takes it).
func ByName(name string) (Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// ByExtension is the format whose extension path ends with, case aside;
// the longest extension wins.
func ByExtension(path string) (Format, bool) {
	return byLongestSuffix(path, func(f Format) []string { return f.Extensions })
}

// ByOutput is the format that writes a file named path (its Output
// extensions), case aside; the longest extension wins.
func ByOutput(path string) (Format, bool) {
	return byLongestSuffix(path, func(f Format) []string { return f.Output })
}

// byLongestSuffix is the format one of whose exts (case aside) path ends
// with, the longest such extension winning: ".drawio.xml" over ".xml".
func byLongestSuffix(path string, exts func(Format) []string) (Format, bool) {
	low := strings.ToLower(path)
	var best Format
	n := 0
	for _, f := range formats {
		for _, e := range exts(f) {
			if len(e) > n && strings.HasSuffix(low, e) {
				best, n = f, len(e)
			}
		}
	}
	return best, n > 0
}

// Written are the formats dtree writes (those with Output), in the
// table's order.
func Written() []Format {
	var out []Format
	for _, f := range formats {
		if len(f.Output) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// Names are the formats' names, the values of --format.
func Names() []string {
	out := make([]string, len(formats))
	for i, f := range formats {
		out[i] = f.Name
	}
	return out
}

// Extensions are the extensions of every format, without the dot, for
// shell completion to filter files by.
func Extensions() []string {
	var out []string
	for _, f := range formats {
		for _, e := range f.Extensions {
			out = append(out, strings.TrimPrefix(e, "."))
		}
	}
	return out
}

// NameList is the formats' names as a sentence says them: "csv, json or
// yaml".
func NameList() string { return orList(Names()) }

// UnknownFormatHint is the hint of an unknown --format value: "use
// --format csv, json or yaml".
func UnknownFormatHint() string { return "use --format " + NameList() }

// cannotTellHint is the hint of a chart whose format neither its name nor
// its content tells.
func cannotTellHint() string {
	var names []string
	for _, f := range formats {
		if f.Hint != "" {
			names = append(names, f.Hint)
		}
	}
	return "name the file " + orList(names) + ", or pass --format"
}

// orList joins "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// FixHint says where the errors of a chart of the named format are
// mended; Lucid's words for a format not in the table.
func FixHint(name string) string {
	if f, ok := ByName(name); ok && f.Fix != "" {
		return f.Fix
	}
	return formats[0].Fix
}

// written reports whether the named format is one a person types.
func written(name string) bool {
	f, ok := ByName(name)
	return ok && f.Written
}

// detectOrder is the formats in the order Detect tries them.
func detectOrder() []Format {
	out := slices.Clone(formats)
	slices.SortStableFunc(out, func(a, b Format) int {
		switch {
		case a.DetectLast == b.DetectLast:
			return 0
		case a.DetectLast:
			return 1
		}
		return -1
	})
	return out
}
