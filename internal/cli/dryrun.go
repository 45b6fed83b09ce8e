package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/internal/run"
	"github.com/dtree-dev/dtree/types"
)

// dryRun stands in for the agents in `dtree run --dry-run`: it prints each
// call as it would be made (CLI, argv, the whole prompt) and answers at
// once: a process is completed, a validation passes, a decision takes its
// --answer or else its default label (defaultLabel).
type dryRun struct {
	w       io.Writer
	c       *chart.Chart
	answers map[string][]string // decision node id → labels by visit, from --answer
	asked   map[string]int      // decision node id → calls so far
	steps   int
}

// Call is a run.Runner.
func (d *dryRun) Call(_ context.Context, c agent.Call) (agent.Result, error) {
	res := agent.Result{ExitCode: -1}
	id, purpose := c.Request.Node, c.Request.Purpose
	argv, onStdin, err := agent.Preview(c.Def, c.Prompt, c.Model, c.MaxTurns, c.MaxCost)
	if err != nil {
		return res, err
	}
	res.Argv, res.ExitCode = argv, 0
	if purpose == agent.PurposeCommand {
		return d.command(id, c.Prompt, c.Def.Env, res)
	}
	where := "in argv"
	switch {
	case c.Def.InProcess:
		where = "kept in dtree" // the replay agent reads none
	case onStdin:
		where = "on stdin"
	case strings.Contains(strings.Join(argv, " "), "<prompt file>"):
		where = "in a prompt file"
	}
	if purpose == agent.PurposeValidate {
		fmt.Fprintf(d.w, "  validate: %s: %s\n  validation prompt, %s %s (the agent's output in it is the dry run's stand-in, %s):\n",
			c.Def.Name, shellJoin(argv), types.Plural(len(c.Prompt), "byte"), where, dryProcessAnswer)
		d.printPrompt(c.Prompt)
		res.Answer = `{"fully_completed": true}`
		return res, nil
	}
	fmt.Fprintf(d.w, "  argv: %s\n  prompt, %s %s:\n", shellJoin(argv), types.Plural(len(c.Prompt), "byte"), where)
	d.printPrompt(c.Prompt)
	i, _ := d.c.Graph.Index(id)
	if d.c.Nodes[i].Role != types.RoleDecision {
		res.Answer = dryProcessAnswer
		return res, nil
	}
	label, why := "", "from --answer"
	if picks := d.answers[id]; len(picks) > 0 {
		label = picks[min(d.asked[id], len(picks)-1)]
		d.asked[id]++
	} else {
		var labels []string
		for _, e := range d.c.Graph.Out(i) {
			labels = append(labels, e.Label)
		}
		label = defaultLabel(labels)
		why = fmt.Sprintf("the default: a pass label, else the first A to Z; --answer %s=LABEL picks another", id)
	}
	fmt.Fprintf(d.w, "  answer: %q (%s)\n", label, why)
	b, _ := json.Marshal(map[string]string{"answer": label})
	res.Answer = string(b)
	return res, nil
}

// gate answers an approval gate (run.Approval's Answers): its --answer,
// else approved, the way a run goes when all is well.
func (d *dryRun) gate(id string, _ int) (string, error) {
	label, why := "approved", fmt.Sprintf("the default; --answer %s=rejected takes the other branch", id)
	if picks := d.answers[id]; len(picks) > 0 {
		label, why = picks[min(d.asked[id], len(picks)-1)], "from --answer"
		d.asked[id]++
	}
	fmt.Fprintf(d.w, "  approval: %q (%s)\n", label, why)
	return label, nil
}

