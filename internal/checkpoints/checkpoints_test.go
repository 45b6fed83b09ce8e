package checkpoints

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// c is a commit id made of one hex digit.
func c(d string) string { return strings.Repeat(d, 40) }

func line(event, fields string) string {
	return fmt.Sprintf(`{"time":"2026-11-26T23:00:00Z","event":%q,%s}`, event, fields)
}

func nodeStart(run, node string, visit int) string {
	return line("node_start", fmt.Sprintf(`"cli":"sh","node":%q,"role":"process","run_id":%q,"visit":%d`, node, run, visit))
}

func nodeEnd(run, node string, visit int, from, to string) string {
	change := ""
	if from != "" {
		change = fmt.Sprintf(`"change":{"added":1,"files":1,"from":%q,"paths":[],"removed":0,"to":%q},`, from, to)
	}
	return line("node_end", fmt.Sprintf(`%s"command":"","error":"","label":"","next":"","node":%q,"output":"","response":null,"run_id":%q,"status":"succeeded","usage":{},"validation":null,"visit":%d`,
		change, node, run, visit))
}

// branched is event line ev as a fork branch's: its id after the name.
func branched(branch, ev string) string {
	i := strings.Index(ev, `","event":"`) + len(`","event":"`)
	j := i + strings.Index(ev[i:], `"`) + 1
	return ev[:j] + `,"branch":"` + branch + `"` + ev[j:]
}

// loop is a run of a loop chart: a, b, a again, then c, with its
// checkpoints 1 (before the run) to 5.
var loop = []string{
	line("run_start", `"run_id":"R"`),
	line("workspace", `"checkpoint":"`+c("1")+`","ref":"refs/dtree/runs/R","repo":"/repo","run_id":"R"`),
	nodeStart("R", "a", 1), nodeEnd("R", "a", 1, c("1"), c("2")),
	nodeStart("R", "b", 1), nodeEnd("R", "b", 1, c("2"), c("2")),
	nodeStart("R", "a", 2), nodeEnd("R", "a", 2, c("2"), c("3")),
	nodeStart("R", "c", 1), nodeEnd("R", "c", 1, c("3"), c("4")),
}

