package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/atomicfile"
	"github.com/dtree-dev/dtree/internal/ci"
	"github.com/dtree-dev/dtree/internal/export"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// inActions reports whether dtree runs as a step of GitHub Actions
// (readme/ci.md#github-actions).
func (a *App) inActions() bool { return a.Getenv("GITHUB_ACTIONS") == "true" }

// ciReports writes what CI reads about a finished run: the JUnit report
// (--junit, junit) and, under GitHub Actions, the job summary and the
// step's outputs. Each that cannot be written is an error line; they are
// returned together, the run's own outcome being printed already.
func (a *App) ciReports(ctx context.Context, junit string, doc *types.Document, sum *run.Summary) []string {
	var problems []string
	mask := a.redactor().String
	report := ci.Report{Chart: doc.Source, Mask: mask}
	if junit != "" {
		if err := writeReport(junit, func(w io.Writer) error { return ci.JUnit(w, sum, report) }); err != nil {
			problems = append(problems, fmt.Sprintf("the JUnit report: %v", err))
		}
	}
	if !a.inActions() {
		return problems
	}
	if path := a.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		s := ci.Summary{Report: report}
		if sum.Logs.Dir != "" {
			if t, err := export.ReadTrace(sum.Logs.Dir); err == nil {
				s.Diagram, s.Note, err = summaryPicture(ctx, doc, t, mask)
				if err != nil {
					s.Note = "The run's picture could not be drawn: " + err.Error()
				}
			}
		}
		var b bytes.Buffer
		if err := ci.StepSummary(&b, sum, s); err == nil {
			err = appendFile(path, b.Bytes())
			if err != nil {
				problems = append(problems, fmt.Sprintf("append the job summary to $GITHUB_STEP_SUMMARY (%s): %v", path, err))
			}
		}
	}
	if path := a.Getenv("GITHUB_OUTPUT"); path != "" {
		var b strings.Builder
		// Paths absolute: a later step may run in another directory.
		for _, kv := range [][2]string{{"run-id", sum.RunID}, {"status", sum.Status}, {"exit-code", strconv.Itoa(sum.ExitCode)},
			{"run-dir", absPath(sum.Logs.Dir)}, {"junit", absPath(junit)}} {
			// A value on one line: run ids, statuses and paths dtree
			// made; a path with a line break is left out.
			if !strings.ContainsAny(kv[1], "\r\n") {
				fmt.Fprintf(&b, "%s=%s\n", kv[0], mask(kv[1]))
			}
		}
		if err := appendFile(path, []byte(b.String())); err != nil {
			problems = append(problems, fmt.Sprintf("append the step's outputs to $GITHUB_OUTPUT (%s): %v", path, err))
		}
	}
	return problems
}

// writeReport writes a report file whole, its directory made if missing.
func writeReport(path string, write func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, 0o644, atomicfile.Options{Follow: true}, write)
}

// appendFile appends b to the file at path, in one write.
func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// annotate prints chart findings as GitHub Actions annotations on the
// chart's lines, masked: severity is error or warning.
func (a *App) annotate(source, severity string, diags []types.Diagnostic) {
	mask := a.redactor().String
	w := a.commandWriter(a.Err)
	for _, d := range diags {
		msg := d.Class + ": " + d.Message
		if d.Hint != "" {
			msg += "\nhint: " + d.Hint
		}
		fmt.Fprint(w, ci.Annotation(severity, ci.Where{File: mask(source), Line: d.Line}, "dtree lint: "+d.Class, mask(msg)))
	}
}

// absPath is path made absolute, "" for "".
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// notRunReports writes what CI reads about a run that never started
// (a chart with errors, a CLI not installed, a bad flag): the JUnit report
// with one case saying why and, under GitHub Actions, a job summary and
// the step's outputs. diags are the chart's errors, when it has any. A
// report that cannot be written is a warning: the error that stopped the
// run is the one to read.
func (a *App) notRunReports(junit, chart string, err error, diags []types.Diagnostic) {
	mask := a.redactor().String
	report := ci.Report{Chart: chart, Mask: mask}
	var details []string
	for _, d := range diags {
		loc := chart
		if d.Line > 0 {
			loc = fmt.Sprintf("%s:%d", chart, d.Line)
		}
		details = append(details, fmt.Sprintf("%s: %s: %s", loc, d.Class, d.Message))
	}
	warn := func(what string, err error) {
		fmt.Fprintf(a.Err, "dtree: warning: %s: %v\n", what, err)
	}
	if junit != "" {
		werr := writeReport(junit, func(w io.Writer) error { return ci.NotRun(w, chart, err.Error(), details, report) })
		if werr != nil {
			warn("the JUnit report", werr)
		}
	}
	if !a.inActions() {
		return
	}
	if path := a.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		var b bytes.Buffer
		if werr := ci.NotRunSummary(&b, chart, err.Error(), details, report); werr == nil {
			if werr = appendFile(path, b.Bytes()); werr != nil {
				warn("the job summary ($GITHUB_STEP_SUMMARY)", werr)
			}
		}
	}
	if path := a.Getenv("GITHUB_OUTPUT"); path != "" {
		out := fmt.Sprintf("status=not_run\nexit-code=%d\n", exitCode(err))
		if j := absPath(junit); j != "" && !strings.ContainsAny(j, "\r\n") {
			out += "junit=" + mask(j) + "\n"
		}
		if werr := appendFile(path, []byte(out)); werr != nil {
			warn("the step's outputs ($GITHUB_OUTPUT)", werr)
		}
	}
}
