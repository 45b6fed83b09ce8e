package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dtree-dev/dtree/internal/chart"
	"github.com/dtree-dev/dtree/types"
)

// GitHub Actions' limits on what plan --matrix prints
// (readme/ci.md#branches-on-separate-machines): a matrix makes at most
// 256 jobs, and a job's outputs hold at most 1 MB.
const (
	matrixMaxJobs  = 256
	matrixMaxBytes = 1 << 20
)

type planOptions struct {
	chartFlags
	page   string
	fork   string
	matrix bool
}

func (a *App) newPlan() *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use:   "plan --matrix CHART",
		Short: "Print a fork's branches as a GitHub Actions job matrix",
		Long: `Plan --matrix reads CHART (a file, or - for stdin) and prints the branches of
its fork as one line of JSON for a job's strategy.matrix, a job per branch:
{"include":[{"name":…,"id":…,"fork":…,"first":…,"artifact":…},…]}.
Each job runs 'dtree run CHART --branch ID' on its own machine, and a later
job joins them.

The fork is the page's first in chart order (stderr says so when there are
more); --fork names another. A fork nested in a branch, a fork a loop
comes back to, and a fork of more than 256 branches (GitHub's limit) are
errors, exit 2; a chart with errors exits 3.

Docs: dtree docs ci, dtree docs parallel`,
		Example: `  dtree plan --matrix chart.yaml                            # a job output, for fromJSON
  dtree plan --matrix --fork release --page Main chart.csv  # another fork`,
		Args: oneChart,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !o.matrix {
				return &UsageError{Err: fmt.Errorf("plan prints a job matrix and needs --matrix"), Cmd: cmd.CommandPath(),
					Hint: "dtree plan --matrix " + args[0] + " ('dtree docs ci')"}
			}
			return a.plan(args[0], o)
		},
	}
	o.register(cmd.Flags())
	cmd.Flags().BoolVar(&o.matrix, "matrix", false, "print the fork's branches as JSON for a GitHub Actions strategy.matrix")
	cmd.Flags().StringVar(&o.page, "page", "", "the page whose fork to plan: its id, title or number (default: the first, as dtree run)")
	cmd.Flags().StringVar(&o.fork, "fork", "", "the fork to plan: its node's id or text (default: the page's first fork)")
	return cmd
}

// matrixBranch is one job of the matrix: one branch of the fork.
type matrixBranch struct {
	Name     string `json:"name"`     // the branch's name: its line's label, or its first step's id
	ID       string `json:"id"`       // FORK/NAME, what dtree run --branch takes
	Fork     string `json:"fork"`     // the fork's node id
	First    string `json:"first"`    // the branch's first step
	Artifact string `json:"artifact"` // a name for its run directory's artifact, unique in the matrix
}

