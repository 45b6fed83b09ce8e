// Package ci writes what CI systems read about a run (readme/ci.md): a
// JUnit XML report, and under GitHub Actions a job summary in Markdown,
// annotations and folded output.
package ci

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// maxCaseText bounds each text a test case carries (its failure, its
// output): the report grows with the steps, not with what an agent said.
const maxCaseText = 8 << 10

// Report is what a report says about one run besides its summary.
type Report struct {
	// Chart is the chart's file as the user named it.
	Chart string
	// Mask masks the secrets in a text, before it is escaped; nil masks
	// nothing.
	Mask func(string) string
}

func (r Report) mask(s string) string {
	if r.Mask == nil {
		return s
	}
	return r.Mask(s)
}

// xmlText is r.mask(s) with what XML 1.0 cannot hold (most control
// characters, invalid UTF-8) as U+FFFD: CDATA is written as it is.
func (r Report) xmlText(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c == '\t' || c == '\n' || c == '\r',
			c >= 0x20 && c <= 0xD7FF, c >= 0xE000 && c <= 0xFFFD, c >= 0x10000 && c <= 0x10FFFF:
			return c
		}
		return '\uFFFD'
	}, strings.ToValidUTF8(r.mask(s), "\uFFFD"))
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	ID         string          `xml:"id,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Error     *junitProblem `xml:"error"`
	Failure   *junitProblem `xml:"failure"`
	Skipped   *junitSkipped `xml:"skipped"`
	SystemOut *junitText    `xml:"system-out"`
}

// junitSkipped is a step that did not run to its end and did not fail:
// an approval gate waiting for its answer.
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",cdata"`
}

// junitText is a text as CDATA, whose line breaks stay line breaks.
type junitText struct {
	Text string `xml:",cdata"`
}

// JUnit writes sum as a JUnit XML report: one test suite for the run, one
// test case for each step it took, in order. A node visited twice is two
// cases, the second named "(visit 2)". A step that failed carries a
// <failure> with the reason; one interrupted, stopped by the budget or by
// its log, an <error>; an approval gate waiting for its answer is
// <skipped>, with the command that answers it. A run that stopped with no step to blame (a limit)
// gets one more case, "run", failed with why. The schema is the one
// Jenkins and GitLab read (readme/ci.md#junit).
func JUnit(w io.Writer, sum *run.Summary, r Report) error {
	suite := junitSuite{
		Name:      r.xmlText(types.Excerpt(suiteName(sum, r.Chart), maxName)),
		Time:      seconds(sum.DurationMS),
		Timestamp: sum.Started.UTC().Format("2006-01-02T15:04:05"),
		ID:        sum.RunID,
	}
	class := "dtree." + r.xmlText(classname(cmp.Or(r.Chart, sum.Source)))
	blamed := false
	for i := range sum.Nodes {
		n := &sum.Nodes[i]
		c := junitCase{Name: r.xmlText(CaseName(n)), Classname: class, Time: seconds(n.DurationMS),
			SystemOut: &junitText{clip(r.xmlText(caseOutput(n)))}}
		switch n.Status {
		case run.StatusSucceeded:
		case run.StatusWaiting:
			msg := fmt.Sprintf("waiting for approval: dtree resume %s --approve, or --reject --reason TEXT", sum.RunID)
			if w := sum.Waiting; w != nil { // its lines name --log-dir when not the default
				msg = "waiting for approval: " + w.Approve + ", or " + w.Reject
			}
			c.Skipped = &junitSkipped{Message: r.xmlText(msg)}
			suite.Skipped++
			blamed = true
		case run.StatusFailed:
			c.Failure = problem(n.Status, r.xmlText(reason(n, sum)))
			suite.Failures++
			blamed = true
		default: // interrupted, budget_reached, log_write_failed
			c.Error = problem(n.Status, r.xmlText(reason(n, sum)))
			suite.Errors++
			blamed = true
		}
		suite.Cases = append(suite.Cases, c)
	}
	if sum.Status != run.StatusSucceeded && sum.Status != run.StatusRunning && !blamed {
		msg := sum.Error
		if msg == "" {
			msg = "the run " + sum.Status
		}
		suite.Cases = append(suite.Cases, junitCase{Name: "run", Classname: class, Time: "0",
			Failure: problem(sum.Status, r.xmlText(msg))})
		suite.Failures++
	}
	suite.Tests = len(suite.Cases)
	suite.Properties = properties(sum, r)
	out := junitSuites{Name: "dtree", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: suite.Time, Suites: []junitSuite{suite}}
	return encode(w, out)
}

