package document_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

// The charts in testdata/charts/rules check the import rules of
// readme/charts.md and readme/lint.md#classes, one rule or situation per
// file (testdata/charts/rules/README.md lists them). Each file has one row
// in ruleCases saying what it must import to; TestRulesEveryChartHasARow keeps
// the two in step.

const rulesDir = "../../testdata/charts/rules"

// ruleCase is what one chart must import to. Nil slices mean "not checked";
// an empty, non-nil slice means "must be empty".
type ruleCase struct {
	file string
	// errors and warnings are compared exactly as multisets of classes; each
	// entry's ids and line are then looked for in a diagnostic of its class.
	errors   []diagWant
	warnings []diagWant
	title    string     // document title, when non-empty
	pages    []pageWant // exact, in order
	nodeIDs  []string   // exact, in source order (any order when nodeSet)
	nodeSet  bool
	nodes    []nodeWant // the node fields the rule is about
	edges    []edgeWant // exact, in source order (any order when edgeSet)
	edgeSet  bool
	// edgeLines maps an edge id to the CSV line its row starts on.
	edgeLines map[string]int
}

type pageWant struct{ id, title, root string }

func pg(id, title, root string) pageWant { return pageWant{id, title, root} }

// edgeWant is an edge as the test compares it.
type edgeWant struct {
	ID    string
	From  string
	To    string
	Label string
	Extra []string
}

func e(id, from, to, label string, extra ...string) edgeWant {
	return edgeWant{ID: id, From: from, To: to, Label: label, Extra: extra}
}

// diagWant is one expected diagnostic: its class, ids that must all be in its
// IDs, the CSV line of the row it is about (0: not checked), and whether it
// must carry a hint.
type diagWant struct {
	class string
	ids   []string
	line  int
	hint  bool
}

func d(class string, ids ...string) diagWant { return diagWant{class: class, ids: ids} }

func (w diagWant) at(line int) diagWant { w.line = line; return w }

func (w diagWant) withHint() diagWant { w.hint = true; return w }

// nodeWant names the fields of one node that a chart is about.
type nodeWant struct {
	id     string
	fields map[string]any
}

func n(id string) nodeWant { return nodeWant{id: id, fields: map[string]any{}} }

func (w nodeWant) set(k string, v any) nodeWant {
	f := maps.Clone(w.fields)
	f[k] = v
	return nodeWant{id: w.id, fields: f}
}

func (w nodeWant) kind(v string) nodeWant                { return w.set("kind", v) }
func (w nodeWant) shape(v string) nodeWant               { return w.set("shape", v) }
func (w nodeWant) text(v string) nodeWant                { return w.set("text", v) }
func (w nodeWant) lane(v string) nodeWant                { return w.set("lane", v) }
func (w nodeWant) container(v string) nodeWant           { return w.set("container", v) }
func (w nodeWant) group(v string) nodeWant               { return w.set("group", v) }
func (w nodeWant) page(v string) nodeWant                { return w.set("page", v) }
func (w nodeWant) line(v int) nodeWant                   { return w.set("line", v) }
func (w nodeWant) tags(v ...string) nodeWant             { return w.set("tags", v) }
func (w nodeWant) textAreas(v ...string) nodeWant        { return w.set("text_areas", v) }
func (w nodeWant) comments(v ...string) nodeWant         { return w.set("comments", v) }
func (w nodeWant) metadata(v map[string]string) nodeWant { return w.set("metadata", v) }

// kt is a node's kind and text, the two fields most rows check.
func kt(id, kind, text string) nodeWant { return n(id).kind(kind).text(text) }

type md = map[string]string

const (
	terminator = types.KindTerminator
	process    = types.KindProcess
	decision   = types.KindDecision
	subprocess = types.KindSubprocess
	other      = types.KindOther
)

const (
	cMalformedCSV    = "malformed_csv"
	cMalformedJSON   = "malformed_json"
	cMissingColumns  = "missing_columns"
	cEmptyChart      = "empty_chart"
	cDanglingLine    = "dangling_line"
	cLineToContainer = "line_to_container"
	cBidirectional   = "bidirectional_line"
	cUnlabeledBranch = "unlabeled_branch"
	cDuplicateLabel  = "duplicate_branch_label"
	cAmbiguousRoot   = "ambiguous_root"
	cNoRoot          = "no_root"
	cNotAFlowchart   = "not_a_flowchart"

	wNoArrowheads   = "line_without_arrowheads"
	wMultipleLabels = "multiple_line_labels"
	wAnnotation     = "ignored_annotation"
	wDuplicateLine  = "duplicate_line"
	wEmptyShape     = "ignored_empty_shape"
)

var errorClasses = []string{cMalformedCSV, cMalformedJSON, cMissingColumns, cEmptyChart, cDanglingLine,
	cLineToContainer, cBidirectional, cUnlabeledBranch, cDuplicateLabel, cAmbiguousRoot, cNoRoot, cNotAFlowchart}

var warningClasses = []string{wNoArrowheads, wMultipleLabels, wAnnotation, wDuplicateLine, wEmptyShape}

// leadingID lists the classes about one line or one node: the expected
// diagnostic's first id must come first in its IDs.
var leadingID = map[string]bool{
	cDanglingLine: true, cLineToContainer: true, cBidirectional: true,
	wNoArrowheads: true, wMultipleLabels: true, wDuplicateLine: true,
	wAnnotation: true, wEmptyShape: true, cUnlabeledBranch: true, cDuplicateLabel: true,
}

var none = []diagWant{}

// p1 is the single page of most CSV charts: Page row Id 2, "Page 1".
func p1(root string) []pageWant { return []pageWant{pg("2", "Page 1", root)} }

// j1 is the single page of most JSON charts.
func j1(root string) []pageWant { return []pageWant{pg("0_0", "Page 1", root)} }