func (a *App) plan(path string, o planOptions) error {
	c, _, err := a.load(path, o.chartFlags)
	if err != nil {
		return err
	}
	var page types.Page
	if len(c.Doc.Pages) > 0 {
		p, err := choosePage(c, cmp.Or(o.page, c.Doc.Pages[0].ID))
		if err != nil {
			return err
		}
		page = *p
	}
	if err := a.checkPage(c, path, &page, false); err != nil {
		return err
	}
	fork, err := a.matrixFork(c, page, o.fork)
	if err != nil {
		return err
	}
	n := &c.Doc.Nodes[fork]
	if len(n.Fork.Branches) > matrixMaxJobs {
		return &UsageError{
			Err: fmt.Errorf("%s: fork %s has %d branches, and a GitHub Actions matrix makes at most %d jobs",
				c.Doc.Source, n.Describe(), len(n.Fork.Branches), matrixMaxJobs),
			Hint: "run it on one machine ('dtree run'), or split the fork into forks of at most 256 branches",
		}
	}
	m := struct {
		Include []matrixBranch `json:"include"`
	}{Include: make([]matrixBranch, len(n.Fork.Branches))}
	for i, b := range n.Fork.Branches {
		m.Include[i] = matrixBranch{Name: b.Name, ID: n.ID + "/" + b.Name, Fork: n.ID, First: b.First,
			Artifact: artifactName(i, b.Name)}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	if buf.Len() > matrixMaxBytes {
		return &UsageError{
			Err: fmt.Errorf("%s: the matrix of fork %s is %d bytes, and a GitHub Actions job's outputs hold at most 1 MB",
				c.Doc.Source, n.Describe(), buf.Len()),
			Hint: "shorten the branches' labels",
		}
	}
	// One line, for "matrix=…" in $GITHUB_OUTPUT; masked, and inert under
	// GitHub Actions (readme/ci.md#github-actions), which keeps its value.
	_, err = a.maskedOut(true).Write(buf.Bytes())
	return err
}

// artifactName names the artifact of branch i (from 0): upload-artifact
// refuses " : < > | * ? \ / and line breaks in a name, and a name must be
// unique in the workflow run; the branch's number makes it so, and its
// name, cut and with anything else made "-", makes it readable.
func artifactName(i int, name string) string {
	var b strings.Builder
	b.WriteString("dtree-branch-")
	b.WriteString(strconv.Itoa(i + 1))
	b.WriteByte('-')
	n := 0
	for _, r := range name {
		if n == 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		n++
	}
	return strings.TrimRight(b.String(), "-.")
}

// matrixFork picks the fork whose branches become the matrix: the one sel
// names (its id or text), or the first of the page's outer forks in chart
// order, saying so when there are more. A fork inside another's branch
// runs on that branch's machine, and a fork a loop comes back to would run
// again after the join: neither is a matrix.
func (a *App) matrixFork(c *chart.Chart, page types.Page, sel string) (int, error) {
	g := c.Graph
	enclosing := outerForks(c, page)
	var forks []int // the page's outer forks, in chart order
	for i := range c.Doc.Nodes {
		n := &c.Doc.Nodes[i]
		if n.Page == page.ID && n.Fork != nil && enclosing[i] == outside {
			forks = append(forks, i)
		}
	}
	fork := -1
	if sel == "" {
		if len(forks) == 0 {
			return 0, a.noFork(c, page)
		}
		fork = forks[0]
		if len(forks) > 1 {
			ids := make([]string, len(forks))
			for k, i := range forks {
				ids[k] = c.Doc.Nodes[i].ID
			}
			fmt.Fprintf(a.Err, "dtree: note: %s has %d forks (%s): the matrix is the first's, %s; pass --fork ID for another\n",
				c.Doc.Source, len(forks), visible(strings.Join(ids, ", ")), visible(c.Doc.Nodes[fork].Describe()))
		}
	} else {
		matches := c.FindNode(page.ID, sel)
		switch len(matches) {
		case 0:
			return 0, &UsageError{Err: fmt.Errorf("%s: --fork %q: no node on page %s has that id or text%s", c.Doc.Source, sel, page.ID, c.NearNode(page.ID, sel)),
				Hint: "'dtree inspect CHART' lists the nodes with their ids, a fork marked 'fork of N'"}
		case 1:
		default:
			return 0, &UsageError{Err: fmt.Errorf("%s: --fork %q: nodes %s all have that text", c.Doc.Source, sel, strings.Join(matches, ", ")),
				Hint: "pass the id of the fork"}
		}
		fork, _ = g.Index(matches[0])
		n := &c.Doc.Nodes[fork]
		switch in := enclosing[fork]; {
		case n.Fork == nil:
			return 0, &UsageError{Err: fmt.Errorf("%s: --fork %q: node %s is not a fork", c.Doc.Source, sel, n.Describe()),
				Hint: forksHint(c, forks)}
		case in == unreached:
			return 0, &UsageError{Err: fmt.Errorf("%s: fork %s is not reached from the page's start, so no run takes its branches", c.Doc.Source, n.Describe()),
				Hint: forksHint(c, forks)}
		case in != outside:
			outer := &c.Doc.Nodes[in.fork]
			return 0, &UsageError{
				Err: fmt.Errorf("%s: fork %s is inside branch %q of fork %s: a nested fork is not a matrix; it runs on its branch's machine",
					c.Doc.Source, n.Describe(), outer.Fork.Branches[in.branch].Name, outer.Describe()),
				Hint: fmt.Sprintf("plan the outer fork: --fork %s", outer.ID),
			}
		}
	}
	n := &c.Doc.Nodes[fork]
	if join, ok := g.Index(n.Fork.Join); ok && g.ReachableUntil(join, nil)[fork] {
		return 0, &UsageError{
			Err: fmt.Errorf("%s: fork %s is in a loop: a line after its join %s leads back to it, and a matrix runs the branches once",
				c.Doc.Source, n.Describe(), n.Fork.Join),
			Hint: "run the chart on one machine ('dtree run'), or keep the loop inside a branch",
		}
	}
	return fork, nil
}

func (a *App) noFork(c *chart.Chart, page types.Page) error {
	where := c.Doc.Source
	if page.ID != "" && len(c.Doc.Pages) > 1 {
		where = fmt.Sprintf("%s, page %s,", c.Doc.Source, page.ID)
	}
	return &UsageError{Err: fmt.Errorf("%s has no fork: no step is marked parallel: true, so there are no branches to plan", where),
		Hint: "'dtree docs parallel' says how to draw a fork; a chart without one runs with 'dtree run'"}
}

func forksHint(c *chart.Chart, forks []int) string {
	if len(forks) == 0 {
		return "the page has no fork to plan ('dtree docs parallel')"
	}
	ids := make([]string, 0, min(len(forks), 10))
	for _, i := range forks[:min(len(forks), 10)] {
		ids = append(ids, c.Doc.Nodes[i].ID)
	}
	more := ""
	if len(forks) > 10 {
		more = ", …"
	}
	return fmt.Sprintf("the page's forks: %s%s", visible(strings.Join(ids, ", ")), more)
}

// inBranch says where a node stands: outside every fork, in a branch of
// an outer fork (fork, branch), or not reached from the start.
type inBranch struct{ fork, branch int }

var (
	outside   = inBranch{-1, -1}
	unreached = inBranch{-2, -2}
)

// outerForks walks the page from its start once: a fork reached outside
// every branch is an outer one, its branches are walked up to its join,
// and the walk goes on from the join. Each node is visited once, so the
// walk is linear however deep forks nest.
func outerForks(c *chart.Chart, page types.Page) []inBranch {
	g := c.Graph
	where := make([]inBranch, len(c.Doc.Nodes))
	for i := range where {
		where[i] = unreached
	}
	root, ok := g.Index(page.Root)
	if !ok {
		return where
	}
	var stack, inner []int
	where[root] = outside
	stack = append(stack, root)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := &c.Doc.Nodes[i]
		if n.Fork == nil {
			g.Successors(i, func(j, _ int) {
				if where[j] == unreached {
					where[j] = outside
					stack = append(stack, j)
				}
			})
			continue
		}
		join, hasJoin := g.Index(n.Fork.Join)
		for b, br := range n.Fork.Branches {
			first, ok := g.Index(br.First)
			if !ok || (hasJoin && first == join) || where[first] != unreached {
				continue
			}
			here := inBranch{i, b}
			where[first] = here
			inner = append(inner[:0], first)
			for len(inner) > 0 {
				k := inner[len(inner)-1]
				inner = inner[:len(inner)-1]
				g.Successors(k, func(j, _ int) {
					if where[j] == unreached && (!hasJoin || j != join) {
						where[j] = here
						inner = append(inner, j)
					}
				})
			}
		}
		if hasJoin && where[join] == unreached {
			where[join] = outside
			stack = append(stack, join)
		}
	}
	return where
}

// checkBranch refuses a --branch that is not FORK/NAME of a branch of a
// fork a matrix could run (matrixFork): nothing runs then.
func (a *App) checkBranch(c *chart.Chart, page types.Page, id string) error {
	if id == "" {
		return nil
	}
	var all []string
	for i := range c.Doc.Nodes {
		n := &c.Doc.Nodes[i]
		if n.Page != page.ID || n.Fork == nil {
			continue
		}
		for _, b := range n.Fork.Branches {
			if n.ID+"/"+b.Name == id {
				_, err := a.matrixFork(c, page, n.ID)
				return err
			}
			if len(all) < 10 {
				all = append(all, n.ID+"/"+b.Name)
			}
		}
	}
	if len(all) == 0 {
		return a.noFork(c, page)
	}
	return &UsageError{Err: fmt.Errorf("%s: --branch %q: no fork on page %s has that branch", c.Doc.Source, id, page.ID),
		Hint: fmt.Sprintf("a branch is FORK/NAME, as 'dtree plan --matrix' prints it: %s", visible(strings.Join(all, ", ")))}
}
