package run

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/prompts"
	"github.com/dtree-dev/dtree/types"
)

// Forks (readme/parallel.md): a fork's lines are branches that run side
// by side, each in a goroutine and a git worktree of its own made from
// the fork's checkpoint, until they reach the fork's join. The branches
// take turns at what they share (walker.mu): a branch lets go of it only
// while it waits (an agent call, a command, a backoff, a slot or a place
// of --parallel, its own fork's branches), so everything else a step
// does is as in a run of one branch.

// take makes the walker b's: it waits for the branch holding it to let
// go.
func (w *walker) take(b *branch) {
	w.mu.Lock()
	w.cur = b
	if w.forked {
		if bp, ok := w.o.Progress.(BranchProgress); ok {
			bp.OnBranch(b.id)
		}
	}
}

// release lets go of the walker while the branch holding it waits, and
// returns the branch, for take after.
func (w *walker) release() *branch {
	b := w.cur
	w.mu.Unlock()
	return b
}

// pause waits d, or until ctx ends, with the walker let go.
func (w *walker) pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	b := w.release()
	defer w.take(b)
	return sleep(ctx, d)
}

// BranchProgress is a Progress told of a run's branches: when a fork
// starts and ends them, and, once a run has more than one, which branch
// the calls that follow OnBranch are of (until the next OnBranch).
type BranchProgress interface {
	BranchStarted(id, fork, name string)
	BranchEnded(id, status string)
	OnBranch(id string)
}

// ErrForkNeedsGit is a fork in a run without checkpoints: its branches
// work in worktrees made from the fork's checkpoint.
var ErrForkNeedsGit = errors.New("a fork's branches run in git worktrees made from the fork's checkpoint")

// errJoinedFirst stops the other branches of a join: any once one
// arrived.
var errJoinedFirst = errors.New("another branch reached the join first")

// forkResult is how one branch of a fork ended; stopped: by another
// branch, or by the run's end (its error is what followed from that).
type forkResult struct {
	i       int
	err     error
	stopped bool
}

// fork starts a branch for each line of fork node n (its visit-th) on
// branch p, waits for them at the join, merges their changes into p's
// tree and returns the join's index, where p goes on.
func (w *walker) fork(ctx context.Context, p *branch, n *types.ProcessedNode, visit int) (int, error) {
	f := n.Fork
	join, ok := w.o.Chart.Graph.Index(f.Join)
	if !ok { // lint's fork_without_join refuses such a chart first
		return 0, fmt.Errorf("node %s is a fork whose branches never meet", n.ID)
	}
	t := p.tree
	// A run that writes nothing (a dry run) walks the branches in the
	// one tree; any other needs the checkpoints.
	isolated := t.ws != nil
	if !isolated && w.o.Log != nil {
		why := "the run is not in a git repository"
		if w.o.Workspace != nil {
			why = "the run's checkpoints are off (its workspace event says why)"
		}
		return 0, fmt.Errorf("node %s: %w, and %s", n.ID, ErrForkNeedsGit, why)
	}
	base := ""
	if isolated {
		base = t.ws.Last.Commit // the fork's visit ended with a checkpoint
		// Held until the branches' trees are removed (the defers run
		// last first): dtree clean removes them only when the run died.
		release, err := t.ws.Repo.HoldBranchTrees(w.o.Log.RunID)
		if err != nil {
			return 0, &ForkError{Err: fmt.Errorf("fork %s: %w", n.ID, err)}
		}
		defer release()
	}
	w.forked = true
	children := make([]*branch, 0, len(f.Branches))
	defer func() {
		for _, c := range children {
			w.dropTree(c)
		}
	}()
	for _, fb := range f.Branches {
		c, err := w.startBranch(ctx, p, n, visit, fb, join, base)
		if err != nil {
			return 0, err
		}
		children = append(children, c)
	}
	return w.runBranches(ctx, p, n, join, base, children)
}