var ruleCases = []ruleCase{
	// ---- rule 1: BOM, empty input
	{
		file:   "01_bom.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").shape("Terminator").line(4).page("2"),
			kt("4", process, "Write the summary").line(5),
			kt("5", terminator, "End").line(6),
		},
		edges: []edgeWant{e("6", "3", "4", ""), e("7", "4", "5", "")},
	},
	{
		file:   "01_empty.csv",
		errors: []diagWant{d(cEmptyChart)}, warnings: none,
		nodeIDs: []string{}, edges: []edgeWant{},
	},
	{
		file:   "01_bom_only.csv",
		errors: []diagWant{d(cEmptyChart)}, warnings: none,
		nodeIDs: []string{}, edges: []edgeWant{},
	},

	// ---- rule 2: RFC 4180 parsing
	{
		file:   "02_crlf.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").line(4),
			kt("4", process, "Collect logs\nfrom every host").line(5),
			kt("5", process, "Summarize the errors").line(7),
			kt("6", terminator, "End").line(8),
		},
		edges:     []edgeWant{e("7", "3", "4", ""), e("8", "4", "5", "then\nsummarize"), e("9", "5", "6", "")},
		edgeLines: map[string]int{"7": 9, "8": 10, "9": 12},
	},
	{
		file:   "02_quoting.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").line(4),
			kt("4", process, `Read "config.yaml", then validate it`).line(5),
			kt("5", decision, "Valid?\nCheck schema, types").line(6),
			kt("6", process, "Fix the file").line(8),
			kt("7", terminator, `"Done"`).line(9),
		},
		edges: []edgeWant{
			e("8", "3", "4", ""), e("9", "4", "5", ""), e("10", "5", "6", "No, fix it"),
			e("11", "5", "7", "Yes"), e("12", "6", "4", ""),
		},
		edgeLines: map[string]int{"8": 10, "9": 11, "10": 12, "11": 13, "12": 14},
	},
	{
		file:   "02_short_rows.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").metadata(md{}).tags().comments(),
			kt("4", process, "Run the tests").metadata(md{"retries": "2"}).comments(),
			kt("5", terminator, "End").metadata(md{}),
		},
		edges: []edgeWant{e("6", "3", "4", ""), e("7", "4", "5", "done")},
	},
	{
		file:     "02_unclosed_quote.csv",
		errors:   []diagWant{d(cMalformedCSV).at(5)},
		warnings: none,
	},
	{
		file:     "02_stray_quote.csv",
		errors:   []diagWant{d(cMalformedCSV).at(5)},
		warnings: none,
	},

	// ---- rule 3: columns by trimmed header name
	{
		file:   "03_shuffled_columns.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").shape("Terminator").metadata(md{}).page("2"),
			kt("4", process, "Refactor the parser").shape("Process").metadata(md{
				"cli": "codex", "Validate Prompt": "Check the diff, then the tests", "retries": "1",
			}),
			kt("5", process, "Run the tests").metadata(md{"retries": "0"}),
			kt("6", terminator, "End").metadata(md{}),
		},
		edges: []edgeWant{e("7", "3", "4", ""), e("8", "4", "5", ""), e("9", "5", "6", "")},
	},
	{
		file:     "03_german_header.csv",
		errors:   []diagWant{d(cMissingColumns).withHint()},
		warnings: none,
	},
	{
		file:     "03_portuguese_header.csv",
		errors:   []diagWant{d(cMissingColumns).withHint()},
		warnings: none,
	},
	{
		file:     "03_missing_column.csv",
		errors:   []diagWant{d(cMissingColumns)},
		warnings: none,
	},
	{
		// A 2020 export: no Document row, no Status/Comments/Tags, Text
		// Area 1..3, library "Flowchart Shapes", the Group row last.
		file:     "03_2020_export.csv",
		errors:   none,
		warnings: []diagWant{d(wAnnotation, "2").at(3)},
		pages:    []pageWant{pg("1", "Weekly report flow", "3")},
		nodeIDs:  []string{"3", "4", "5"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").shape("Terminator").page("1").group("8").line(4).
				tags().comments().metadata(md{}).textAreas("Start"),
			kt("4", process, "Export the report").page("1").group(""),
			kt("5", terminator, "End").page("1"),
		},
		edges: []edgeWant{e("6", "3", "4", ""), e("7", "4", "5", "")},
	},
	{
		// A 2022 export: Status but no Comments or Tags, Text Area 1..3,
		// library "Flowchart Shapes", a MinimalTextBlock note in "Standard".
		file:     "03_2022_export.csv",
		errors:   none,
		warnings: []diagWant{d(wAnnotation, "3").at(4)},
		title:    "TicketTriage",
		pages:    p1("4"),
		nodeIDs:  []string{"4", "5", "6", "7", "8", "9"},
		nodes: []nodeWant{
			kt("4", terminator, "Start").tags().comments().metadata(md{}),
			kt("5", process, "Read the newest ticket\nand name the component it is about").line(6),
			kt("6", decision, "Is it a bug report?").line(8),
			kt("7", process, "Label the ticket bug"),
			kt("8", process, "Label the ticket question"),
			kt("9", terminator, "Done"),
		},
		edges: []edgeWant{
			e("10", "4", "5", ""), e("11", "5", "6", ""), e("12", "6", "7", "Yes"),
			e("13", "6", "8", "No"), e("14", "7", "9", ""), e("15", "8", "9", ""),
		},
	},

	{
		// A 2026 export: every flowchart shape is in library "Flowchart
		// Shapes/Containers", which must not make it a container.
		file:   "03_2026_export.csv",
		errors: none, warnings: none,
		title:   "BackupCheck",
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7", "8"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").shape("Terminator").line(4).tags().metadata(md{}).comments(),
			kt("4", process, "List the files in the backups directory with their  dates and sizes").shape("Process"),
			kt("5", decision, "Is any backup in the directory older than a week?").shape("Decision").line(6),
			kt("6", process, "Write a note naming the stale backups"),
			kt("7", terminator, "End").line(8),
			kt("8", terminator, "End").line(9),
		},
		edges: []edgeWant{
			e("9", "5", "7", "No"), e("10", "5", "6", "Yes"), e("11", "4", "5", ""),
			e("12", "3", "4", ""), e("13", "6", "8", ""),
		},
		edgeLines: map[string]int{"9": 10, "13": 14},
	},

	{
		// A 2026 export with tags (one a cell) and a custom-data column
		// after Comments, lower case as Lucid wrote "testprop".
		file:   "03_2026_export_tags.csv",
		errors: none, warnings: none,
		title:   "Release notes",
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7", "8", "9"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").tags().metadata(md{}),
			kt("4", process, "List the commits since the last tag").tags("NoValidation").metadata(md{}),
			kt("5", subprocess, "Group the commits by area").shape("Predefined process").
				tags("GEMINI").metadata(md{"retries": "2"}),
			kt("6", decision, "Is any change breaking?").tags(),
			kt("7", process, "Write an upgrade section").tags("CLAUDE").metadata(md{}),
			kt("8", process, "Write the release notes").tags().metadata(md{"retries": "1"}),
			kt("9", terminator, "End"),
		},
		edges: []edgeWant{
			e("10", "3", "4", ""), e("11", "4", "5", ""), e("12", "5", "6", ""), e("13", "6", "7", "Yes"),
			e("14", "6", "8", "No"), e("15", "7", "8", ""), e("16", "8", "9", ""),
		},
	},

	// ---- rule 4: row kinds; groups, containers and swim lanes are not nodes
	{
		file:   "04_structural_rows.csv",
		errors: none, warnings: none,
		pages:   []pageWant{pg("2", "Main", "3")},
		nodeIDs: []string{"3", "4", "6", "7", "8"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").group("14").container("").lane(""),
			kt("4", process, "Draft the plan").group("14").container(""),
			kt("6", process, "Execute the plan").container("5").group("").lane(""),
			kt("7", decision, "Plan worked?").container("5").group(""),
			kt("8", terminator, "End").container("").group(""),
		},
		edges: []edgeWant{
			e("9", "3", "4", ""), e("10", "4", "6", ""), e("11", "6", "7", ""),
			e("12", "7", "8", "Yes"), e("13", "7", "4", "No"),
		},
	},
	{
		file:   "04_swimlane.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14"},
		nodes: []nodeWant{
			kt("3", terminator, "Start").lane("Requester").container("15"),
			kt("4", process, "Describe the change").lane("Requester").container("15"),
			kt("5", process, "Plan the change").lane("Agent").container("15"),
			kt("6", process, "Write the code").lane("Agent").container("15"),
			kt("7", process, "Run the tests").lane("Agent").container("15"),
			kt("8", decision, "Tests pass?").lane("Agent").container("15"),
			kt("9", process, "Fix the failures").lane("Agent").container("15"),
			kt("10", process, "Review the diff").lane("Reviewer").container("15"),
			kt("11", decision, "Approved?").lane("Reviewer").container("15"),
			kt("12", process, "Address the comments").lane("Agent").container("15"),
			kt("13", process, "Merge").lane("Reviewer").container("15"),
			kt("14", terminator, "Done").lane("Requester").container("15"),
		},
		edges: []edgeWant{
			e("16", "3", "4", ""), e("17", "4", "5", ""), e("18", "5", "6", ""), e("19", "6", "7", ""),
			e("20", "7", "8", ""), e("21", "8", "9", "No"), e("22", "9", "7", ""), e("23", "8", "10", "Yes"),
			e("24", "10", "11", ""), e("25", "11", "12", "No"), e("26", "12", "7", ""),
			e("27", "11", "13", "Yes"), e("28", "13", "14", ""),
		},
	},
	{
		file:   "04_document_shape.csv",
		errors: none, warnings: none,
		title:   "Report",
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5"},
		nodes: []nodeWant{
			kt("4", other, "Write the report").shape("Document").page("2"),
		},
		edges: []edgeWant{e("6", "3", "4", ""), e("7", "4", "5", "")},
	},

	{
		file:   "04_empty_swimlane.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5"},
		nodes:   []nodeWant{n("3").lane("").container(""), n("4").lane("").container("")},
		edges:   []edgeWant{e("7", "3", "4", ""), e("8", "4", "5", "")},
	},

	// ---- rule 5: text, tags, metadata, comments
	{
		file:   "05_tags.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7", "8"},
		nodes: []nodeWant{
			n("3").tags(),
			n("4").tags("CLAUDE", "NoValidation"),
			n("5").tags("gemini", "NoValidation"),
			n("6").tags("codex"),
			n("7").tags().text("Report"),
			n("8").tags(),
		},
		edges: []edgeWant{
			e("9", "3", "4", ""), e("10", "4", "5", ""), e("11", "5", "6", ""),
			e("12", "6", "7", ""), e("13", "7", "8", ""),
		},
	},
	{
		file:   "05_custom_data.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7"},
		nodes: []nodeWant{
			n("3").metadata(md{}),
			n("4").metadata(md{"cli": "claude", "retries": "2", "timeout": "90s"}),
			n("5").metadata(md{"validate_prompt": "Is every test meaningful?", "max_visits": "3"}),
			n("6").metadata(md{}),
			n("7").metadata(md{}),
		},
		edges: []edgeWant{e("8", "3", "4", ""), e("9", "4", "5", ""), e("10", "5", "6", ""), e("11", "6", "7", "")},
	},
	{
		file:   "05_text_areas.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6"},
		nodes: []nodeWant{
			n("3").comments(),
			kt("4", process, "Summarize the release").
				textAreas("Summarize the release", "Audience: users", "Format: markdown").
				comments("Keep it short"),
			kt("5", process, "Publish the notes").comments(),
		},
		edges: []edgeWant{e("7", "3", "4", ""), e("8", "4", "5", ""), e("9", "5", "6", "")},
	},

	// ---- rule 6: JSON parsing and page order
	{
		file:     "06_not_json.json",
		errors:   []diagWant{d(cMalformedJSON).at(1)},
		warnings: none,
	},
	{
		file:     "06_empty.json",
		errors:   []diagWant{d(cMalformedJSON).at(1)},
		warnings: none,
	},
	{
		file:     "06_no_pages.json",
		errors:   []diagWant{d(cMalformedJSON)},
		warnings: none,
	},
	{
		file:   "06_page_order.json",
		errors: none, warnings: none,
		title:   "Pages out of order",
		pages:   []pageWant{pg("0_0", "Build", "bStart0001a"), pg("0_1", "Deploy", "dUpload0001a")},
		nodeIDs: []string{"bStart0001a", "bCompile01b", "dUpload0001a", "dLive00001b~"},
		nodeSet: true,
		nodes: []nodeWant{
			n("bStart0001a").page("0_0"), n("bCompile01b").page("0_0"),
			n("dUpload0001a").page("0_1"), n("dLive00001b~").page("0_1"),
		},
		edges: []edgeWant{
			e("bLine0001ab", "bStart0001a", "bCompile01b", ""),
			e("dLine0001ab", "dUpload0001a", "dLive00001b~", ""),
		},
		edgeSet: true,
	},

	// ---- rule 7: JSON shapes: containers, text, metadata, lanes, groups
	{
		file:   "07_swimlane_container.json",
		errors: none, warnings: none,
		pages:   j1("start"),
		nodeIDs: []string{"start", "build", "test", "end"},
		nodes: []nodeWant{
			kt("start", terminator, "Start").lane("Developer"),
			kt("build", process, "Build the release").lane("Developer"),
			kt("test", process, "Test the release").lane("QA"),
			kt("end", terminator, "End").lane("QA"),
		},
		edges: []edgeWant{e("l1", "start", "build", ""), e("l2", "build", "test", ""), e("l3", "test", "end", "")},
	},
	{
		file:   "07_swimlane_columns.json",
		errors: none, warnings: none,
		pages:   j1("ask"),
		nodeIDs: []string{"ask", "answer", "close"},
		nodes: []nodeWant{
			kt("ask", process, "Ask a question").lane("Customer"),
			kt("answer", process, "Answer the question").lane("Support"),
			kt("close", terminator, "Close the ticket").lane("Support"),
		},
		edges: []edgeWant{e("l1", "ask", "answer", ""), e("l2", "answer", "close", "")},
	},
	{
		file:   "07_text_and_data.json",
		errors: none, warnings: none,
		pages:   j1("start"),
		nodeIDs: []string{"start", "deploy", "smoke", "notify", "end"},
		nodes: []nodeWant{
			kt("start", terminator, "Start").group("").metadata(md{}).tags(),
			kt("deploy", process, "Deploy to staging").group("grp1").
				metadata(md{"cli": "gemini", "retries": "1"}).tags(),
			kt("smoke", other, "Smoke test").shape("BPMNActivity").group("grp1").metadata(md{}),
			kt("notify", process, "Notify the team").textAreas("Header", "Notify the team").group("").
				metadata(md{"validate_prompt": "Was the message sent?"}),
		},
		edges: []edgeWant{
			e("l1", "start", "deploy", ""), e("l2", "deploy", "smoke", ""),
			e("l3", "smoke", "notify", ""), e("l4", "notify", "end", ""),
		},
	},

	// ---- rule 8: kinds
	{
		file:   "08_kinds.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7", "8", "9", "10", "11"},
		nodes: []nodeWant{
			n("3").kind(terminator).shape("Terminator"),
			n("4").kind(process).shape("Process"),
			n("5").kind(decision).shape("Decision"),
			n("6").kind(subprocess).shape("Predefined process"),
			n("7").kind(other).shape("Data").text("Write the feature spec"),
			n("8").kind(terminator).shape("TERMINATOR"),
			n("9").kind(process).shape("process"),
			n("10").kind(decision).shape("DECISION"),
			n("11").kind(subprocess).shape("PREDEFINED PROCESS"),
		},
		edges: []edgeWant{
			e("12", "3", "4", ""), e("13", "4", "5", ""), e("14", "5", "6", "bug"), e("15", "5", "7", "feature"),
			e("16", "6", "9", ""), e("17", "7", "9", ""), e("18", "9", "10", ""), e("19", "10", "8", "ok"),
			e("20", "10", "11", "fix"), e("21", "11", "4", ""),
		},
	},
	{
		file:   "08_kinds.json",
		errors: none, warnings: none,
		pages:   j1("t1"),
		nodeIDs: []string{"t1", "p1", "d1", "s1", "o1", "t2"},
		nodes: []nodeWant{
			n("t1").kind(terminator).shape("TerminatorBlock"),
			n("p1").kind(process).shape("ProcessBlock"),
			n("d1").kind(decision).shape("DecisionBlock"),
			n("s1").kind(subprocess).shape("PredefinedProcessBlock"),
			n("o1").kind(other).shape("BPMNActivity"),
			n("t2").kind(terminator).shape("TerminatorBlockV2"),
		},
		edges: []edgeWant{
			e("l1", "t1", "p1", ""), e("l2", "p1", "d1", ""), e("l3", "d1", "s1", "bug"),
			e("l4", "d1", "o1", "feature"), e("l5", "s1", "t2", ""), e("l6", "o1", "t2", ""),
		},
	},

	{
		// A UML class diagram exported in 2020 (groups, a decorative
		// self-line, a loose line, Generalization ends) is one error, not
		// the branch, line and start errors of reading it as a flowchart.
		file:     "08_not_a_flowchart_2020.csv",
		errors:   []diagWant{d(cNotAFlowchart).withHint()},
		warnings: none,
		pages:    []pageWant{pg("1", "Library Catalogue UML Class Diagram", "")},
		nodeIDs:  []string{}, edges: []edgeWant{},
	},
	{
		file:     "08_not_a_flowchart_2022.csv",
		errors:   []diagWant{d(cNotAFlowchart).withHint()},
		warnings: none,
		title:    "BikeRental",
		pages:    p1(""),
		nodeIDs:  []string{}, edges: []edgeWant{},
	},

	// ---- rule 9: annotations
	{
		file:     "09_annotations.csv",
		errors:   none,
		warnings: []diagWant{d(wAnnotation, "3").at(4), d(wAnnotation, "6").at(7)},
		pages:    p1("4"),
		nodeIDs:  []string{"4", "5", "7"},
		nodes:    []nodeWant{kt("7", other, "Release published").shape("Text")},
		edges:    []edgeWant{e("8", "4", "5", ""), e("9", "5", "7", "")},
	},
	{
		file:     "09_annotations.json",
		errors:   none,
		warnings: []diagWant{d(wAnnotation, "title")},
		pages:    j1("start"),
		nodeIDs:  []string{"start", "tag", "done"},
		nodes:    []nodeWant{kt("done", other, "Release published").shape("MinimalTextBlock")},
		edges:    []edgeWant{e("l1", "start", "tag", ""), e("l2", "tag", "done", "")},
	},

	{
		// A shape with no text that no line touches is a leftover, not a
		// second start; an empty shape on the flow is still a step.
		file:   "09_empty_shape.csv",
		errors: none,
		warnings: []diagWant{
			d(wEmptyShape, "4").at(5).withHint(), d(wEmptyShape, "6").at(7),
		},
		pages:   p1("3"),
		nodeIDs: []string{"3", "5", "7", "8"},
		nodes:   []nodeWant{kt("7", process, "").shape("Process")},
		edges:   []edgeWant{e("9", "3", "5", ""), e("10", "5", "7", ""), e("11", "7", "8", "")},
	},
	{
		file:     "09_empty_shape.json",
		errors:   none,
		warnings: []diagWant{d(wEmptyShape, "leftover"), d(wEmptyShape, "hint")},
		pages:    j1("start"),
		nodeIDs:  []string{"start", "clean", "end"},
		edges:    []edgeWant{e("l1", "start", "clean", ""), e("l2", "clean", "end", "")},
	},

	// ---- rule 10: direction from arrowheads
	{
		file:   "10_reversed_line.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5"},
		edges:   []edgeWant{e("6", "3", "4", ""), e("7", "4", "5", "built")},
	},
	{
		file:   "10_reversed_line.json",
		errors: none, warnings: none,
		pages:   j1("start"),
		nodeIDs: []string{"start", "build", "end"},
		edges:   []edgeWant{e("l1", "start", "build", ""), e("l2", "build", "end", "built")},
	},
	{
		file:     "10_bidirectional_line.csv",
		errors:   []diagWant{d(cBidirectional, "9").at(10)},
		warnings: none,
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5", "6"},
		edges:    []edgeWant{e("7", "3", "4", ""), e("8", "4", "5", ""), e("10", "5", "6", "")},
	},
	{
		file:     "10_bidirectional_line.json",
		errors:   []diagWant{d(cBidirectional, "l3")},
		warnings: none,
		pages:    j1("start"),
		nodeIDs:  []string{"start", "a", "b", "end"},
		edges:    []edgeWant{e("l1", "start", "a", ""), e("l2", "a", "b", ""), e("l4", "b", "end", "")},
	},
	{
		file:     "10_no_arrowheads.csv",
		errors:   none,
		warnings: []diagWant{d(wNoArrowheads, "7").at(8), d(wNoArrowheads, "8").at(9)},
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5", "6"},
		edges:    []edgeWant{e("7", "3", "4", ""), e("8", "4", "5", ""), e("9", "5", "6", "")},
	},
	{
		file:   "10_arrow_styles.csv",
		errors: none,
		warnings: []diagWant{
			d(wNoArrowheads, "16").at(17), d(wNoArrowheads, "18").at(19), d(wNoArrowheads, "19").at(20),
		},
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7", "8", "9", "10", "11"},
		edges: []edgeWant{
			e("12", "3", "4", ""), e("13", "4", "5", ""), e("14", "5", "6", ""), e("15", "6", "7", ""),
			e("16", "7", "8", ""), e("17", "8", "9", ""), e("18", "9", "10", ""), e("19", "10", "11", ""),
		},
	},
	{
		file:     "10_arrow_styles.json",
		errors:   none,
		warnings: []diagWant{d(wNoArrowheads, "l4"), d(wNoArrowheads, "l6")},
		pages:    j1("start"),
		nodeIDs:  []string{"start", "a", "b", "c", "d", "e", "end"},
		edges: []edgeWant{
			e("l1", "start", "a", ""), e("l2", "a", "b", ""), e("l3", "b", "c", ""),
			e("l4", "c", "d", ""), e("l5", "d", "e", ""), e("l6", "e", "end", ""),
		},
	},

	// ---- rule 11: endpoints
	{
		file: "11_dangling_line.csv",
		errors: []diagWant{
			d(cDanglingLine, "8").at(9), d(cDanglingLine, "9").at(10), d(cDanglingLine, "10").at(11),
		},
		warnings: none,
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5"},
		edges:    []edgeWant{e("6", "3", "4", ""), e("7", "4", "5", "")},
	},
	{
		file: "11_dangling_line.json",
		errors: []diagWant{
			d(cDanglingLine, "l3"), d(cDanglingLine, "l4"), d(cDanglingLine, "l5"), d(cDanglingLine, "l6"),
		},
		warnings: none,
		pages:    j1("start"),
		nodeIDs:  []string{"start", "work", "end"},
		edges:    []edgeWant{e("l1", "start", "work", ""), e("l2", "work", "end", "")},
	},
	{
		file:   "11_line_to_line.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7", "8"},
		edges: []edgeWant{
			e("9", "3", "4", ""),
			e("10", "5", "6", ""),    // enters line 13 (4 -> 6): goes to 6
			e("11", "4", "7", "log"), // leaves line 13: starts at 4
			e("12", "4", "5", "no"),
			e("13", "4", "6", "yes"),
			e("14", "6", "8", ""),
			e("15", "7", "8", "give up"),
			e("16", "7", "5", "retry"), // reversed, enters line 12 (4 -> 5): goes to 5
		},
	},
	{
		// Lines never cross pages, not even by ending on a line of
		// another page (found by FuzzFromCSV).
		file:     "11_line_to_line_other_page.csv",
		errors:   []diagWant{d(cDanglingLine, "8").at(9)},
		warnings: none,
		pages:    []pageWant{pg("2", "Build", "3"), pg("4", "Release", "5")},
		nodeIDs:  []string{"3", "5", "6"},
		edges:    []edgeWant{e("7", "5", "6", "")},
	},
	{
		file:   "11_line_to_line.json",
		errors: none, warnings: none,
		pages:   j1("start"),
		nodeIDs: []string{"start", "check", "fix", "go", "end"},
		edges: []edgeWant{
			e("l1", "start", "check", ""),
			e("l2", "check", "go", "yes"), // drawn go -> check, head at endpoint1
			e("l3", "fix", "go", ""),      // enters l2: goes to l2's target
			e("l4", "check", "fix", "no"), // leaves l2: starts at l2's source
			e("l5", "go", "end", ""),
		},
	},
	{
		file:     "11_line_to_container.csv",
		errors:   []diagWant{d(cLineToContainer, "13").at(14), d(cLineToContainer, "14").at(15)},
		warnings: none,
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5", "7", "8"},
		nodes: []nodeWant{
			n("4").container("6"), n("5").container("6"),
			n("7").group("15"), n("8").group("15"),
		},
		edges: []edgeWant{e("9", "3", "4", ""), e("10", "4", "5", ""), e("11", "5", "7", ""), e("12", "7", "8", "")},
	},
	{
		file:     "11_line_to_container.json",
		errors:   []diagWant{d(cLineToContainer, "l5"), d(cLineToContainer, "l6")},
		warnings: none,
		pages:    j1("start"),
		nodeIDs:  []string{"start", "one", "two", "archive", "end"},
		nodes:    []nodeWant{n("archive").group("grp"), n("end").group("grp"), n("one").group("")},
		edges: []edgeWant{
			e("l1", "start", "one", ""), e("l2", "one", "two", ""),
			e("l3", "two", "archive", ""), e("l4", "archive", "end", ""),
		},
	},

	{
		file:     "11_line_to_swimlane.csv",
		errors:   []diagWant{d(cLineToContainer, "11").at(12)},
		warnings: none,
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5", "6"},
		nodes: []nodeWant{
			n("3").lane("Author").container("7"), n("4").lane("Author"),
			n("5").lane("Approver"), n("6").lane("Approver").container("7"),
		},
		edges: []edgeWant{e("8", "3", "4", ""), e("9", "4", "5", ""), e("10", "5", "6", "")},
	},

	// ---- rule 12: labels
	{
		file:     "12_line_labels.csv",
		errors:   none,
		warnings: []diagWant{d(wMultipleLabels, "11").at(12), d(wMultipleLabels, "12").at(13)},
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5", "6", "7"},
		edges: []edgeWant{
			e("8", "3", "4", ""),
			e("9", "4", "5", "yes"),
			e("10", "4", "6", "no"),
			e("11", "5", "7", "deployed", "0..1", "*"),
			e("12", "6", "4", "retry", "again"),
		},
	},
	{
		file:     "12_line_labels.json",
		errors:   none,
		warnings: []diagWant{d(wMultipleLabels, "l4")},
		pages:    j1("start"),
		nodeIDs:  []string{"start", "green", "deploy", "fix", "end"},
		edges: []edgeWant{
			e("l1", "start", "green", ""),
			e("l2", "green", "deploy", "yes"),
			e("l3", "green", "fix", "no"),
			e("l4", "deploy", "end", "deployed", "1..*"),
			e("l5", "fix", "green", ""),
		},
	},

	// ---- rule 13: duplicate lines
	{
		file:     "13_duplicate_line.csv",
		errors:   none,
		warnings: []diagWant{d(wDuplicateLine, "9").at(10), d(wDuplicateLine, "12").at(13)},
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5", "6", "7"},
		edges: []edgeWant{
			e("8", "3", "4", ""), e("10", "4", "5", "yes"), e("11", "4", "6", "no"),
			e("13", "5", "7", ""), e("14", "6", "7", ""), e("15", "4", "6", "unknown"),
		},
	},
	{
		file:     "13_duplicate_line.json",
		errors:   none,
		warnings: []diagWant{d(wDuplicateLine, "l2"), d(wDuplicateLine, "l5")},
		pages:    j1("start"),
		nodeIDs:  []string{"start", "hit", "serve", "fetch", "end"},
		edges: []edgeWant{
			e("l1", "start", "hit", ""), e("l3", "hit", "serve", "yes"), e("l4", "hit", "fetch", "no"),
			e("l6", "serve", "end", ""), e("l7", "fetch", "end", ""),
		},
	},

	// ---- rule 14: branches
	{
		file:     "14_unlabeled_branch.csv",
		errors:   []diagWant{d(cUnlabeledBranch, "4"), d(cUnlabeledBranch, "7"), d(cUnlabeledBranch, "7")},
		warnings: none,
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5", "6", "7", "8", "9", "10"},
		edges: []edgeWant{
			e("11", "3", "4", ""), e("12", "4", "5", "staging"), e("13", "4", "6", ""),
			e("14", "5", "7", ""), e("15", "6", "7", ""), e("16", "7", "8", ""), e("17", "7", "9", ""),
			e("18", "8", "10", ""), e("19", "9", "10", ""),
		},
	},
	{
		file:     "14_duplicate_branch_label.csv",
		errors:   []diagWant{d(cDuplicateLabel, "4"), d(cDuplicateLabel, "7")},
		warnings: none,
		pages:    p1("3"),
		nodeIDs:  []string{"3", "4", "5", "6", "7", "8", "9", "10"},
		edges: []edgeWant{
			e("11", "3", "4", ""), e("12", "4", "5", "Yes"), e("13", "4", "6", "yes"),
			e("14", "5", "7", ""), e("15", "6", "10", ""), e("16", "7", "8", "Not  sure"),
			e("17", "7", "9", "not sure"), e("18", "8", "9", ""), e("19", "9", "10", ""),
		},
	},
	{
		file:     "14_branches.json",
		errors:   []diagWant{d(cUnlabeledBranch, "env"), d(cDuplicateLabel, "ready")},
		warnings: none,
		pages:    j1("start"),
		nodeIDs:  []string{"start", "env", "stg", "prd", "ready", "post", "wait", "end"},
		edges: []edgeWant{
			e("l1", "start", "env", ""), e("l2", "env", "stg", "staging"), e("l3", "env", "prd", ""),
			e("l4", "stg", "ready", ""), e("l5", "prd", "ready", ""), e("l6", "ready", "post", "Yes"),
			e("l7", "ready", "wait", "yes"), e("l8", "post", "end", ""), e("l9", "wait", "end", ""),
		},
	},

	// ---- rule 15: empty charts, roots, pages, graphs
	{
		file:   "15_empty_chart.csv",
		errors: []diagWant{d(cEmptyChart)}, warnings: none,
		nodeIDs: []string{}, edges: []edgeWant{},
	},
	{
		file:   "15_empty_chart.json",
		errors: []diagWant{d(cEmptyChart)}, warnings: none,
		nodeIDs: []string{}, edges: []edgeWant{},
	},
	{
		file:   "15_zero_pages.json",
		errors: []diagWant{d(cEmptyChart)}, warnings: none,
		pages: []pageWant{}, nodeIDs: []string{}, edges: []edgeWant{},
	},
	{
		file:     "15_only_annotation.csv",
		errors:   []diagWant{d(cEmptyChart)},
		warnings: []diagWant{d(wAnnotation, "3").at(4)},
		nodeIDs:  []string{}, edges: []edgeWant{},
	},
	{
		file:     "15_ambiguous_root.csv",
		errors:   []diagWant{d(cAmbiguousRoot, "3", "4")},
		warnings: none,
		pages:    p1(""),
		nodeIDs:  []string{"3", "4", "5", "6"},
		edges:    []edgeWant{e("7", "3", "5", ""), e("8", "4", "5", ""), e("9", "5", "6", "")},
	},
	{
		file:     "15_no_root.csv",
		errors:   []diagWant{d(cNoRoot)},
		warnings: none,
		pages:    p1(""),
		nodeIDs:  []string{"3", "4", "5"},
		edges:    []edgeWant{e("6", "3", "4", ""), e("7", "4", "5", ""), e("8", "5", "3", "")},
	},
	{
		file:   "15_self_loop.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4"},
		edges:   []edgeWant{e("5", "3", "3", "pending"), e("6", "3", "4", "finished")},
	},
	{
		file:   "15_two_pages.csv",
		errors: none, warnings: none,
		pages:   []pageWant{pg("2", "Build", "3"), pg("8", "Deploy", "9")},
		nodeIDs: []string{"3", "4", "5", "9", "10", "11", "12"},
		nodes: []nodeWant{
			n("3").page("2"), n("4").page("2"), n("5").page("2"),
			n("9").page("8"), n("10").page("8"), n("11").page("8"), n("12").page("8"),
		},
		edges: []edgeWant{
			e("6", "3", "4", ""), e("7", "4", "5", ""),
			e("13", "9", "10", ""), e("14", "10", "12", "yes"), e("15", "10", "11", "no"),
		},
	},
	{
		file:   "15_merge_and_loop.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3", "4", "5", "6", "7", "8", "9"},
		edges: []edgeWant{
			e("10", "3", "4", ""), e("11", "4", "5", "yes"), e("12", "4", "6", "no"),
			e("13", "5", "7", ""), e("14", "6", "7", ""), // merge on 7
			e("15", "7", "8", ""), e("16", "8", "9", "yes"),
			e("17", "8", "4", "no"), // loop back to 4
		},
	},
	{
		file:   "15_merge_and_loop.json",
		errors: none, warnings: none,
		pages:   j1("Qx7~b2L/9+aZ"),
		nodeIDs: []string{"Qx7~b2L/9+aZ", "84GzSX6QMTZ8", "84Gz3k4bEXW_", "84Gz9NO0nuD4", "84Gzy0VMSlIS", "84GziSJ_J~Qu", "84GzrAt7kXoH"},
		edges: []edgeWant{
			e("84GzGlvt4LA~", "Qx7~b2L/9+aZ", "84GzSX6QMTZ8", ""),
			e("84GzZWN-Glo7", "84GzSX6QMTZ8", "84Gz3k4bEXW_", "yes"),
			e("84Gz4rZog_bE", "84GzSX6QMTZ8", "84Gz9NO0nuD4", "no"),
			e("84GzoHRb0Zg_", "84Gz3k4bEXW_", "84Gzy0VMSlIS", ""),
			e("84Gz-wsWOM-8", "84Gz9NO0nuD4", "84Gzy0VMSlIS", ""),
			e("84GzYZEnrnVB", "84Gzy0VMSlIS", "84GziSJ_J~Qu", ""),
			e("84GzVmPCl9-A", "84GziSJ_J~Qu", "84GzrAt7kXoH", "yes"),
			e("84GzCqfc1IMv", "84GziSJ_J~Qu", "84GzSX6QMTZ8", "no"),
		},
	},
	{
		file:   "15_single_node.csv",
		errors: none, warnings: none,
		pages:   p1("3"),
		nodeIDs: []string{"3"},
		nodes:   []nodeWant{kt("3", process, "Say hello")},
		edges:   []edgeWant{},
	},
	{
		file:   "15_single_node.json",
		errors: none, warnings: none,
		pages:   j1("hello"),
		nodeIDs: []string{"hello"},
		nodes:   []nodeWant{kt("hello", process, "Say hello")},
		edges:   []edgeWant{},
	},
	{
		file:     "15_per_page_roots.json",
		errors:   []diagWant{d(cNoRoot), d(cAmbiguousRoot, "c1", "c2")},
		warnings: none,
		pages: []pageWant{
			pg("pg_ok", "Fine", "a1"), pg("pg_cycle", "Cycle", ""),
			pg("pg_two", "Two starts", ""), pg("pg_self", "Self loop", "d1"),
		},
		nodeIDs: []string{"a1", "a2", "b1", "b2", "c1", "c2", "c3", "d1", "d2"},
		nodes:   []nodeWant{n("a1").page("pg_ok"), n("b1").page("pg_cycle"), n("c3").page("pg_two"), n("d2").page("pg_self")},
		edges: []edgeWant{
			e("al1", "a1", "a2", ""), e("bl1", "b1", "b2", ""), e("bl2", "b2", "b1", ""),
			e("cl1", "c1", "c3", ""), e("cl2", "c2", "c3", ""),
			e("dl1", "d1", "d1", "pending"), e("dl2", "d1", "d2", "finished"),
		},
	},
}

