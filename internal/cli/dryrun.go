package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

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
//
// A fork's branches (readme/parallel.md#what-you-see) are printed one
// after another, in the fork's order, each whole (dryBranch), whichever
// the walker took turns at first: a dry run of one chart prints one plan.
type dryRun struct {
	w       io.Writer
	c       *chart.Chart
	answers map[string][]string // decision node id → labels by visit, from --answer
	asked   map[string]int      // decision node id → calls so far
	steps   int
	// mu is held by every method: a branch's Call runs while another
	// branch takes its turn at the walker.
	mu     sync.Mutex
	root   dryBranch
	cur    *dryBranch            // the branch the calls that follow are of (OnBranch)
	byID   map[string]*dryBranch // the fork's branches not yet printed
	byNode map[string]*dryBranch // the branch each running node is of, for Call
	seq    map[string]int        // each branch's place in the order they started
}

// Call is a run.Runner.
func (d *dryRun) Call(_ context.Context, c agent.Call) (agent.Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	res := agent.Result{ExitCode: -1}
	id, purpose := c.Request.Node, c.Request.Purpose
	w := d.out(d.branchOf(id))
	argv, onStdin, err := agent.Preview(c.Def, c.Prompt, c.Model, c.MaxTurns, c.MaxCost)
	if err != nil {
		return res, err
	}
	res.Argv, res.ExitCode = argv, 0
	if purpose == agent.PurposeCommand {
		return d.command(w, id, c.Prompt, c.Def.Env, res)
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
		fmt.Fprintf(w, "  validate: %s: %s\n  validation prompt, %s %s (the agent's output in it is the dry run's stand-in, %s):\n",
			c.Def.Name, shellJoin(argv), types.Plural(len(c.Prompt), "byte"), where, dryProcessAnswer)
		printPrompt(w, c.Prompt)
		res.Answer = `{"fully_completed": true}`
		return res, nil
	}
	fmt.Fprintf(w, "  argv: %s\n  prompt, %s %s:\n", shellJoin(argv), types.Plural(len(c.Prompt), "byte"), where)
	printPrompt(w, c.Prompt)
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
	fmt.Fprintf(w, "  answer: %q (%s)\n", label, why)
	b, _ := json.Marshal(map[string]string{"answer": label})
	res.Answer = string(b)
	return res, nil
}

// gate answers an approval gate (run.Approval's Answers): its --answer,
// else approved, the way a run goes when all is well.
func (d *dryRun) gate(id string, _ int) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	label, why := "approved", fmt.Sprintf("the default; --answer %s=rejected takes the other branch", id)
	if picks := d.answers[id]; len(picks) > 0 {
		label, why = picks[min(d.asked[id], len(picks)-1)], "from --answer"
		d.asked[id]++
	}
	fmt.Fprintf(d.out(d.branchOf(id)), "  approval: %q (%s)\n", label, why)
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
func (d *dryRun) command(w io.Writer, id, command string, env map[string]string, res agent.Result) (agent.Result, error) {
	fmt.Fprintf(w, "  command (not run): /bin/sh -c %s\n", shellJoin([]string{command}))
	// The references' values, which the command gets in its environment
	// (readme/context.md#in-a-command).
	names := slices.Sorted(maps.Keys(env))
	for _, k := range names {
		fmt.Fprintf(w, "    %s=%s\n", k, shellJoin([]string{env[k]}))
	}
	i, _ := d.c.Graph.Index(id)
	if d.c.Nodes[i].Role != types.RoleDecision {
		return res, nil
	}
	picks := d.answers[id]
	if len(picks) == 0 {
		fmt.Fprintf(w, "  exit status: 0 (--answer %s=LABEL picks another branch)\n", id)
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
	fmt.Fprintf(w, "  exit status: %d (from --answer %s)\n", res.ExitCode, label)
	if res.ExitCode != 0 {
		return res, &agent.AgentError{Name: agent.Shell.Name, ExitCode: res.ExitCode, Reason: fmt.Sprintf("exited with status %d", res.ExitCode)}
	}
	return res, nil
}

// dryProcessAnswer is what every process node answers in a dry run.
const dryProcessAnswer = `{"completed": true}`

// printPrompt prints the prompt indented, in one write, so that stderr's
// masking sees a secret that spans its lines whole.
func printPrompt(w io.Writer, prompt string) {
	var b strings.Builder
	for _, line := range strings.Split(prompt, "\n") {
		b.WriteString("    " + line + "\n")
	}
	io.WriteString(w, b.String())
}

// NodeStarted and the rest make dryRun the run's progress too. A dry run's
// attempts never fail, so a step says when its retries would be made with
// another CLI.
var _ run.BranchProgress = (*dryRun)(nil)

func (d *dryRun) NodeStarted(n *types.ProcessedNode, visit int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.current()
	if d.byNode == nil {
		d.byNode = map[string]*dryBranch{}
	}
	d.byNode[n.ID] = b
	w := d.out(b)
	again, branch := "", ""
	if visit > 1 {
		again = fmt.Sprintf(" (visit %d)", visit)
	}
	if b.id != "" {
		branch = " · branch " + run.ShownBranch(b.id)
	}
	what := string(n.Role) + " · " + n.CLI
	if n.Step == types.StepApproval { // no CLI runs a gate: its kind alone, as the progress says
		what = string(n.Step)
	}
	b.put(true, fmt.Sprintf(" · node %s %s%s · %s%s\n", n.ID, types.Quote(types.Excerpt(n.Text, 60)), again, what, branch), d)
	if n.Retries > 0 && n.RetryCLI != n.CLI {
		fmt.Fprintf(w, "  retries: up to %s with %s, not %s\n", types.Plural(n.Retries, "retry"), n.RetryCLI, n.CLI)
	}
	if len(n.Fallback) > 0 {
		fmt.Fprintf(w, "  fallback: %s, in turn, when %s fails for an agent reason\n", strings.Join(n.Fallback, ", "), n.CLI)
	}
}

func (d *dryRun) AttemptStarted(*types.ProcessedNode, int, string, string) {}

func (d *dryRun) AttemptFailed(_ *types.ProcessedNode, attempt int, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out(d.current()), "  attempt %d failed: %s\n", attempt, reason)
}