// runBranches walks the branches of fork n side by side, each from its
// node, waits for them at the join, merges their changes onto base into
// p's tree and returns the join's index, where p goes on.
func (w *walker) runBranches(ctx context.Context, p *branch, n *types.ProcessedNode, join int, base string, children []*branch) (int, error) {
	isolated := base != ""
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan forkResult)
	// The branches start in the fork's order (their branch_start events,
	// their lines in the progress), each once the one before it has.
	started := make([]chan struct{}, len(children))
	for i := range started {
		started[i] = make(chan struct{})
	}
	for i, c := range children {
		go func() {
			var err error
			if i > 0 {
				select {
				case <-started[i-1]:
				case <-bctx.Done():
					err = bctx.Err()
				}
			}
			// At most --parallel branches run at once; one that waits for
			// its fork's branches lets go of its place meanwhile.
			if err == nil {
				err = w.enter(bctx, c)
			}
			w.take(c)
			if err == nil && c.prepare != nil {
				err = c.prepare(bctx)
			}
			c.prepare = nil
			close(started[i])
			if err == nil {
				err = w.walkBranch(bctx, c)
			}
			var stopped error // what stopped it, when it did not end by itself
			if err != nil && bctx.Err() != nil {
				stopped = context.Cause(bctx)
			}
			if err == nil {
				c.tip, c.tipErr = w.lastCheckpoint(ctx, c)
			}
			w.endBranch(c, err, stopped)
			w.dropTree(c) // its checkpoints have what the join merges
			w.mu.Unlock()
			w.leave(c)
			done <- forkResult{i, err, stopped != nil}
		}()
	}
	mode := joinMode(w.node(join))
	errs := make([]error, len(children))
	first, winner := -1, -1
	w.release()
	w.leave(p)
	for range children {
		r := <-done
		errs[r.i] = r.err
		switch {
		case r.err == nil:
			if mode == types.JoinAny && winner < 0 {
				winner = r.i
				cancel(errJoinedFirst)
			}
		case r.stopped || first >= 0:
			// What stopping it led to, or after the failure that stops
			// them all.
		case mode == types.JoinAny && isNodeFailure(r.err):
			// Another branch may still get there.
		default:
			first = r.i
			cancel(r.err) // the others stop
		}
	}
	w.enterAgain(p)
	w.take(p)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	merged := children
	switch {
	case first >= 0:
		return 0, errs[first]
	case mode == types.JoinAny && winner < 0: // every branch failed: the fork's first
		for _, err := range errs {
			if err != nil {
				return 0, err
			}
		}
	case mode == types.JoinAny:
		merged = children[winner : winner+1]
	}
	if isolated {
		if err := w.merge(ctx, p, n, w.node(join), mode, base, merged); err != nil {
			return 0, err
		}
	}
	for _, c := range merged {
		p.takeIn(c)
	}
	return join, nil
}

// isNodeFailure is a branch's step that failed its attempts: under join
// any the other branches go on.
func isNodeFailure(err error) bool {
	var failed *NodeFailedError
	return errors.As(err, &failed)
}

// joinMode is the join's custom data join, all when unset.
func joinMode(n *types.ProcessedNode) string {
	if v, ok := types.MetadataValue(n.Node, types.KeyJoin); ok && strings.EqualFold(strings.TrimSpace(v), types.JoinAny) {
		return types.JoinAny
	}
	return types.JoinAll
}

// startBranch makes the branch of fork n that line fb starts: its
// worktree from the fork's checkpoint base, its checkpoints, and its copy
// of p's visits and history.
func (w *walker) startBranch(ctx context.Context, p *branch, n *types.ProcessedNode, visit int, fb types.ForkBranch, join int, base string) (*branch, error) {
	first, _ := w.o.Chart.Graph.Index(fb.First)
	id := n.ID + "/" + fb.Name
	if visit > 1 {
		id = n.ID + "#" + strconv.Itoa(visit) + "/" + fb.Name
	}
	path := []string{}
	c := &branch{id: id, name: fb.Name, fork: n.ID, cur: first, stop: join, path: &path,
		visits: maps.Clone(p.visits), history: slices.Clone(p.history), historyLeftOut: p.historyLeftOut,
		last: maps.Clone(p.last)}
	c.forkAt = c.steps()
	if base == "" { // a dry run's: the one tree
		c.tree = p.tree
		w.branchStarted(c, n, fb, "")
		return c, nil
	}
	// Its worktree is made when it gets to run (runBranches): a fork of
	// more branches than --parallel has at most that many checkouts
	// being worked in, and the first branch starts without waiting for
	// the others' worktrees.
	repo, prefix := p.tree.ws.Repo, p.tree.workdirPrefix()
	key := branchKey(n.ID, visit, fb.Name)
	c.prepare = func(ctx context.Context) error {
		ctx = context.WithoutCancel(ctx)
		wt, err := repo.AddBranchTree(ctx, w.o.Log.RunID, key, base)
		if err != nil {
			return &ForkError{Err: fmt.Errorf("fork %s: branch %s: %w", n.ID, types.Quote(fb.Name), err)}
		}
		c.tree = &tree{wt: wt, dir: filepath.Join(wt.Dir, prefix)}
		ws, err := wt.Repo.Begin(ctx, workspace.BranchRunID(w.o.Log.RunID, key), base)
		if err != nil {
			w.dropTree(c)
			return &ForkError{Err: fmt.Errorf("fork %s: branch %s: %w", n.ID, types.Quote(fb.Name), err)}
		}
		c.tree.ws, c.tree.fresh, c.tree.first = ws, true, ws.Last.Commit
		w.branchStarted(c, n, fb, base)
		return nil
	}
	return c, nil
}