func TestRules(t *testing.T) {
	t.Parallel()
	for _, tc := range ruleCases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			doc := importChart(t, tc.file)
			isCSV := filepath.Ext(tc.file) == ".csv"
			checkInvariants(t, doc, isCSV)

			checkDiagnostics(t, "errors", tc.errors, doc.Errors)
			checkDiagnostics(t, "warnings", tc.warnings, doc.Warnings)

			if tc.title != "" {
				assert.Equal(t, tc.title, doc.Title, "document title")
			}
			if tc.pages != nil {
				got := make([]pageWant, 0, len(doc.Pages))
				for _, p := range doc.Pages {
					got = append(got, pageWant{p.ID, p.Title, p.Root})
				}
				assert.Equal(t, tc.pages, got, "pages (id, title, root), in order")
			}
			if tc.nodeIDs != nil {
				got := make([]string, 0, len(doc.Nodes))
				for _, nd := range doc.Nodes {
					got = append(got, nd.ID)
				}
				if tc.nodeSet {
					assert.ElementsMatch(t, tc.nodeIDs, got, "node ids")
				} else {
					assert.Equal(t, tc.nodeIDs, got, "node ids, in source order")
				}
			}
			for _, w := range tc.nodes {
				checkNode(t, doc, w)
			}
			if tc.edges != nil {
				got := make([]edgeWant, 0, len(doc.Edges))
				for _, ed := range doc.Edges {
					got = append(got, edgeWant{ed.ID, ed.From, ed.To, ed.Label, nilIfEmpty(ed.ExtraLabels)})
				}
				want := make([]edgeWant, 0, len(tc.edges))
				for _, ed := range tc.edges {
					ed.Extra = nilIfEmpty(ed.Extra)
					want = append(want, ed)
				}
				if tc.edgeSet {
					assert.ElementsMatch(t, want, got, "edges (id, from, to, label, extra labels)")
				} else {
					assert.Equal(t, want, got, "edges (id, from, to, label, extra labels), in source order")
				}
			}
			for id, line := range tc.edgeLines {
				i := slices.IndexFunc(doc.Edges, func(ed types.Edge) bool { return ed.ID == id })
				if assert.GreaterOrEqual(t, i, 0, "edge %s missing", id) {
					assert.Equal(t, line, doc.Edges[i].Line, "edge %s: line its row starts on", id)
				}
			}
		})
	}
}

