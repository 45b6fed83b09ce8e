package ci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// GitHub Actions reads workflow commands from a step's output
// (readme/ci.md#github-actions): a line that starts with "::" is one.
// Everything dtree prints there from a chart or an agent is either
// escaped into a command's data, or printed between ::stop-commands::
// and its token, so that no text an agent wrote can issue a command.

// maxAnnotation bounds an annotation's message.
const maxAnnotation = 4 << 10

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// Where places an annotation on a file's line; a zero Where places it on
// the run.
type Where struct {
	File string
	Line int
}

// Annotation is a workflow command line that annotates the run: level is
// error, warning or notice.
func Annotation(level string, at Where, title, msg string) string {
	var props []string
	if at.File != "" && at.File != "-" {
		props = append(props, "file="+escapeProperty(at.File))
		if at.Line > 0 {
			props = append(props, "line="+strconv.Itoa(at.Line))
		}
	}
	if title != "" {
		props = append(props, "title="+escapeProperty(types.Excerpt(title, 200)))
	}
	head := "::" + level
	if len(props) > 0 {
		head += " " + strings.Join(props, ",")
	}
	if len(msg) > maxAnnotation {
		msg = strings.ToValidUTF8(msg[:maxAnnotation], "") + "…"
	}
	return head + "::" + escapeData(msg) + "\n"
}

// GroupStart opens a folded group in the log, titled on one line.
func GroupStart(title string) string {
	return "::group::" + escapeData(strings.ReplaceAll(strings.ReplaceAll(title, "\r", " "), "\n", " ")) + "\n"
}

// GroupEnd closes the group GroupStart opened.
const GroupEnd = "::endgroup::\n"