func TestFind(t *testing.T) {
	t.Parallel()
	resumed := []string{
		line("run_start", `"run_id":"R2","resumed_from":"R"`),
		line("workspace", `"checkpoint":"`+c("5")+`","ref":"refs/dtree/runs/R2","repo":"/repo","run_id":"R2"`),
		// carried from R: its checkpoints, on R's ref
		nodeStart("R", "a", 1), nodeEnd("R", "a", 1, c("1"), c("2")),
		nodeStart("R2", "b", 1), nodeEnd("R2", "b", 1, c("5"), c("6")),
	}
	started := append(append([]string{}, loop...), nodeStart("R", "d", 1), nodeStart("R", "a", 3))
	outside := []string{line("run_start", `"run_id":"R"`), nodeStart("R", "a", 1), nodeEnd("R", "a", 1, "", "")}
	off := []string{line("run_start", `"run_id":"R"`), line("workspace", `"off":"git write-tree: disk full","run_id":"R"`),
		nodeStart("R", "a", 1), nodeEnd("R", "a", 1, "", "")}
	stopped := []string{line("run_start", `"run_id":"R"`),
		line("workspace", `"checkpoint":"`+c("1")+`","ref":"refs/dtree/runs/R","repo":"/repo","run_id":"R"`),
		nodeStart("R", "a", 1), nodeEnd("R", "a", 1, c("1"), c("2")),
		line("workspace", `"off":"git add: no space left on device","run_id":"R"`),
		nodeStart("R", "b", 1), nodeEnd("R", "b", 1, "", "")}
	inChart := func(id string) bool { return id == "x" || id == "a" }
	// a fork of a and b after p: each branch's checkpoints are of its
	// own worktree; the join merged them into 6, where j went on
	fork := []string{line("run_start", `"run_id":"R"`),
		line("workspace", `"checkpoint":"`+c("1")+`","ref":"refs/dtree/runs/R","repo":"/repo","run_id":"R"`),
		nodeStart("R", "p", 1), nodeEnd("R", "p", 1, c("1"), c("2")),
		branched("plan/a", nodeStart("R", "a", 1)), branched("plan/b", nodeStart("R", "b", 1)),
		branched("plan/a", nodeEnd("R", "a", 1, c("2"), c("3"))), branched("plan/b", nodeEnd("R", "b", 1, c("2"), c("4"))),
		line("join", `"branches":["plan/a","plan/b"],"checkpoint":"`+c("6")+`","fork":"p","mode":"all","node":"j","run_id":"R"`),
		nodeStart("R", "j", 1), nodeEnd("R", "j", 1, c("6"), c("7"))}
	// the same, failed in branch b: the working tree is still the fork's
	forkFailed := fork[:8]

	tests := []struct {
		name     string
		log      []string
		spec     string // "" for the whole run
		from, to string
		err      string // what the error says
		hint     string
	}{
		{name: "whole run", log: loop, from: c("1"), to: c("4")},
		{name: "node: its last visit", log: loop, spec: "a", from: c("2"), to: c("3")},
		{name: "NODE@VISIT", log: loop, spec: "a@1", from: c("1"), to: c("2")},
		{name: "a visit that changed nothing", log: loop, spec: "b", from: c("2"), to: c("2")},
		{name: "a visit out of range", log: loop, spec: "a@3", err: "node a has no visit 3 in run R: it ran 2 times (a@1 to a@2)", hint: "give a@1 to a@2, or a for its last visit"},
		{name: "visit 0", log: loop, spec: "c@0", err: "node c has no visit 0 in run R: it ran once (c@1)", hint: "give c@1, or c"},
		{name: "unknown node", log: loop, spec: "zz", err: "run R has no node zz", hint: "give a node that ran, by its id: a, b, c"},
		{name: "a node of the chart that did not run", log: loop, spec: "x", err: "node x did not run in run R", hint: "give a node that ran: a, b, c"},
		{name: "a visit that did not finish", log: started, spec: "a@3", err: "node a did not finish its visit 3 in run R"},
		{name: "a node whose only visit did not finish", log: started, spec: "d", err: "node d did not finish its visit 1 in run R"},
		{name: "resumed: the whole run is its own", log: resumed, from: c("5"), to: c("6")},
		{name: "resumed: a carried visit", log: resumed, spec: "a", from: c("1"), to: c("2")},
		{name: "outside git", log: outside, err: "run R has no checkpoints: it ran outside a git repository", hint: "need a git repository"},
		{name: "outside git, a node", log: outside, spec: "a", err: "run R has no checkpoints: it ran outside a git repository"},
		{name: "checkpoints off", log: off, err: "run R has no checkpoints: git write-tree: disk full", hint: "this run took none"},
		{name: "checkpoints stopped: the run up to then", log: stopped, from: c("1"), to: c("2")},
		{name: "checkpoints stopped: a visit after", log: stopped, spec: "b", err: "node b's visit 1 in run R has no checkpoints: checkpoints stopped: git add: no space left on device"},
		{name: "fork: the whole run ends at the join's merge and after", log: fork, from: c("1"), to: c("7")},
		{name: "fork: a branch's step", log: fork, spec: "b", from: c("2"), to: c("4")},
		{name: "fork failed in a branch: the run's tree is the fork's", log: forkFailed, from: c("1"), to: c("2")},
		{name: "a node id with @ in it", log: []string{loop[0], loop[1], nodeStart("R", "me@2", 1), nodeEnd("R", "me@2", 1, c("1"), c("7"))},
			spec: "me@2", from: c("1"), to: c("7")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, err := Read(strings.NewReader(strings.Join(tt.log, "\n")+"\n"), "R")
			require.NoError(t, err)
			from, to := rec.Before, rec.Last
			err = rec.Check()
			if err == nil && tt.spec != "" {
				var v Visit
				v, err = rec.Find(tt.spec, inChart)
				from, to = v.From, v.To
			}
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				var e *Error
				require.ErrorAs(t, err, &e)
				assert.Contains(t, e.Hint, tt.hint)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.from, from)
			assert.Equal(t, tt.to, to)
		})
	}
}

func TestFindListsNodesBounded(t *testing.T) {
	t.Parallel()
	log := []string{loop[0], loop[1]}
	for i := range 10000 {
		n := fmt.Sprintf("n%d", i)
		log = append(log, nodeStart("R", n, 1), nodeEnd("R", n, 1, c("1"), c("1")))
	}
	rec, err := Read(strings.NewReader(strings.Join(log, "\n")), "R")
	require.NoError(t, err)
	_, err = rec.Find("nope", nil)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Contains(t, e.Hint, "n0, n1, ")
	assert.Contains(t, e.Hint, "n19 and 9980 more")
	assert.Less(t, len(e.Hint), 400)
}