// TestRulesEveryChartHasARow keeps testdata/charts/rules, ruleCases and the
// README in step: a new chart cannot go untested or undocumented.
func TestRulesEveryChartHasARow(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(rulesDir)
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(rulesDir, "README.md"))
	require.NoError(t, err, "testdata/charts/rules/README.md describes every chart")

	rows := map[string]bool{}
	for _, tc := range ruleCases {
		assert.False(t, rows[tc.file], "two rows for %s", tc.file)
		rows[tc.file] = true
	}
	name := regexp.MustCompile(`^(0[1-9]|1[0-5])_[a-z0-9_]+\.(csv|json)$`)
	onDisk := map[string]bool{}
	for _, ent := range entries {
		if ent.Name() == "README.md" {
			continue
		}
		onDisk[ent.Name()] = true
		assert.False(t, ent.IsDir(), "%s: no directories here", ent.Name())
		assert.Regexp(t, name, ent.Name(), "charts are named NN_what.csv|json, NN the §9 rule")
		assert.True(t, rows[ent.Name()], "chart %s has no row in ruleCases", ent.Name())
		assert.Contains(t, string(readme), "`"+ent.Name()+"`", "README.md does not describe %s", ent.Name())
	}
	for f := range rows {
		assert.True(t, onDisk[f], "ruleCases row %s has no chart file", f)
	}
}

