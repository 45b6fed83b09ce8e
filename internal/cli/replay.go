package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/internal/replay"
	"github.com/dtree-dev/dtree/types"
)

// loadAnswers reads an answers file, matches it to the chart, and hands
// every agent call of the chart to the replay agent: the answers cover the
// whole run, validation and retries included. The runner it returns
// answers those calls, in process (readme/replay.md).
func loadAnswers(c *chart.Chart, page types.Page, path string) (*replay.Runner, error) {
	ans, err := replay.Load(path)
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--answers: %w", err)}
	}
	plan, err := replayPlan(c, page, ans)
	if err != nil {
		return nil, err
	}
	replaced := map[*types.Settings]*types.Settings{}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Settings == nil || !n.Step.Agent() {
			continue // no agent's call to answer
		}
		s, ok := replaced[n.Settings]
		if !ok {
			copied := *n.Settings
			copied.CLI, copied.ValidateCLI, copied.RetryCLI = "replay", "replay", "replay"
			s = &copied
			replaced[n.Settings] = s
		}
		n.Settings = s
	}
	return replay.NewRunner(plan), nil
}

// replayCommand is the command that replays a run from its answers.yaml:
// the chart, then the flags that choose the path it takes.
func replayCommand(chartPath string, flags []string, answers string) string {
	args := append([]string{"dtree", "run", chartPath}, flags...)
	return shellJoin(append(args, "--answers", answers))
}

// givenFlags are the flags of fs among names that were given, as typed:
// --name VALUE, or for a bool --name (--name=false when false).
func givenFlags(fs *pflag.FlagSet, names ...string) []string {
	var args []string
	for _, name := range names {
		f := fs.Lookup(name)
		switch {
		case f == nil || !f.Changed:
		case f.Value.Type() == "bool" && f.Value.String() == "true":
			args = append(args, "--"+name)
		case f.Value.Type() == "bool":
			args = append(args, "--"+name+"="+f.Value.String())
		default:
			args = append(args, "--"+name, f.Value.String())
		}
	}
	return args
}

// warnUnused says which replies of the answers file a replay that reached
// its end left over: the chart, or the file, has changed since they
// matched, and a CI check would want to know.
func warnUnused(w io.Writer, r *replay.Runner) {
	for _, l := range r.Unused() {
		fmt.Fprintf(w, "dtree: warning: %s:%d: node %s %s: %s not used by this run\n", r.Answers(), l.Line, l.ID, types.Quote(types.Excerpt(l.Text, 60)), types.Plural(l.Left, "reply"))
	}
}

// replayPlan matches the answers file's nodes to the chart for the replay
// agent. The page's other nodes are in the plan without replies, so that
// the replay agent can name them when they are called.
func replayPlan(c *chart.Chart, page types.Page, ans *replay.Answers) (*replay.Plan, error) {
	nodes, err := ans.Resolve(func(key string) []string { return c.FindNode(page.ID, key) },
		func(id string) (string, string) {
			i, _ := c.Graph.Index(id)
			return c.Doc.Nodes[i].Text, c.Nodes[i].Role
		},
		func(key string) string { return c.NearNode(page.ID, key) })
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--answers: %w", err)}
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if _, ok := nodes[n.ID]; !ok && n.Page == page.ID && n.Role != types.RoleTerminator {
			nodes[n.ID] = &replay.Node{Text: c.Doc.Nodes[i].Text, Decision: n.Role == types.RoleDecision}
		}
	}
	// The file as read, not a link to it: replaying runs/latest/answers.yaml
	// moves latest to the new run before any message names the file.
	path := ans.Path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &replay.Plan{Answers: path, Nodes: nodes, Recorded: ans.Recorded}, nil
}