// defaultLabel is the branch a dry run takes at a decision given no
// --answer: a pass label (Yes, pass, ok, 0…: response.ExitLabel's pass
// words) first, the way a run goes when all is well; else the first label
// A to Z, case and punctuation aside, a fail label (No, fail, error…)
// last. Not the first label in chart order: Lucid's CSV and its API JSON
// list the lines of the same drawing in different orders, and the dry run
// of one drawing must take one path (readme/replay.md#dry-runs).
func defaultLabel(labels []string) string {
	rank := func(l string) int {
		o, ok := response.ExitLabel(l)
		switch {
		case ok && (o.Pass || !o.Fail && o.Code == 0):
			return 0
		case ok:
			return 2
		}
		return 1
	}
	best := ""
	for i, l := range labels {
		if i == 0 {
			best = l
			continue
		}
		if c := cmp.Compare(rank(l), rank(best)); c < 0 ||
			c == 0 && cmp.Or(cmp.Compare(response.CleanLabel(l), response.CleanLabel(best)), cmp.Compare(l, best)) < 0 {
			best = l
		}
	}
	return best
}

// command shows a command step's command and runs nothing. A process
// command exits 0; a decision's exits with the status of its --answer
// (a pass word 0, a fail word 1), else 0.
func (d *dryRun) command(id, command string, env map[string]string, res agent.Result) (agent.Result, error) {
	fmt.Fprintf(d.w, "  command (not run): /bin/sh -c %s\n", shellJoin([]string{command}))
	// The references' values, which the command gets in its environment
	// (readme/context.md#in-a-command).
	names := slices.Sorted(maps.Keys(env))
	for _, k := range names {
		fmt.Fprintf(d.w, "    %s=%s\n", k, shellJoin([]string{env[k]}))
	}
	i, _ := d.c.Graph.Index(id)
	if d.c.Nodes[i].Role != types.RoleDecision {
		return res, nil
	}
	picks := d.answers[id]
	if len(picks) == 0 {
		fmt.Fprintf(d.w, "  exit status: 0 (--answer %s=LABEL picks another branch)\n", id)
		return res, nil
	}
	label := picks[min(d.asked[id], len(picks)-1)]
	d.asked[id]++
	o, _ := response.ExitLabel(label)
	switch {
	case o.Fail:
		res.ExitCode = 1
	case !o.Pass:
		res.ExitCode = o.Code
	}
	fmt.Fprintf(d.w, "  exit status: %d (from --answer %s)\n", res.ExitCode, label)
	if res.ExitCode != 0 {
		return res, &agent.AgentError{Name: agent.Shell.Name, ExitCode: res.ExitCode, Reason: fmt.Sprintf("exited with status %d", res.ExitCode)}
	}
	return res, nil
}

// dryProcessAnswer is what every process node answers in a dry run.
const dryProcessAnswer = `{"completed": true}`

// printPrompt prints the prompt indented, in one write, so that stderr's
// masking sees a secret that spans its lines whole.
func (d *dryRun) printPrompt(prompt string) {
	var b strings.Builder
	for _, line := range strings.Split(prompt, "\n") {
		b.WriteString("    " + line + "\n")
	}
	io.WriteString(d.w, b.String())
}

// NodeStarted and the rest make dryRun the run's progress too. A dry run's
// attempts never fail, so a step says when its retries would be made with
// another CLI.
func (d *dryRun) NodeStarted(n *types.ProcessedNode, visit int) {
	d.steps++
	again := ""
	if visit > 1 {
		again = fmt.Sprintf(" (visit %d)", visit)
	}
	fmt.Fprintf(d.w, "step %d · node %s %s%s · %s · %s\n", d.steps, n.ID, types.Quote(types.Excerpt(n.Text, 60)), again, n.Role, n.CLI)
	if n.Retries > 0 && n.RetryCLI != n.CLI {
		fmt.Fprintf(d.w, "  retries: up to %s with %s, not %s\n", types.Plural(n.Retries, "retry"), n.RetryCLI, n.CLI)
	}
	if len(n.Fallback) > 0 {
		fmt.Fprintf(d.w, "  fallback: %s, in turn, when %s fails for an agent reason\n", strings.Join(n.Fallback, ", "), n.CLI)
	}
}

func (d *dryRun) AttemptStarted(*types.ProcessedNode, int, string, string) {}