func importChart(t *testing.T, name string) *types.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(rulesDir, name))
	require.NoError(t, err)
	var doc *types.Document
	switch filepath.Ext(name) {
	case ".csv":
		doc, err = document.FromCSV(bytes.NewReader(data))
	case ".json":
		doc, err = document.FromJSON(bytes.NewReader(data))
	default:
		t.Fatalf("%s: no importer for this extension", name)
	}
	require.NoError(t, err, "the error return is for I/O failures only; chart problems go to doc.Errors")
	require.NotNil(t, doc)
	return doc
}

// checkInvariants asserts what holds for every imported document, whatever
// the chart: arrays never nil, diagnostics well formed, edges between nodes
// of one page, roots on their page, lines only for CSV.
func checkInvariants(t *testing.T, doc *types.Document, isCSV bool) {
	t.Helper()
	assert.NotNil(t, doc.Pages, "Pages is never nil")
	assert.NotNil(t, doc.Nodes, "Nodes is never nil")
	assert.NotNil(t, doc.Edges, "Edges is never nil")
	assert.NotNil(t, doc.Errors, "Errors is never nil")
	assert.NotNil(t, doc.Warnings, "Warnings is never nil")

	checkDiagShape := func(kind string, classes []string, ds []types.Diagnostic) {
		for _, dg := range ds {
			assert.Contains(t, classes, dg.Class, "%s: unknown class %q", kind, dg.Class)
			assert.NotEmpty(t, dg.Message, "%s %s: Message", kind, dg.Class)
			assert.NotNil(t, dg.IDs, "%s %s: IDs is never nil", kind, dg.Class)
			if len(dg.IDs) > 0 {
				assert.Equal(t, dg.IDs[0], dg.ID, "%s %s: ID is the first of IDs", kind, dg.Class)
			}
			switch {
			case !isCSV && dg.Class == cMalformedJSON:
				// A syntax error carries its line; valid JSON of the wrong
				// shape has none to give.
			case !isCSV:
				assert.Zero(t, dg.Line, "%s %s: JSON diagnostics have no line", kind, dg.Class)
			}
		}
	}
	checkDiagShape("error", errorClasses, doc.Errors)
	checkDiagShape("warning", warningClasses, doc.Warnings)

	pages := map[string]bool{}
	for _, p := range doc.Pages {
		assert.False(t, pages[p.ID], "page %s appears twice", p.ID)
		pages[p.ID] = true
	}
	nodes := map[string]types.Node{}
	for _, nd := range doc.Nodes {
		_, dup := nodes[nd.ID]
		assert.False(t, dup, "node %s appears twice", nd.ID)
		nodes[nd.ID] = nd
		assert.True(t, pages[nd.Page], "node %s: page %q is not a page of the document", nd.ID, nd.Page)
		assert.Contains(t, []string{terminator, process, decision, subprocess, other}, nd.Kind, "node %s: kind", nd.ID)
		assert.NotNil(t, nd.TextAreas, "node %s: TextAreas is never nil", nd.ID)
		assert.NotNil(t, nd.Tags, "node %s: Tags is never nil", nd.ID)
		assert.NotNil(t, nd.Comments, "node %s: Comments is never nil", nd.ID)
		// A node without custom data may hold a nil map (types.Metadata), but
		// it must still read as an object, never null.
		if mj, err := json.Marshal(nd.Metadata); assert.NoError(t, err) {
			assert.True(t, strings.HasPrefix(string(mj), "{"), "node %s: metadata must marshal as an object, got %s", nd.ID, mj)
		}
		if isCSV {
			assert.Positive(t, nd.Line, "node %s: CSV nodes carry their row's line", nd.ID)
		} else {
			assert.Zero(t, nd.Line, "node %s: JSON nodes have no line", nd.ID)
		}
	}
	edges := map[string]bool{}
	for _, ed := range doc.Edges {
		assert.False(t, edges[ed.ID], "edge %s appears twice", ed.ID)
		edges[ed.ID] = true
		assert.NotNil(t, ed.ExtraLabels, "edge %s: ExtraLabels is never nil", ed.ID)
		from, okFrom := nodes[ed.From]
		to, okTo := nodes[ed.To]
		assert.True(t, okFrom, "edge %s: from %q is not a node", ed.ID, ed.From)
		assert.True(t, okTo, "edge %s: to %q is not a node", ed.ID, ed.To)
		if okFrom && okTo {
			assert.Equal(t, from.Page, ed.Page, "edge %s: page is its nodes' page", ed.ID)
			assert.Equal(t, to.Page, ed.Page, "edge %s: lines never cross pages", ed.ID)
		}
		if isCSV {
			assert.Positive(t, ed.Line, "edge %s: CSV edges carry their row's line", ed.ID)
		} else {
			assert.Zero(t, ed.Line, "edge %s: JSON edges have no line", ed.ID)
		}
	}
	for _, p := range doc.Pages {
		if p.Root == "" {
			continue
		}
		root, ok := nodes[p.Root]
		if assert.True(t, ok, "page %s: root %q is not a node", p.ID, p.Root) {
			assert.Equal(t, p.ID, root.Page, "page %s: root %q is on another page", p.ID, p.Root)
		}
	}
}