// branchKey names the worktree and the checkpoints' ref of the branch
// named name of fork node fork, its visit-th (workspace.BranchDirName):
// its id, FORK/NAME or FORK#VISIT/NAME, but with a node id or a name
// holding '/', '#' or '"' in double quotes, as Go quotes a string. Two
// branches can have one id (fork a's branch b/x and fork a/b's branch x
// are both a/b/x), never one key (a/"b/x" and "a/b"/x): they would
// share a worktree, the second's AddBranchTree removing the first's as
// it runs, and a ref.
func branchKey(fork string, visit int, name string) string {
	part := func(s string) string {
		if strings.ContainsAny(s, `/#"`) {
			return strconv.Quote(s)
		}
		return s
	}
	id := part(fork)
	if visit > 1 {
		id += "#" + strconv.Itoa(visit)
	}
	return id + "/" + part(name)
}

// branchStarted says that branch c of fork n started.
func (w *walker) branchStarted(c *branch, n *types.ProcessedNode, fb types.ForkBranch, base string) {
	ev := runlog.BranchStart{Fork: n.ID, Name: fb.Name, First: fb.First, Checkpoint: base}
	if c.tree.wt != nil {
		ev.Worktree = c.tree.wt.Dir
	}
	prev := w.cur
	w.cur = c
	w.event(ev)
	w.cur = prev
	if bp, ok := w.o.Progress.(BranchProgress); ok {
		bp.BranchStarted(c.id, n.ID, fb.Name)
		if w.cur == c { // it got to run: what follows is its
			bp.OnBranch(c.id)
		}
	}
}

// endBranch records how branch c ended, with its last checkpoint:
// stopped is what stopped it (another branch's failure, the join any's
// first, an interrupt), nil when it ended by itself.
func (w *walker) endBranch(c *branch, err, stopped error) {
	status := StatusSucceeded
	msg := ""
	switch {
	case err == nil:
	case errors.Is(stopped, context.Canceled):
		status, msg = StatusInterrupted, "interrupted"
	case stopped != nil:
		status, msg = StatusInterrupted, "stopped: "+firstLine(stopped.Error())
	default:
		// As the run's status says the same error (outcome).
		status, msg = StatusFailed, err.Error()
		switch {
		case errors.As(err, new(*BudgetError)):
			status = StatusBudget
		case errors.As(err, new(*LimitError)):
			status = StatusLimit
		case errors.As(err, new(*WaitingError)):
			status = StatusWaiting
		}
	}
	w.sum.Branches = append(w.sum.Branches, BranchResult{ID: c.id, Fork: c.fork, Name: c.name, Join: w.node(c.stop).ID, Status: status,
		Error: msg, Path: *c.path})
	if c.tree == nil { // stopped before it got to run: it never started
		return
	}
	ev := runlog.BranchEnd{Status: status, Error: msg, Path: *c.path}
	if c.tree.ws != nil {
		ev.Checkpoint = c.tree.ws.Last.Commit
	}
	w.event(ev)
	if bp, ok := w.o.Progress.(BranchProgress); ok {
		bp.BranchEnded(c.id, status)
	}
}