// Verbatim is text printed as it is, with workflow commands stopped
// around it: its token is the text's own SHA-256, which the text cannot
// hold.
func Verbatim(text string) string {
	if text == "" {
		return ""
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	sum := sha256.Sum256([]byte(text))
	token := "dtree-" + hex.EncodeToString(sum[:16])
	return "::stop-commands::" + token + "\n" + text + "::" + token + "::\n"
}

// MermaidLimit is the longest diagram GitHub draws: Mermaid's
// maxTextSize.
const MermaidLimit = 50000

// Picture is the Mermaid diagram of a run for its job summary: the page it
// walked with the path marked. A page too large for GitHub to draw is
// drawn with the nodes the run visited only, and note says so; when even
// that is too large, the diagram is "" and note says why.
func Picture(ctx context.Context, doc *types.Document, trace *export.Trace, mask func(string) string) (diagram, note string, err error) {
	o := export.PictureOptions{Page: trace.Page, Trace: trace, Mask: mask}
	var b bytes.Buffer
	if err := export.Mermaid(ctx, &b, doc, o); err != nil {
		return "", "", err
	}
	if b.Len() <= MermaidLimit {
		return b.String(), "", nil
	}
	whole := b.Len()
	b.Reset()
	if err := export.Mermaid(ctx, &b, visitedOnly(doc, trace), o); err != nil {
		return "", "", err
	}
	if b.Len() <= MermaidLimit {
		return b.String(), fmt.Sprintf("The page is too large for GitHub to draw (%d characters of Mermaid, over %d): this is the run's path alone; graph.svg in the run's directory has the whole page.", whole, MermaidLimit), nil
	}
	return "", fmt.Sprintf("The run's path is too large for GitHub to draw (%d characters of Mermaid, over %d); graph.svg in the run's directory has it.", b.Len(), MermaidLimit), nil
}

// AuthorPicture is the run drawn onto the author's own Mermaid text, src
// (export.MermaidOnto), for the job summary of a run of a Mermaid chart:
// the diagram GitHub draws in the chart's README, with the path on it.
// known says which node ids the page has; links are its links, to mark
// those the run took (nil: none). It is "" when that cannot be
// shown, and note then says why and that dtree's own drawing (Picture)
// is shown instead: the text is over GitHub's limit, the text no longer
// has a node of the run, or it holds a value mask hides (the text is
// shown whole or not at all: a masked id would no longer parse).
func AuthorPicture(src []byte, trace *export.Trace, known func(string) bool, links []export.MermaidLink, mask func(string) string) (diagram, note string) {
	const instead = "; this is dtree's drawing of the run instead."
	if len(src) > MermaidLimit {
		return "", fmt.Sprintf("The chart's Mermaid is too large for GitHub to draw (%d characters, over %d)%s", len(src), MermaidLimit, instead)
	}
	var b bytes.Buffer
	onto, err := export.MermaidOntoLinks(&b, src, trace, known, links)
	switch {
	case err != nil:
		return "", "The run could not be drawn onto the chart's Mermaid: " + err.Error() + instead
	case len(onto.Missing) > 0:
		return "", fmt.Sprintf("The chart's Mermaid no longer has node %s of the run (it changed while the run ran)%s", onto.Missing[0], instead)
	case b.Len() > MermaidLimit:
		return "", fmt.Sprintf("The chart's Mermaid with the run on it is too large for GitHub to draw (%d characters, over %d)%s", b.Len(), MermaidLimit, instead)
	}
	out := b.String()
	if mask != nil && mask(out) != out {
		return "", "The chart's Mermaid holds the value of a secret, which the summary does not show" + instead
	}
	if len(onto.Unnamed) > 0 {
		note = fmt.Sprintf("Node %s of the run is not marked: Mermaid's class lines cannot name its id.", onto.Unnamed[0])
	}
	return out, note
}

// fence is the code fence that holds text: three backticks, or one more
// than the longest run of them in text, so that no line of the text
// closes it (CommonMark: a closing fence is at least as long as the
// opening one).
func fence(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// visitedOnly is doc's page with only the nodes the run entered and the
// edges it took.
func visitedOnly(doc *types.Document, trace *export.Trace) *types.Document {
	d := &types.Document{FormatVersion: doc.FormatVersion, Title: doc.Title, Source: doc.Source, Format: doc.Format}
	for _, p := range doc.Pages {
		if p.ID == trace.Page {
			d.Pages = append(d.Pages, p)
		}
	}
	for _, n := range doc.Nodes {
		if n.Page == trace.Page && trace.Visits[n.ID] > 0 {
			d.Nodes = append(d.Nodes, n)
		}
	}
	taken := map[[2]string]bool{}
	for _, s := range trace.Steps {
		taken[[2]string{s.From, s.To}] = true
	}
	for _, e := range doc.Edges {
		if e.Page == trace.Page && taken[[2]string{e.From, e.To}] {
			d.Edges = append(d.Edges, e)
		}
	}
	return d
}

// Summary is what a run's job summary shows besides its summary.
type Summary struct {
	Report
	// Diagram is the run's picture in Mermaid (dtree's, or the author's
	// own text with the run on it: AuthorPicture); Note says why it is
	// missing or partial.
	Diagram, Note string
}

// maxRows bounds the summary's table of steps: GitHub takes 1 MiB of
// summary a step.
const maxRows = 200

// maxSummary bounds a job summary: GitHub drops a step's summary over
// 1 MiB whole. Each part is bounded (maxName, maxRows, MermaidLimit, …)
// far below it; whatever passes still is cut here, with a note.
const maxSummary = 1<<20 - 4<<10

// maxName bounds a name or a path the summary quotes: a chart's title,
// its file, the logs' directory.
const maxName = 200

// bounded is summary text cut, at a line's end, to fit maxSummary, with a
// note saying so when it was.
func bounded(s string) string {
	if len(s) <= maxSummary {
		return s
	}
	cut := strings.LastIndexByte(s[:maxSummary-200], '\n') + 1
	return s[:cut] + fmt.Sprintf("\n*The summary was cut at %d of its %d bytes: GitHub takes 1 MiB. short.json in the run's directory has the whole run.*\n\n", cut, len(s))
}

// StepSummary writes a run's job summary in GitHub's Markdown: its
// outcome, its path as a Mermaid diagram, a table of its steps and where
// its logs are.
func StepSummary(w io.Writer, sum *run.Summary, s Summary) error {
	var b strings.Builder
	name := suiteName(sum, s.Chart)
	fmt.Fprintf(&b, "### %s dtree: %s — %s\n\n", mark(sum.Status), md(types.Excerpt(s.mask(name), maxName)), md(strings.ReplaceAll(sum.Status, "_", " ")))
	what := []string{types.Plural(sum.Steps(), "step"), Duration(sum.DurationMS)}
	if r := sum.Resumed; r != nil && r.Steps > 0 { // their time is not the run's
		what = []string{types.Plural(sum.Steps()-r.Steps, "step"), Duration(sum.DurationMS),
			fmt.Sprintf("%d taken from run %s (%s)", r.Steps, code(r.From), Duration(r.DurationMS))}
	}
	if u := Usage(sum.Usage); u != "" {
		what = append(what, u)
	}
	if sum.Change != nil {
		what = append(what, "changed: "+md(ChangeBrief(sum.Change)))
	}
	fmt.Fprintf(&b, "Run %s of %s: %s.\n\n", code(types.Excerpt(sum.RunID, maxName)), code(types.Excerpt(s.mask(s.Chart), maxName)), strings.Join(what, " · "))
	if sum.Status != run.StatusSucceeded && sum.Error != "" {
		first, _, _ := strings.Cut(s.mask(sum.Error), "\n")
		fmt.Fprintf(&b, "> %s\n\n", md(types.Excerpt(first, 500)))
	}
	if sum.Status == run.StatusWaiting {
		b.WriteString(waiting(sum, s))
	}
	if s.Diagram != "" {
		f := fence(s.Diagram) // the author's own Mermaid may hold backticks
		b.WriteString(f + "mermaid\n" + s.Diagram)
		if !strings.HasSuffix(s.Diagram, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(f + "\n\n")
	}
	if s.Note != "" {
		b.WriteString(md(types.Excerpt(s.Note, 1000)) + "\n\n")
	}
	if sum.NodesLeftOut > 0 { // a long run keeps its newest steps (run.KeptSteps)
		fmt.Fprintf(&b, "The first %s are in events.jsonl only.\n\n", types.Plural(sum.NodesLeftOut, "step"))
	}
	changes := false // a column of what each step changed, when recorded
	for i := range sum.Nodes {
		changes = changes || sum.Nodes[i].Change != nil
	}
	if len(sum.Nodes) > 0 {
		if changes {
			b.WriteString("| # | Step | Status | Time | Attempts | Tokens | Cost | Changed |\n")
			b.WriteString("|---:|---|---|---:|---:|---:|---:|---|\n")
		} else {
			b.WriteString("| # | Step | Status | Time | Attempts | Tokens | Cost |\n")
			b.WriteString("|---:|---|---|---:|---:|---:|---:|\n")
		}
		for i := range sum.Nodes {
			if i == maxRows {
				fmt.Fprintf(&b, "\n%s more in events.jsonl.\n", types.Plural(len(sum.Nodes)-maxRows, "step")) // short.json keeps the newest 200
				break
			}
			n := &sum.Nodes[i]
			status := mark(n.Status) + " " + strings.ReplaceAll(n.Status, "_", " ")
			if n.Label != "" {
				status += " → " + md(s.mask(types.Excerpt(n.Label, 60)))
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %d | %s | %s |", sum.NodesLeftOut+i+1, md(s.mask(CaseName(n))), status,
				Duration(n.DurationMS), 1+n.Retries, dash(Tokens(n.Usage)), dash(Cost(n.Usage)))
			if changes {
				changed := "—"
				if !n.Change.Empty() {
					changed = md(ChangeBrief(n.Change))
				}
				b.WriteString(" " + changed + " |")
			}
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	b.WriteString(toolSummary(sum, s))
	b.WriteString(changeSummary(sum, s))
	if sum.Logs.Dir != "" {
		files := []string{}
		for _, f := range []string{sum.Logs.Events, sum.Logs.Short, sum.Logs.Long, sum.Logs.Answers, sum.Logs.Graph} {
			if f != "" {
				files = append(files, code(types.Excerpt(s.mask(baseName(f)), maxName)))
			}
		}
		fmt.Fprintf(&b, "Logs: %s (%s).", code(types.Excerpt(s.mask(sum.Logs.Dir), maxName)), strings.Join(files, ", "))
		if sum.Status != run.StatusSucceeded && sum.Status != run.StatusWaiting {
			fmt.Fprintf(&b, " Go on from where it stopped: %s.", code("dtree resume "+types.Excerpt(sum.RunID, maxName)))
		}
		if !sum.Change.Empty() {
			fmt.Fprintf(&b, " What it changed: %s.", code("dtree diff "+types.Excerpt(sum.RunID, maxName)))
		}
		b.WriteString("\n\n")
	}
	_, err := io.WriteString(w, bounded(b.String()))
	return err
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return strings.TrimSuffix(s, " tokens")
}

// mark is a status's sign.
func mark(status string) string {
	switch status {
	case run.StatusSucceeded:
		return "✅"
	case run.StatusInterrupted:
		return "⏹️"
	case run.StatusLimit, run.StatusBudget:
		return "⚠️"
	case run.StatusWaiting:
		return "⏸️"
	}
	return "❌"
}

// waiting says which gate a run waits at and the commands that answer it
// (readme/ci.md#approval-gates).
func waiting(sum *run.Summary, s Summary) string {
	gate := ""
	for i := len(sum.Nodes) - 1; i >= 0; i-- {
		if sum.Nodes[i].Status == run.StatusWaiting {
			gate = md(s.mask(CaseName(&sum.Nodes[i])))
			break
		}
	}
	id := types.Excerpt(sum.RunID, maxName)
	return fmt.Sprintf("**Waiting for approval** at %s — approve: %s; reject: %s\n\n", gate,
		code("dtree resume "+id+" --approve"), code("dtree resume "+id+" --reject --reason \"why\""))
}

// md escapes text for GitHub's Markdown, on one line: each ASCII
// punctuation character that could start markup (emphasis, code, links,
// HTML, tables, math, mentions) is backslash-escaped, and line breaks are
// spaces.
func md(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
			// a control character shows as nothing useful
		case strings.ContainsRune("\\`*_{}[]<>()#+-!|~@&$^=\"'", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// code is s as inline code when it can be one (no backtick, one line),
// else escaped text.
func code(s string) string {
	if s == "" || strings.ContainsAny(s, "`\n\r") {
		return md(s)
	}
	return "`" + s + "`"
}

// maxDetails bounds the findings a not-run summary lists.
const maxDetails = 50

// NotRunSummary writes the job summary of a run that never started: why,
// and the chart's findings that stopped it.
func NotRunSummary(w io.Writer, chart, reason string, details []string, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### ❌ dtree: %s — not run\n\n", md(types.Excerpt(r.mask(chart), maxName)))
	first, _, _ := strings.Cut(r.mask(reason), "\n")
	fmt.Fprintf(&b, "> %s\n\n", md(types.Excerpt(first, 500)))
	for i, d := range details {
		if i == maxDetails {
			fmt.Fprintf(&b, "\n%s more: `dtree lint` lists them.\n", types.Plural(len(details)-maxDetails, "finding"))
			break
		}
		fmt.Fprintf(&b, "- %s\n", md(r.mask(types.Excerpt(d, 500))))
	}
	if len(details) > 0 {
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, bounded(b.String()))
	return err
}