// checkDiagnostics compares the classes exactly as a multiset, then finds for
// every expected diagnostic a distinct actual one of its class that names
// its ids (and starts on its line, and has a hint, when asked).
func checkDiagnostics(t *testing.T, kind string, want []diagWant, got []types.Diagnostic) {
	t.Helper()
	if want == nil {
		return
	}
	wantClasses := make([]string, 0, len(want))
	for _, w := range want {
		wantClasses = append(wantClasses, w.class)
	}
	gotClasses := make([]string, 0, len(got))
	for _, g := range got {
		gotClasses = append(gotClasses, g.Class)
	}
	if !assert.ElementsMatch(t, wantClasses, gotClasses, "%s: classes\n%s", kind, dumpDiags(got)) {
		return
	}
	fits := func(w diagWant, g types.Diagnostic) bool {
		if w.class != g.Class || (w.line != 0 && w.line != g.Line) || (w.hint && g.Hint == "") {
			return false
		}
		for _, id := range w.ids {
			if !slices.Contains(g.IDs, id) {
				return false
			}
		}
		// Most relevant id first: the line for a line problem, the node
		// for a node problem.
		if leadingID[w.class] && len(w.ids) > 0 && (len(g.IDs) == 0 || g.IDs[0] != w.ids[0]) {
			return false
		}
		return true
	}
	used := make([]bool, len(got))
	var match func(i int) bool
	match = func(i int) bool {
		if i == len(want) {
			return true
		}
		for j, g := range got {
			if !used[j] && fits(want[i], g) {
				used[j] = true
				if match(i + 1) {
					return true
				}
				used[j] = false
			}
		}
		return false
	}
	if !match(0) {
		var b strings.Builder
		for _, w := range want {
			fmt.Fprintf(&b, "  %s ids⊇%v", w.class, w.ids)
			if leadingID[w.class] && len(w.ids) > 0 {
				fmt.Fprintf(&b, " first=%s", w.ids[0])
			}
			if w.line != 0 {
				fmt.Fprintf(&b, " line=%d", w.line)
			}
			if w.hint {
				b.WriteString(" with hint")
			}
			b.WriteString("\n")
		}
		t.Errorf("%s: no one-to-one match of expected diagnostics\nwant:\n%sgot:\n%s", kind, b.String(), dumpDiags(got))
	}
}