func (d *dryRun) AttemptFailed(_ *types.ProcessedNode, attempt int, reason string) {
	fmt.Fprintf(d.w, "  attempt %d failed: %s\n", attempt, reason)
}

func (d *dryRun) NodeFinished(r *run.NodeResult) {
	if r.Next == "" {
		return
	}
	i, _ := d.c.Graph.Index(r.Next)
	fmt.Fprintf(d.w, "  next: %s %s\n", r.Next, types.Quote(types.Excerpt(d.c.Doc.Nodes[i].Text, 60)))
}

// finished prints the path and where the run would end.
func (d *dryRun) finished(sum *run.Summary) {
	fmt.Fprintf(d.w, "path: %s\n", strings.Join(sum.Path, " → "))
	switch {
	case sum.Status == run.StatusSucceeded && len(sum.Path) > 0:
		last := sum.Path[len(sum.Path)-1]
		i, _ := d.c.Graph.Index(last)
		fmt.Fprintf(d.w, "ends: at node %s %q after %s; no agent was started\n", last,
			types.Excerpt(d.c.Doc.Nodes[i].Text, 60), types.Plural(d.steps, "step"))
	default:
		fmt.Fprintf(d.w, "ends: %s (below); no agent was started\n", sum.Status)
	}
}

// dryAnswers resolves --answer NODE=LABEL flags: NODE a decision's id or
// text, LABEL one of its labels. A node given more than once takes the
// labels in turn, one per visit, and keeps the last.
func dryAnswers(c *chart.Chart, page string, flags []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, f := range flags {
		key, label, ok := splitAnswer(c, page, f)
		if !ok || strings.TrimSpace(key) == "" {
			return nil, &UsageError{Err: fmt.Errorf("--answer %q: want NODE=LABEL", f),
				Hint: "NODE is a decision's id or text, LABEL one of its branch labels: --answer 3=No"}
		}
		ids := c.FindNode(page, key)
		if len(ids) != 1 {
			what := "no node has that id or text" + c.NearNode(page, key)
			if len(ids) > 1 {
				what = "nodes " + strings.Join(ids, ", ") + " all have that text; use the id"
			}
			return nil, &UsageError{Err: fmt.Errorf("--answer %q: %s", f, what),
				Hint: "'dtree inspect CHART' lists the nodes with their ids"}
		}
		i, _ := c.Graph.Index(ids[0])
		if c.Nodes[i].Role != types.RoleDecision {
			return nil, &UsageError{Err: fmt.Errorf("--answer %q: node %s is a %s, not a decision", f, ids[0], c.Nodes[i].Role)}
		}
		var labels []string
		for _, e := range c.Graph.Out(i) {
			labels = append(labels, e.Label)
		}
		match, ok := response.MatchLabel(label, labels)
		if c.Nodes[i].Step == types.StepApproval {
			// A gate's answer, a label or in its own words, as a
			// replay's answers file gives it: approved/approve/yes or
			// rejected/reject/no, whatever its branches' labels.
			match, _, ok = response.GateAnswer(label, labels)
		}
		if !ok {
			return nil, &UsageError{Err: fmt.Errorf("--answer %q: node %s has no branch %q", f, ids[0], label),
				Hint: "its labels: " + strings.Join(labels, ", ")}
		}
		out[ids[0]] = append(out[ids[0]], match)
	}
	return out, nil
}

// splitAnswer splits --answer NODE=LABEL at the first '=' after which
// NODE names a node, so a node's text may hold '=' too ("x = 1?=Yes");
// with no such split, at the first '='.
func splitAnswer(c *chart.Chart, page, f string) (key, label string, ok bool) {
	for i := range len(f) {
		if f[i] == '=' && len(c.FindNode(page, f[:i])) > 0 {
			return f[:i], f[i+1:], true
		}
	}
	return strings.Cut(f, "=")
}

// shellJoin shows argv as a shell would need it typed (types.ShellJoin).
func shellJoin(argv []string) string { return types.ShellJoin(argv) }
