package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/mockllm"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/prompts"
	"github.com/dtree-dev/dtree/types"
)

// cliCase is one real CLI: how to run it offline against the mock, and
// what dtree must make of it. Each lives in its own file, NAME_test.go;
// adding a CLI is a file and a line in cases.
type cliCase struct {
	name   string      // dtree's name for it, given to --cli
	binary string      // its program in the CLI directory
	api    mockllm.API // the protocol of its model calls
	// setup writes the CLI's config files under home and returns the
	// environment variables that point it at the mock (url, no trailing
	// slash) and keep it from calling anywhere else.
	setup func(t *testing.T, home, url string) []string
	// settings, when set, is written as dtree.yaml in the working
	// directory: a CLI that is not built in is defined there (clis:).
	settings string
	// extraRules answer the model calls it makes besides the task (a
	// title, a router), before the chart's rules; give them no usage, or
	// set figures to say how the CLI counts them.
	extraRules []mockllm.Rule
	// figures is the usage dtree must record for one call whose model
	// reply reported u: nil where the CLI does not report a figure. Nil
	// means input and output as sent.
	figures func(u mockllm.Usage) (in, out *int)
	// promptIn says whether a text part the model got carries the prompt
	// dtree sent, byte for byte, for a CLI that adds text of its own to
	// the same part (copilot's <current_datetime> line, qwen's trailing
	// blank line). Nil means the part must be the prompt exactly.
	promptIn func(part, prompt string) bool
	// costReported says the CLI reports a cost in USD (claude computes
	// one from its own price list, whatever the server).
	costReported bool
	// errors are the HTTP statuses to try, each with what the error dtree
	// reports must contain: the CLI's own message for it.
	errors map[int]string
	// errorTimeout is dtree's --timeout for the error runs: long enough
	// for the CLI's own retries, which its setup caps where it can.
	errorTimeout string
	// hangTimeout is dtree's --timeout for the run against a hanging
	// model (default 20s): room for the CLI's cold start, so that it is
	// waiting on the model when the timeout ends it.
	hangTimeout time.Duration
	// noise are lines the CLI prints on stderr on every call, which tell
	// nothing about a failure: dtree's reason must not quote them.
	noise []string
	// more are checks of this CLI alone (run after the common ones).
	more func(t *testing.T, c cliCase)
	// knownFailures are checks (see expect) where dtree is wrong against
	// this CLI, each with why, for the engineers fixing it: they are
	// logged, not failed, and fail once they pass.
	knownFailures map[string]string
}

// cases are the CLIs under test, in the order they run.
func cases() []cliCase {
	return []cliCase{claudeCase(), codexCase(), geminiCase(), opencodeCase(), copilotCase(), qwenCase(), qwenCustomCase(), qwenStreamCase()}
}

// The conformance chart's texts (testdata/conformance/chart.yaml) and the
// critique its first validation gives.
const (
	writeText    = "Write the release notes for version 1.2 (conformance step)."
	publishText  = "Publish the release notes (conformance end)."
	critique     = "The notes miss the link to the changelog (conformance critique)."
	validateMark = "You are checking another agent's work."
	decisionMark = "by choosing exactly one of these answers"
)

func processReply(comment string) string {
	return fmt.Sprintf("All done.\n\n{\"completed\": true, \"secs_taken\": 3, \"tokens_used\": 0, \"comments\": [%q]}", comment)
}

func decisionReply(answer string) string {
	return fmt.Sprintf("{\"choices\": [\"Yes\", \"No\"], \"answer\": %q, \"reasons\": [\"conformance\"]}", answer)
}