func dumpDiags(ds []types.Diagnostic) string {
	var b strings.Builder
	for _, dg := range ds {
		fmt.Fprintf(&b, "  %s ids=%v line=%d message=%q hint=%q\n", dg.Class, dg.IDs, dg.Line, dg.Message, dg.Hint)
	}
	if b.Len() == 0 {
		return "  (none)\n"
	}
	return b.String()
}

func checkNode(t *testing.T, doc *types.Document, w nodeWant) {
	t.Helper()
	i := slices.IndexFunc(doc.Nodes, func(nd types.Node) bool { return nd.ID == w.id })
	if !assert.GreaterOrEqual(t, i, 0, "node %s is missing", w.id) {
		return
	}
	got := doc.Nodes[i]
	for _, k := range slices.Sorted(maps.Keys(w.fields)) {
		v := w.fields[k]
		msg := fmt.Sprintf("node %s: %s", w.id, k)
		switch k {
		case "kind":
			assert.Equal(t, v, got.Kind, msg)
		case "shape":
			assert.Equal(t, v, got.Shape, msg)
		case "text":
			assert.Equal(t, v, got.Text, msg)
		case "lane":
			assert.Equal(t, v, got.Lane, msg)
		case "container":
			assert.Equal(t, v, got.Container, msg)
		case "group":
			assert.Equal(t, v, got.Group, msg)
		case "page":
			assert.Equal(t, v, got.Page, msg)
		case "line":
			assert.Equal(t, v, got.Line, msg)
		case "tags":
			assert.Equal(t, nilIfEmpty(v.([]string)), nilIfEmpty(got.Tags), msg)
		case "text_areas":
			assert.Equal(t, nilIfEmpty(v.([]string)), nilIfEmpty(got.TextAreas), msg)
		case "comments":
			assert.Equal(t, nilIfEmpty(v.([]string)), nilIfEmpty(got.Comments), msg)
		case "metadata":
			want, have := v.(map[string]string), map[string]string(got.Metadata)
			if len(want) == 0 {
				assert.Empty(t, have, msg)
			} else {
				assert.Equal(t, want, have, msg)
			}
		default:
			t.Fatalf("unknown node field %q", k)
		}
	}
}

// nilIfEmpty lets an empty list compare equal to a nil one; that lists are
// never nil is checkInvariants' business.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