func (d *dryRun) NodeFinished(r *run.NodeResult) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.out(d.current())
	delete(d.byNode, r.ID)
	if r.Next == "" {
		return
	}
	if i, ok := d.c.Graph.Index(r.ID); ok && d.c.Nodes[i].Fork != nil && d.c.Nodes[i].Fork.Join == r.Next {
		// A fork's: its branches run, then its join.
		var names []string
		for _, fb := range d.c.Nodes[i].Fork.Branches {
			names = append(names, run.ShownBranch(fb.Name))
		}
		fmt.Fprintf(w, "  next: branches %s, side by side (printed one after another below), then the join %s\n",
			strings.Join(names, ", "), r.Next)
		return
	}
	i, _ := d.c.Graph.Index(r.Next)
	fmt.Fprintf(w, "  next: %s %s\n", r.Next, types.Quote(types.Excerpt(d.c.Doc.Nodes[i].Text, 60)))
}

// finished prints the path and where the run would end.
func (d *dryRun) finished(sum *run.Summary) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flush(&d.root, true) // a branch the walker left unended, if any
	fmt.Fprintf(d.w, "path: %s\n", strings.Join(sum.Path, " → "))
	// Each branch's path, in the order the branches started (the
	// summary has them as they ended).
	branches := slices.Clone(sum.Branches)
	slices.SortStableFunc(branches, func(a, b run.BranchResult) int { return cmp.Compare(d.seq[a.ID], d.seq[b.ID]) })
	for _, b := range branches {
		fmt.Fprintf(d.w, "  branch %s: %s\n", run.ShownBranch(b.ID), strings.Join(b.Path, " → "))
	}
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

// A fork's branch in a dry run: what it prints is kept until it ended
// and the branches before it in its fork were printed, then goes to its
// parent's (the run's own prints at once). The step numbers are given
// as the steps are printed, so they count down the page.
type dryBranch struct {
	id     string
	parent *dryBranch   // nil for the run's own
	out    []dryPiece   // what it printed, kept
	kids   []*dryBranch // its forks' branches not yet printed, in order
	ended  bool
}

// dryPiece is text a branch printed; step is a step's first line, to be
// numbered ("step N" before text).
type dryPiece struct {
	text string
	step bool
}

// put prints text as branch b's: at once on the run's own, else kept.
func (b *dryBranch) put(step bool, text string, d *dryRun) {
	if b.parent != nil {
		b.out = append(b.out, dryPiece{text: text, step: step})
		return
	}
	if step {
		d.steps++
		text = "step " + strconv.Itoa(d.steps) + text
	}
	io.WriteString(d.w, text)
}

// dryOut is a writer of branch b's text.
type dryOut struct {
	d *dryRun
	b *dryBranch
}

func (o dryOut) Write(p []byte) (int, error) {
	o.b.put(false, string(p), o.d)
	return len(p), nil
}

// out is a writer of b's text; the caller holds d.mu.
func (d *dryRun) out(b *dryBranch) dryOut { return dryOut{d: d, b: b} }

// current is the branch the calls are of; the caller holds d.mu.
func (d *dryRun) current() *dryBranch {
	if d.cur == nil {
		return &d.root
	}
	return d.cur
}

// branchOf is the branch node id runs in; the caller holds d.mu.
func (d *dryRun) branchOf(id string) *dryBranch {
	if b := d.byNode[id]; b != nil {
		return b
	}
	return d.current()
}

// BranchStarted, BranchEnded and OnBranch make dryRun a
// run.BranchProgress.
func (d *dryRun) BranchStarted(id, fork, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.current()
	b := &dryBranch{id: id, parent: p}
	p.kids = append(p.kids, b)
	if d.byID == nil {
		d.byID, d.seq = map[string]*dryBranch{}, map[string]int{}
	}
	d.byID[id] = b
	d.seq[id] = len(d.seq)
}

func (d *dryRun) BranchEnded(id, status string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.byID[id]
	if b == nil {
		return
	}
	delete(d.byID, id)
	b.ended = true
	d.flush(b.parent, false)
}

// flush prints what p's forks' branches kept, in order, as p's: the
// branches that ended up to the first still running, or all; the caller
// holds d.mu.
func (d *dryRun) flush(p *dryBranch, all bool) {
	for len(p.kids) > 0 && (all || p.kids[0].ended) {
		k := p.kids[0]
		p.kids[0] = nil
		p.kids = p.kids[1:]
		if all {
			d.flush(k, true)
		}
		for _, pc := range k.out {
			p.put(pc.step, pc.text, d)
		}
		k.out = nil
	}
}

func (d *dryRun) OnBranch(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cur = d.byID[id] // nil: the run's own
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