// chartRules script the conformance chart: write (validation fails, the
// retry gets the critique, validation passes), check answers No, write
// again, check answers Yes, publish. Every reply reports other usage
// figures, so each call's can be told apart.
func chartRules() []mockllm.Rule {
	return []mockllm.Rule{
		{Match: validateMark, Times: 1, Usage: mockllm.Usage{Input: 2101, Output: 31},
			Reply: fmt.Sprintf("{\"fully_completed\": false, \"partially_completed\": true, \"should_retry\": true, \"warnings\": [%q]}", critique)},
		{Match: validateMark, Usage: mockllm.Usage{Input: 2202, Output: 32, Cached: 2000},
			Reply: "{\"fully_completed\": true, \"partially_completed\": false, \"should_retry\": false, \"warnings\": []}"},
		{Match: "Previous attempt feedback", Usage: mockllm.Usage{Input: 1303, Output: 43, Cached: 1000}, Reply: processReply("added the changelog link")},
		// A prompt quotes the steps before it (the run so far), so a step
		// is told by what only its own prompt has: a decision by its
		// instruction, publish before write, whose text it quotes.
		{Match: decisionMark, Times: 1, Usage: mockllm.Usage{Input: 504, Output: 54}, Reply: decisionReply("No")},
		{Match: decisionMark, Usage: mockllm.Usage{Input: 505, Output: 55, Cached: 500}, Reply: decisionReply("Yes")},
		{Match: publishText, Usage: mockllm.Usage{Input: 707, Output: 77, Cached: 700}, Reply: processReply("published")},
		{Match: writeText, Usage: mockllm.Usage{Input: 1006, Output: 66}, Reply: processReply("wrote the notes")},
	}
}

func (c cliCase) rules(rules ...mockllm.Rule) []mockllm.Rule {
	return append(slices.Clone(c.extraRules), rules...)
}

func (c cliCase) recorded(u mockllm.Usage) (in, out *int) {
	if c.figures != nil {
		return c.figures(u)
	}
	return &u.Input, &u.Output
}

func TestConformance(t *testing.T) {
	if dtreeBin == "" {
		t.Skipf("%s is not set: `make conformance` installs the real CLIs and runs these tests", cliDirEnv)
	}
	only := os.Getenv("DTREE_CONFORMANCE_ONLY") // a comma-separated list of CLI names
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			if only != "" && !slices.Contains(strings.Split(only, ","), c.name) {
				t.Skipf("not in DTREE_CONFORMANCE_ONLY=%s", only)
			}
			t.Run("chart", func(t *testing.T) { testChart(t, c) })
			t.Run("prompts", func(t *testing.T) { testPrompts(t, c) })
			t.Run("errors", func(t *testing.T) { testErrors(t, c) })
			testQuota(t, c)
			t.Run("timeout", func(t *testing.T) { testTimeout(t, c) })
			if c.more != nil {
				c.more(t, c)
			}
		})
	}
}

// testChart runs the conformance chart: a process step whose validation
// fails and whose retry carries the critique, a decision, a loop back.
func testChart(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	e.mock.SetRules(c.rules(chartRules()...))
	chart := filepath.Join(repoRoot(t), "testdata", "conformance", "chart.yaml")
	r := e.run(chart)
	reqs := e.mock.Requests()
	for _, q := range reqs {
		t.Logf("mock: %s %s %s model=%q stream=%v rule=%d status=%d prompt=%.80q", q.API, q.Method, q.Path, q.Model, q.Stream, q.Rule, q.Status, q.Prompt)
	}

	expect(t, c, "chart", func(a *assert.Assertions) {
		a.Equal(0, r.exit, "exit status")
		a.Equal("succeeded", r.summary.Status)
		a.Equal([]string{"write", "check", "write", "check", "publish"}, r.summary.Path)
		a.Len(r.calls(), 9, "work, failed validation, retry, validation, No, work, validation, Yes, publish")
		for _, call := range r.calls() {
			if a.NotEmpty(call.Argv) {
				a.Equal(filepath.Join(os.Getenv(cliDirEnv), c.binary), call.Argv[0], "the real CLI ran")
			}
		}
		var retry *mockllm.Request
		for i, q := range reqs {
			if q.Rule == len(c.extraRules)+2 {
				retry = &reqs[i]
			}
		}
		if a.NotNil(retry, "the retry reached the model") {
			a.Contains(retry.Prompt, "## Previous attempt feedback (attempt 1)")
			a.Contains(retry.Prompt, critique, "the retry carries the validation's critique")
		}
		for _, q := range reqs {
			if q.API != mockllm.Other {
				a.NotEqual(-1, q.Rule, "a model call no rule answers: %s %.200q", q.API, q.Prompt)
				a.Equal(c.api, q.API, "protocol")
			}
		}
	})

	expect(t, c, "usage", func(a *assert.Assertions) {
		replies := answered(reqs)
		calls := r.calls()
		var wantIn, wantOut *int
		add := func(sum **int, v *int) {
			if v == nil {
				return
			}
			if *sum == nil {
				*sum = new(int)
			}
			**sum += *v
		}
		var sent, got []string
		for _, q := range replies {
			in, out := c.recorded(q.Usage)
			add(&wantIn, in)
			add(&wantOut, out)
			sent = append(sent, figures(in, out))
		}
		for _, ev := range calls {
			got = append(got, figures(ev.Usage.InputTokens, ev.Usage.OutputTokens))
		}
		t.Logf("usage sent by the mock: %v; recorded by dtree per call: %v", sent, got)
		if len(replies) == len(calls) {
			// One model request per call: each call's figures are its reply's.
			slices.Sort(sent)
			slices.Sort(got)
			a.Equal(sent, got, "each call's usage is what the mock sent for it")
		}
		a.Equal(figures(wantIn, wantOut), figures(r.summary.Usage.InputTokens, r.summary.Usage.OutputTokens), "the run's usage in --json")
		if c.costReported {
			if a.NotNil(r.summary.Usage.CostUSD, "the run's cost") {
				a.Positive(*r.summary.Usage.CostUSD, "the run's cost")
			}
		}
		end, ok := r.events[len(r.events)-1].(runlog.RunEnd)
		if a.True(ok, "the last event is run_end") {
			a.Equal(figures(wantIn, wantOut), figures(end.Usage.InputTokens, end.Usage.OutputTokens), "the run's usage in events.jsonl")
		}
	})
}

