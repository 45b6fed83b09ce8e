// Package readme holds dtree's user documentation, one topic a Markdown
// file, and embeds it in the binary: `dtree docs TOPIC` prints a topic
// wherever dtree is installed, with no clone and no network, so that a
// help text or hint can point to it.
package readme

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.md
var files embed.FS

// Topic is one file of the documentation.
type Topic struct {
	Name  string // the file's name without .md: run, settings
	Title string // its first heading
}

// Topics lists the topics in name order. dev.md and performance.md are
// for those who work on dtree, and are listed too.
func Topics() []Topic {
	entries, _ := fs.ReadDir(files, ".")
	var out []Topic
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok {
			continue
		}
		b, _ := files.ReadFile(e.Name())
		title, _, _ := strings.Cut(string(b), "\n")
		out = append(out, Topic{Name: name, Title: strings.TrimSpace(strings.TrimPrefix(title, "#"))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Read returns a topic's Markdown; ok is false when there is no such topic.
func Read(name string) (string, bool) {
	b, err := files.ReadFile(strings.TrimSuffix(name, ".md") + ".md")
	return string(b), err == nil
}