// CaseName names one visit of a node: the fork branch it ran on
// (readme/parallel.md), its id and the first line of its text, and which
// visit after the first. The branch leads the name, not the classname:
// Jenkins splits a classname at its last dot into package and class, and
// the chart's steps stay one class.
func CaseName(n *run.NodeResult) string {
	name := n.ID
	if n.Branch != "" {
		name = types.Excerpt(n.Branch, 60) + " › " + name
	}
	if t := types.Excerpt(n.Text, 60); t != "" {
		name += " " + t
	}
	if n.Visit > 1 {
		name += fmt.Sprintf(" (visit %d)", n.Visit)
	}
	return name
}

func suiteName(sum *run.Summary, chart string) string {
	switch {
	case sum.Title != "":
		return sum.Title
	case chart != "":
		return chart
	}
	return sum.Source
}

// classname groups the cases under the chart's file, the part CI pages
// group by.
func classname(name string) string {
	name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	return strings.NewReplacer(".", "_", " ", "_").Replace(name)
}

func problem(status, msg string) *junitProblem {
	first, _, _ := strings.Cut(msg, "\n")
	return &junitProblem{Type: status, Message: types.Excerpt(first, 300), Text: clip(msg)}
}

// reason is why a visit did not succeed.
func reason(n *run.NodeResult, sum *run.Summary) string {
	if n.Error != "" {
		return n.Error
	}
	for i := len(n.Attempts) - 1; i >= 0; i-- {
		if e := n.Attempts[i].Error; e != "" {
			return e
		}
	}
	if sum.Error != "" {
		return sum.Error
	}
	return "the step " + n.Status
}

// caseOutput is what a case's <system-out> says: the CLI, the attempts
// and the step's answer.
func caseOutput(n *run.NodeResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", n.ID, n.Text)
	b.WriteString(Attempts(n))
	if u := Usage(n.Usage); u != "" {
		b.WriteString(" · " + u)
	}
	b.WriteByte('\n')
	for _, a := range n.Attempts {
		fmt.Fprintf(&b, "attempt %d, %s with %s: exit %d in %s", a.N, a.Purpose, a.CLI, a.ExitCode, Duration(a.DurationMS))
		if a.TimedOut {
			b.WriteString(", timed out")
		}
		if a.Error != "" {
			b.WriteString(": " + types.Excerpt(a.Error, 300))
		}
		b.WriteByte('\n')
	}
	b.WriteString(ToolLines(n))
	b.WriteString(ChangeLines(n.Change, maxCasePaths, "  "))
	if s := Answer(n); s != "" {
		b.WriteString(s)
	}
	return b.String()
}

// Attempts says a visit's CLI and how many attempts it made.
func Attempts(n *run.NodeResult) string {
	s := "cli: " + n.CLI
	if n.CLI == "" {
		s = "command"
	}
	return s + " · " + types.Plural(1+n.Retries, "attempt")
}