func figures[T int | int64](in, out *T) string {
	s := func(p *T) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	return "in=" + s(in) + " out=" + s(out)
}

// oneNode is a chart of one process node, not validated.
func oneNode(text string) string {
	var b strings.Builder
	b.WriteString("title: One node\nnodes:\n  - id: only\n    tags: NoValidation\n    text: |-\n")
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("      " + line + "\n")
	}
	return b.String()
}

// testPrompts sends a 200 KiB prompt and one starting with '-', and
// checks each reached the model byte for byte.
func testPrompts(t *testing.T, c cliCase) {
	var long strings.Builder
	long.WriteString("Summarise this log (conformance long prompt).")
	for i := 0; long.Len() < 200<<10; i++ {
		fmt.Fprintf(&long, "\nline %05d: \"quoted\" 'single' `tick` $HOME \\back\\slash ünïcødé ✓ <tag> & --flag -p", i)
	}
	for _, p := range []struct{ check, text string }{
		{"long prompt", long.String()},
		{"dash prompt", "--version -p: these are not options but the task (conformance dash prompt).\nReply with the JSON."},
	} {
		t.Run(strings.ReplaceAll(p.check, " ", "_"), func(t *testing.T) {
			e := newEnv(t, c)
			// Any prompt is answered: the check is what arrived.
			e.mock.SetRules(c.rules(mockllm.Rule{Reply: processReply("read it"), Usage: mockllm.Usage{Input: 51234, Output: 12}}))
			r := e.run("--retries", "0", e.write("chart.yaml", oneNode(p.text)))
			want := prompts.BuildProcess(p.text, "", nil)
			expect(t, c, p.check, func(a *assert.Assertions) {
				a.Equal(0, r.exit, "exit status")
				found := false
				for _, q := range answered(e.mock.Requests()) {
					for _, part := range q.Parts {
						found = found || part == want || c.promptIn != nil && c.promptIn(part, want)
					}
				}
				if !found {
					for _, q := range e.mock.Requests() {
						for i, part := range q.Parts {
							t.Logf("request %s %s part %d: %d bytes, starts %.60q, ends %.60q", q.API, q.Path, i, len(part), part, part[max(0, len(part)-60):])
						}
					}
				}
				a.True(found, "no request carried the %d-byte prompt as a text part, byte for byte", len(want))
			})
		})
	}
}