// enter waits for a place among the branches that run at once
// (--parallel), for branch c; the run's own branch needs none. It is
// called with the walker let go.
func (w *walker) enter(ctx context.Context, c *branch) error {
	select {
	case w.places <- struct{}{}:
		c.running = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave gives up branch c's place, if it has one.
func (w *walker) leave(c *branch) {
	if c.running {
		c.running = false
		<-w.places
	}
}

// enterAgain takes back the place branch c left to wait for its fork's
// branches (they have all ended, so one is free soon); a second call
// does nothing.
func (w *walker) enterAgain(c *branch) {
	if c.id != "" && !c.running {
		w.places <- struct{}{}
		c.running = true
	}
}

// dropTree removes branch c's worktree; its checkpoints stay on its ref.
func (w *walker) dropTree(c *branch) {
	t := c.tree
	if t == nil || t.wt == nil {
		return
	}
	if t.ws != nil {
		t.ws.Close()
	}
	_ = w.o.Workspace.RemoveBranchTree(context.Background(), t.wt) // best effort: `git worktree prune` after
	t.wt = nil
}

// lastCheckpoint checkpoints branch c's tree as it got to its join, for
// the join to merge; its error is the join's.
func (w *walker) lastCheckpoint(ctx context.Context, c *branch) (string, error) {
	if c.tree == nil || c.tree.wt == nil {
		return "", nil // a dry run's branch: the one tree, nothing to merge
	}
	j := w.node(c.stop)
	if c.tree.ws == nil {
		why := "they were off"
		if c.tree.off != "" {
			why = "they went off: " + types.Excerpt(c.tree.off, 300)
		}
		return "", &ForkError{Err: fmt.Errorf("join %s: branch %s: its changes cannot be merged without its checkpoints, and %s (a step removed or broke its worktree?)", j.ID, ShownBranch(c.id), why)}
	}
	if _, err := c.tree.snap(context.WithoutCancel(ctx), "branch "+c.id+" at the join"); err != nil {
		return "", &ForkError{Err: fmt.Errorf("join %s: branch %s: %w", j.ID, ShownBranch(c.id), err)}
	}
	return c.tree.ws.Last.Commit, nil
}

// merge brings the changes of branches into p's tree at join node j, in
// their order: a conflict fails the join, unless it is a step an agent
// runs, which is then asked to resolve it (readme/parallel.md).
func (w *walker) merge(ctx context.Context, p *branch, fork, j *types.ProcessedNode, mode, base string, branches []*branch) error {
	ctx = context.WithoutCancel(ctx)
	tips := make([]workspace.Tip, 0, len(branches))
	names := make([]string, 0, len(branches))
	for _, c := range branches {
		if c.tipErr != nil {
			return c.tipErr
		}
		tips = append(tips, workspace.Tip{Name: c.id, Commit: c.tip})
		names = append(names, c.id)
	}
	// The run's tree may have changed while the branches ran (a person
	// at work in the checkout): it is merged first, as it is, so the
	// merge undoes nothing of it.
	t := p.tree
	t.fresh = false
	if _, err := t.snap(ctx, "the working tree at the join "+j.ID); err != nil {
		return &ForkError{Err: fmt.Errorf("join %s: %w", j.ID, err)}
	}
	if now := t.ws.Last.Commit; now != base {
		// A tree the same as the fork's (dtree join's, made anew of
		// trunk.patch) has nothing of its own to merge.
		if bt, err := t.ws.Repo.Tree(ctx, base); err != nil || bt != t.ws.Last.Tree {
			tips = append([]workspace.Tip{{Name: "the working tree", Commit: now}}, tips...)
		}
	}
	m, err := t.ws.Repo.MergeBranches(ctx, base, tips)
	if err != nil {
		return &ForkError{Err: fmt.Errorf("join %s: merging the branches: %w", j.ID, err)}
	}
	if _, err := t.ws.Restore(ctx, m.Commit, "merge of the branches of fork "+fork.ID+" at "+j.ID); err != nil {
		return &ForkError{Err: fmt.Errorf("join %s: merging the branches into the working tree: %w", j.ID, err)}
	}
	t.fresh = true
	ev := runlog.Join{Node: j.ID, Fork: fork.ID, Mode: mode, Branches: names, Checkpoint: t.ws.Last.Commit}
	for _, c := range m.Conflicts {
		ev.Conflicts = append(ev.Conflicts, c.Path)
	}
	w.event(ev)
	if m.Clean {
		return nil
	}
	p.conflicts, p.conflictLabels = m.Conflicts, m.Labels
	if _, ok := kindOf(j).(processStep); ok {
		return nil // its agent resolves them (conflictNote)
	}
	return &JoinConflictError{Node: j.ID, Text: firstLine(j.Text), Conflicts: conflictList(m.Conflicts)}
}

// ForkError is a fork whose branches could not be set up or merged (git
// failed: a worktree, a checkpoint, the merge): the run fails there, as
// at a step that failed (exit 1).
type ForkError struct{ Err error }

func (e *ForkError) Error() string { return e.Err.Error() }
func (e *ForkError) Unwrap() error { return e.Err }

// JoinConflictError is a join whose branches changed files both ways,
// which its kind of step cannot resolve (exit 1).
type JoinConflictError struct {
	Node, Text string
	Conflicts  string // the files and the branches that changed each
}

func (e *JoinConflictError) Error() string {
	return fmt.Sprintf("join %s %s: the branches' changes conflict in %s; the working tree has both sides between conflict markers, and each branch's own change is in its checkpoints (dtree diff RUN NODE, NODE a step of the branch). Resolve them and go on with dtree resume, which runs the join on the tree as it is; only a join an agent runs (a process step without a command) has its agent resolve them",
		e.Node, types.Quote(types.Excerpt(e.Text, errorTextRunes)), e.Conflicts)
}

// conflictList names conflicted files and the branches that changed
// them, bounded.
func conflictList(cs []workspace.Conflict) string {
	cs = shownConflicts(cs)
	const shown = 10
	parts := make([]string, 0, min(len(cs), shown))
	for _, c := range cs[:min(len(cs), shown)] {
		part := types.Quote(types.Clip(c.Path, maxName))
		if len(c.Branches) > 0 { // a resumed join's have none: its log names the files only
			part += " (" + strings.Join(c.Branches, ", ") + ")"
		}
		parts = append(parts, part)
	}
	return listed(parts, len(cs))
}

// shownConflicts is cs with each branch as a message shows it
// (ShownBranch).
func shownConflicts(cs []workspace.Conflict) []workspace.Conflict {
	out := make([]workspace.Conflict, len(cs))
	for i, c := range cs {
		out[i] = workspace.Conflict{Path: c.Path, Branches: make([]string, len(c.Branches))}
		for k, b := range c.Branches {
			out[i].Branches[k] = ShownBranch(b)
		}
	}
	return out
}

// ShownBranch is branch id (or a branch's name) as a message or a line
// of the progress shows it: as it is when a label made it of printable
// characters, one line and short; quoted and clipped otherwise, so that
// a label's line break, terminal escape or ten kilobytes do not reach a
// message or the terminal as they are.
func ShownBranch(id string) string {
	if utf8.RuneCountInString(id) <= maxBranchShown && types.Quote(id) == `"`+id+`"` && !strings.ContainsAny(id, ",()") {
		return id
	}
	return types.Quote(types.Clip(id, maxBranchShown))
}

// maxBranchShown bounds a branch id in a message, in runes.
const maxBranchShown = 100

// markersLeft is the critique of a join whose agent left conflict
// markers in a file the merge conflicted in: "" when none is left. It
// reads each file's first markersRead bytes, a link or a file that is
// not there as resolved, and names at most conflictsShown files.
func (b *branch) markersLeft() string {
	if b.tree == nil || b.tree.ws == nil {
		return ""
	}
	root := b.tree.ws.Repo.Root
	var left []string
	for _, c := range b.conflicts {
		p := filepath.Join(root, filepath.FromSlash(c.Path))
		if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if hasMarkers(p) {
			left = append(left, types.Quote(types.Clip(c.Path, maxName)))
		}
	}
	if len(left) == 0 {
		return ""
	}
	list := listed(left[:min(len(left), conflictsShown)], len(left))
	return fmt.Sprintf("the conflict markers (<<<<<<<, =======, >>>>>>>) are still in %s: resolve every conflict the merge of the branches left, and remove the markers", list)
}

// markersRead bounds what markersLeft reads of a file.
const markersRead = 8 << 20

// conflictsShown bounds the files a critique names.
const conflictsShown = 10

// hasMarkers says whether the file at p has a line that starts a side of
// a conflict, as git writes them: "<<<<<<< " or ">>>>>>> ".
func hasMarkers(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, markersRead))
	sc.Buffer(make([]byte, 0, 64<<10), markersRead)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte("<<<<<<< ")) || bytes.HasPrefix(line, []byte(">>>>>>> ")) {
			return true
		}
	}
	return false
}

// markerLabels says which branches each commit naming a side of the
// conflict markers holds, bounded: "" for none.
func markerLabels(labels map[string][]string) string {
	const shown = 10
	commits := slices.Sorted(maps.Keys(labels))
	parts := make([]string, 0, min(len(commits), shown))
	for _, c := range commits[:min(len(commits), shown)] {
		parts = append(parts, fmt.Sprintf("%s holds %s", c, strings.Join(labels[c], " and ")))
	}
	if len(parts) == 0 {
		return ""
	}
	s := "In the markers, each side is named by a commit: " + strings.Join(parts, "; ")
	if more := len(commits) - len(parts); more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s + "."
}

// takeIn gives p what branch c did: its visits, and its finished steps
// for the run so far and {{node.ID.field}}.
func (p *branch) takeIn(c *branch) {
	for id, v := range c.visits {
		p.visits[id] = max(p.visits[id], v)
	}
	for i := max(c.forkAt, c.historyLeftOut); i < c.steps(); i++ {
		p.addHistory(c.past(i))
	}
	p.soFar = prompts.Entries{} // its steps' numbers moved
}