// Answer is what a visit answered, as text: a decision's answer and
// reasons, a process's comments when there is no output, a command's exit status, the
// validation's warnings, then the last attempt's output; "" when none.
func Answer(n *run.NodeResult) string {
	var b strings.Builder
	switch r := n.Response.(type) {
	case types.DecisionResponse:
		fmt.Fprintf(&b, "answer: %s\n", r.Answer)
		for _, s := range r.Reasons {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	case types.ProcessResponse:
		if n.Output == "" { // the output holds them
			for _, s := range r.Comments {
				fmt.Fprintf(&b, "- %s\n", s)
			}
		}
	case types.CommandResponse:
		fmt.Fprintf(&b, "exit status: %d\n", r.ExitCode)
	}
	if v := n.Validation; v != nil && len(v.Warnings) > 0 {
		b.WriteString("validation:\n")
		for _, s := range v.Warnings {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	if n.Output != "" {
		b.WriteString("output:\n" + strings.TrimRight(n.Output, "\n") + "\n")
	}
	return b.String()
}

// Usage says a visit's or a run's tokens and cost, as far as the CLIs
// reported them; "" when they reported neither.
func Usage(u types.UsageTotal) string {
	var parts []string
	if u.InputTokens != nil || u.OutputTokens != nil {
		parts = append(parts, Tokens(u)+" tokens")
	}
	if u.CostUSD != nil {
		parts = append(parts, Cost(u))
	}
	return strings.Join(parts, " · ")
}

// Tokens is the input and output tokens, "" when no CLI reported them.
func Tokens(u types.UsageTotal) string {
	if u.InputTokens == nil && u.OutputTokens == nil {
		return ""
	}
	var in, out int64
	if u.InputTokens != nil {
		in = *u.InputTokens
	}
	if u.OutputTokens != nil {
		out = *u.OutputTokens
	}
	return fmt.Sprintf("%s in, %s out", types.Thousands(in), types.Thousands(out))
}

// Cost is the cost in dollars, "" when no CLI reported it.
func Cost(u types.UsageTotal) string {
	if u.CostUSD == nil {
		return ""
	}
	return "$" + strconv.FormatFloat(*u.CostUSD, 'f', 4, 64)
}

func properties(sum *run.Summary, r Report) []junitProperty {
	p := []junitProperty{
		{"run_id", sum.RunID},
		{"chart", r.xmlText(r.Chart)},
		{"page", r.xmlText(sum.Page)},
		{"status", sum.Status},
		{"exit_code", strconv.Itoa(sum.ExitCode)},
		{"log_dir", r.xmlText(sum.Logs.Dir)},
	}
	if t := Tokens(sum.Usage); t != "" {
		p = append(p, junitProperty{"tokens", t})
	}
	if c := Cost(sum.Usage); c != "" {
		p = append(p, junitProperty{"cost_usd", strings.TrimPrefix(c, "$")})
	}
	return p
}

// seconds is a duration in milliseconds as JUnit's time: seconds, with
// three decimals.
func seconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
}

// Duration is a duration in milliseconds, rounded for reading: 850ms, 1.2s,
// 3m4s.
func Duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return d.String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// clip keeps the head and the tail of a long text, valid UTF-8.
func clip(s string) string {
	if len(s) <= maxCaseText {
		return s
	}
	head := strings.ToValidUTF8(s[:maxCaseText/2], "")
	tail := types.TailBytes(s, maxCaseText/2)
	return fmt.Sprintf("%s\n… %d bytes left out …\n%s", head, len(s)-len(head)-len(tail), tail)
}

// NotRun writes the JUnit report of a run that never started: one case,
// "chart", with an <error> saying why (the chart's errors, a CLI that is
// not installed, a bad flag), so that the CI page shows the reason rather
// than a missing report.
func NotRun(w io.Writer, chart, reason string, details []string, r Report) error {
	class := "dtree." + r.xmlText(classname(chart))
	body := reason
	if len(details) > 0 {
		body += "\n" + strings.Join(details, "\n")
	}
	suite := junitSuite{Name: r.xmlText(chart), Tests: 1, Errors: 1, Time: "0",
		Timestamp:  time.Now().UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{{"chart", r.xmlText(chart)}, {"status", "not_run"}},
		Cases: []junitCase{{Name: "chart", Classname: class, Time: "0",
			Error: problem("not_run", r.xmlText(body))}}}
	out := junitSuites{Name: "dtree", Tests: 1, Errors: 1, Time: "0", Suites: []junitSuite{suite}}
	return encode(w, out)
}

// encode writes a report as an XML document, in one write.
func encode(w io.Writer, out junitSuites) error {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