// testErrors makes the mock answer with HTTP errors: each must fail the
// node, with the CLI's own message in what dtree reports.
func testErrors(t *testing.T, c cliCase) {
	statuses := make([]int, 0, len(c.errors))
	for s := range c.errors {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	timeout := c.errorTimeout
	if timeout == "" {
		timeout = "120s"
	}
	for _, status := range statuses {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			e := newEnv(t, c)
			msg := fmt.Sprintf("mock %d: scripted failure for dtree", status)
			e.mock.SetRules(c.rules(mockllm.Rule{Status: status, Message: msg}))
			r := e.run("--retries", "0", "--timeout", timeout, e.write("chart.yaml", oneNode("Report the weather (conformance error check).")))
			calls := r.calls()
			expect(t, c, fmt.Sprintf("error %d", status), func(a *assert.Assertions) {
				a.Equal(1, r.exit, "exit status")
				a.Equal("failed", r.summary.Status)
				if a.Len(calls, 1) {
					a.False(calls[0].TimedOut, "the CLI gave up by itself within %s", timeout)
					a.Contains(calls[0].Error, c.errors[status], "the call's error")
				}
				a.Contains(r.stderr, c.errors[status], "dtree's message on stderr")
				a.NotEmpty(answeredErrors(e.mock.Requests(), status), "the mock was asked and answered %d", status)
			})
			if status == 429 && c.settings == "" {
				testFallback(t, c, e, timeout)
			}
			if len(c.noise) > 0 {
				expect(t, c, "stderr noise", func(a *assert.Assertions) {
					for _, n := range c.noise {
						a.NotContains(r.stderr, n, "dtree's reason quotes a line the CLI prints on every call")
					}
				})
			}
		})
	}
}

// testFallback runs the node again with a fallback list (readme/run.md#
// fallback-clis): the real CLI, rate limited by the mock, then dtree's
// fake agent. The real CLI's failure must be one dtree falls back from,
// not one it fails the node on, and the second CLI must do the work.
func testFallback(t *testing.T, c cliCase, e *env, timeout string) {
	e.write("dtree.yaml", fmt.Sprintf("clis:\n  after:\n    binary: %s\n    prompt_via: stdin\n    output: text\n", fakeAgentBin))
	defer os.Remove(filepath.Join(e.work, "dtree.yaml"))
	r := e.run("--retries", "0", "--no-validate", "--timeout", timeout, "--cli", c.name+",after",
		e.write("fallback.yaml", oneNode("Report the weather (conformance fallback check).")))
	calls := r.calls()
	expect(t, c, "fallback from 429", func(a *assert.Assertions) {
		a.Equal(0, r.exit, "exit status; stderr: %s", r.stderr)
		a.Equal("succeeded", r.summary.Status)
		if a.Len(calls, 2) {
			a.Equal(c.name, calls[0].CLI)
			a.Contains(calls[0].Error, c.errors[429], "the real CLI's error")
			a.Equal("after", calls[1].CLI)
			a.Equal(2, calls[1].Attempt, "the next attempt, though --retries 0: each CLI of the list gets one")
			a.Empty(calls[1].Error)
		}
		var fell []runlog.Fallback
		for _, ev := range r.events {
			if f, ok := ev.(runlog.Fallback); ok {
				fell = append(fell, f)
			}
		}
		if a.Len(fell, 1) {
			a.Equal(c.name, fell[0].From)
			a.Equal("after", fell[0].To)
		}
		a.Contains(r.stderr, "falling back to after")
	})
}

func answeredErrors(reqs []mockllm.Request, status int) []mockllm.Request {
	var out []mockllm.Request
	for _, r := range reqs {
		if r.Status == status {
			out = append(out, r)
		}
	}
	return out
}

// testTimeout makes the mock hang: dtree's --timeout must end the call,
// and leave no process of the CLI behind. The timeout leaves room for a
// node CLI's cold start, which took over 5 s on a loaded 2-core machine,
// so that the CLI is waiting on the model, not still starting, when it
// ends.
func testTimeout(t *testing.T, c cliCase) {
	e := newEnv(t, c)
	e.mock.SetRules(c.rules(mockllm.Rule{Hang: true}))
	timeout := c.hangTimeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	r := e.run("--retries", "0", "--timeout", timeout.String(), e.write("chart.yaml", oneNode("Wait for the model (conformance timeout).")))
	left := procsOf(e.home)
	expect(t, c, "timeout", func(a *assert.Assertions) {
		a.Equal(1, r.exit, "exit status")
		a.Contains(r.stderr, "timed out after "+types.ShortDuration(timeout))
		if calls := r.calls(); a.Len(calls, 1) {
			a.True(calls[0].TimedOut)
		}
		a.NotEmpty(e.mock.Requests(), "the CLI was waiting on the model")
		a.Less(r.elapsed, timeout+15*time.Second, "dtree ended the call within its grace period")
		a.Empty(left, "no process of the CLI outlives dtree")
	})
}
