package export

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// formulaStarts are the first characters that make a spreadsheet (Excel,
// LibreOffice, Google Sheets) read a CSV cell as a formula, which it may
// run when the file is opened: =, +, - and @, and a tab or carriage
// return before them (OWASP's "CSV injection").
const formulaStarts = "=+-@\t\r"

// maxFormulaCells bounds the cells FormulaWarning names.
const maxFormulaCells = 5

// FormulaWarning says which cells of the CSV that CSV writes for doc
// start with a character a spreadsheet reads as a formula, or "" when
// none does. It names the first few and counts the rest. The cells are
// written as they are: Lucid, which the CSV is for, reads them back as
// text, and a prefix such as ' would change the chart's text for it
// (readme/convert.md).
func FormulaWarning(doc *types.Document) string {
	var cells []string
	count := 0
	add := func(v, where string) {
		if v != "" && strings.ContainsRune(formulaStarts, rune(v[0])) {
			if count < maxFormulaCells {
				cells = append(cells, where)
			}
			count++
		}
	}
	add(doc.Title, "the title")
	for _, p := range doc.Pages {
		add(p.Title, "page "+short(p.ID)+"'s title")
	}
	for _, n := range doc.Nodes {
		id := "node " + short(n.ID)
		add(n.Text, id+"'s text")
		add(strings.Join(n.Tags, "; "), id+"'s tags")
		add(strings.Join(n.Comments, "\n"), id+"'s comments")
		for _, k := range slices.Sorted(maps.Keys(n.Metadata)) {
			add(n.Metadata[k], fmt.Sprintf("%s's %s", id, short(strings.TrimSpace(k))))
		}
	}
	for _, e := range doc.Edges {
		id := fmt.Sprintf("the label of the line from %s to %s", short(e.From), short(e.To))
		add(e.Label, id)
		for _, l := range e.ExtraLabels {
			add(l, id)
		}
	}
	keys, _ := customKeys(doc)
	for _, k := range keys {
		add(k, fmt.Sprintf("the column %q", short(k)))
	}
	if count == 0 {
		return ""
	}
	list := strings.Join(cells, ", ")
	if count > len(cells) {
		list += fmt.Sprintf(" and %d more", count-len(cells))
	}
	return fmt.Sprintf("%s of the CSV start with =, +, -, @, a tab or a carriage return, which a spreadsheet may run as a formula: %s. Lucid reads them as text; before opening the file in a spreadsheet, see its section Formula cells in 'dtree docs convert'",
		types.Plural(count, "cell"), list)
}

// short cuts an id or key for a message.
func short(s string) string { return types.Excerpt(s, 40) }
