package workspace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// Branch trees (readme/parallel.md#isolation-and-merge): each branch of a
// fork works in a git worktree of its own, detached at the fork's
// checkpoint, under WorktreesDir/RUN-ID.b/NAME; at the join, MergeBranches
// merges the branches' last checkpoints onto the fork's, one after the
// other in a stated order, into one commit that (*Run).Restore puts in the
// run's working tree. Per fork, with run the run's *Run and fork its
// checkpoint there (run.Last.Commit when the fork's step is done):
//
//	wt, err := repo.AddBranchTree(ctx, runID, label, fork)      // each branch
//	br, err := wt.Repo.Begin(ctx, BranchRunID(runID, label), fork)
//	…                                                           // its steps: br.Checkpoint
//	br.Close()
//	m, err := repo.MergeBranches(ctx, fork, []Tip{{label, br.Last.Commit}, …})
//	_, err = run.Restore(ctx, m.Commit, "join")                 // m.Clean, or the markers
//	err = repo.RemoveBranchTree(ctx, wt)                        // each branch
//
// The run's working tree must not change between the fork and the join:
// Restore moves it from its newest checkpoint to the merge, and what was
// changed there since the fork would be undone (it stays in the
// checkpoint Restore takes first).

// maxBranchDir bounds the readable part of a branch's directory name.
const maxBranchDir = 40

// plainBranch is a label used as it is for a directory name: lower case
// (two labels that differ in case get two directories on a file system
// that ignores case too), no dot, not starting with '-'.
var plainBranch = regexp.MustCompile(`^[0-9a-z_][0-9a-z_-]{0,39}$`)

// windowsDevices are names Windows gives to devices, with any extension.
var windowsDevices = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true}

// BranchDirName is the directory name of a branch whose label (a chart's
// line label: any text) is label. A label of lower-case ASCII letters,
// digits, '_' and '-' (not first), up to 40 bytes, is used as it is.
// Any other gives its ASCII letters, digits and '_' (other runs of
// characters become one '-'), at most 40 bytes of them ("branch" when
// none), then '.' and 12 hex digits of the label's SHA-256: "Unit
// tests" is "Unit-tests.5b2f…". So the name is readable, at most 53
// bytes, never empty, '.', "..", nor holds '/', '\' or NUL; two labels
// get two names (the names with a dot are never a label as it is), even
// where case is ignored; and runID+"."+name is a valid ref name
// component for Ref (no "..", no ".lock" or '.' at the end).
func BranchDirName(label string) string {
	if plainBranch.MatchString(label) && !windowsDevices[label] {
		return label
	}
	var b strings.Builder
	dash := false
	for _, c := range label {
		if b.Len() >= maxBranchDir {
			break
		}
		if c < 128 && (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	readable := strings.TrimRight(b.String(), "-")
	if readable == "" {
		readable = "branch"
	}
	if windowsDevices[strings.ToLower(readable)] {
		readable += "_"
	}
	sum := sha256.Sum256([]byte(label))
	return readable + "." + hex.EncodeToString(sum[:6])
}

// BranchRunID is the run id a branch's checkpoints go under, in its
// worktree: wt.Repo.Begin(ctx, BranchRunID(runID, label), from). Refs are
// shared by all the worktrees of a repository, so each branch has its
// own, Ref(BranchRunID(…)) = refs/dtree/runs/RUN-ID.NAME, beside the
// run's; a valid ref name for any label (BranchDirName).
func BranchRunID(runID, label string) string {
	return runID + "." + BranchDirName(label)
}

// BranchTreeDir is where branch label of run runID works:
// WorktreesDir/RUN-ID.b/NAME (NAME is BranchDirName(label)).
func (r *Repo) BranchTreeDir(runID, label string) string {
	return filepath.Join(r.Root, filepath.FromSlash(WorktreesDir), runID+".b", BranchDirName(label))
}

// AddBranchTree makes the worktree of branch label of run runID at
// BranchTreeDir: detached (no branch ref: the branch's checkpoints go on
// its own ref, BranchRunID) at commit from, a checkpoint of the run (the
// fork's). Its Repo is the worktree as a work tree of its own; Branch is
// "". As AddWorktree, it makes worktrees only in the repository itself
// (not through a link) and keeps them out of the user's `git status`.
// A worktree left at that place (by a run that died, taken up again) is
// removed first: what the branch did is in its checkpoints, and the
// coordinator starts the new one at the newest of them. No hook runs.
func (r *Repo) AddBranchTree(ctx context.Context, runID, label, from string) (*Worktree, error) {
	fail := func(err error) (*Worktree, error) {
		return nil, fmt.Errorf("worktree of branch %q: %w", types.Excerpt(label, 60), err)
	}
	if !runIDPattern.MatchString(runID) {
		return fail(fmt.Errorf("%q is not a run id", runID))
	}
	commit, err := r.commitOf(ctx, from)
	if err != nil {
		return fail(err)
	}
	parent, err := r.worktreesParent()
	if err != nil {
		return fail(err)
	}
	runDir := filepath.Join(parent, runID+".b")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fail(err)
	}
	if real, err := filepath.EvalSymlinks(runDir); err != nil || real != runDir {
		return fail(fmt.Errorf("%s is a link (to %s), and dtree makes worktrees only in the repository itself: remove the link", runDir, real))
	}
	dir := filepath.Join(runDir, BranchDirName(label))
	if _, err := os.Lstat(dir); err == nil {
		if err := r.removeBranchDir(ctx, dir); err != nil {
			return fail(fmt.Errorf("a worktree is left at %s and could not be removed: %w", dir, err))
		}
	}
	if err := r.git(ctx, "", nil, nil, nil, "worktree", "add", "--quiet", "--detach", dir, commit); err != nil {
		return fail(err)
	}
	wt := &Worktree{Dir: dir, Base: commit}
	if wt.Repo, err = Open(ctx, dir); err != nil {
		return fail(err)
	}
	return wt, nil
}

// commitOf is the full id of the commit rev names, an error naming rev
// when it names none.
func (r *Repo) commitOf(ctx context.Context, rev string) (string, error) {
	if rev == "" {
		return "", errors.New("no commit given")
	}
	out, err := r.output(ctx, "", nil, "rev-parse", "-q", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%q is not a commit of the repository", types.Excerpt(rev, 60))
	}
	return strings.TrimSpace(out), nil
}

// RemoveBranchTree removes a branch's worktree, made by AddBranchTree:
// its directory, whatever is in it (it is dtree's own), and git's record
// of it. Its commits stay, on the branch's checkpoint ref. Removing one
// that is gone already is no error. It refuses a directory that is not a
// branch tree (under WorktreesDir/RUN-ID.b/).
func (r *Repo) RemoveBranchTree(ctx context.Context, wt *Worktree) error {
	if wt == nil {
		return nil
	}
	dir := filepath.Clean(wt.Dir)
	runDir := filepath.Dir(dir)
	if !filepath.IsAbs(dir) || filepath.Dir(runDir) != filepath.Join(r.Root, filepath.FromSlash(WorktreesDir)) || !strings.HasSuffix(runDir, ".b") {
		return fmt.Errorf("remove worktree %s: it is not the worktree of a branch (under %s/RUN-ID.b)", wt.Dir, WorktreesDir)
	}
	// The run's directory as a link (something in a branch made it one):
	// what is below it is not dtree's.
	if st, err := os.Lstat(runDir); errors.Is(err, os.ErrNotExist) {
		return r.git(ctx, "", nil, nil, nil, "worktree", "prune")
	} else if err != nil || !st.IsDir() {
		return fmt.Errorf("remove worktree %s: %s is not a directory of dtree's (a link?): remove it by hand", wt.Dir, runDir)
	}
	if err := r.removeBranchDir(ctx, dir); err != nil {
		return fmt.Errorf("remove worktree %s: %w", wt.Dir, err)
	}
	os.Remove(runDir) // when it is the run's last
	return nil
}

// removeBranchDir removes the worktree at dir (or what is there) and
// git's record of it.
func (r *Repo) removeBranchDir(ctx context.Context, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return r.git(ctx, "", nil, nil, nil, "worktree", "prune")
	}
	// Twice forced: changed files, and a lock, do not keep it.
	if err := r.git(ctx, "", nil, nil, nil, "worktree", "remove", "--force", "--force", dir); err != nil {
		// Not a worktree git knows (its record lost): the directory goes
		// by hand, then the record, if any.
		if rerr := os.RemoveAll(dir); rerr != nil {
			return errors.Join(err, rerr)
		}
		return r.git(ctx, "", nil, nil, nil, "worktree", "prune")
	}
	return nil
}

// Tip is a branch at the join: its name (the chart's label) and its last
// checkpoint commit, which descends from the fork's.
type Tip struct {
	Name   string
	Commit string
}

// Conflict is a path the merge could not settle: the branches that
// changed it (from the fork's checkpoint to their tip, renames followed),
// in the merge's order.
type Conflict struct {
	Path     string
	Branches []string
}

// Merge is the branches merged. Commit is a commit of the merged tree:
// when two branches or more changed something, a merge commit (its first
// parent the merge of the branches before the last, the second the last
// tip); the tip of the one that did when one did; base when none did.
// Conflicts are the paths any step left conflicted, in the order they
// came; Clean is true when there are none.
type Merge struct {
	Commit    string
	Conflicts []Conflict
	Clean     bool
	// Labels are what the commits that label conflict markers hold
	// ("<<<<<<< COMMIT", ">>>>>>> COMMIT", and PATH~COMMIT): the names of
	// the branches whose changes each has (one for a branch's tip, those
	// merged so far for the result a later branch merged onto). nil when
	// Clean.
	Labels map[string][]string
}

// MergeBranches merges the tips onto base (the fork's checkpoint), in
// the order given: result := base, then for each tip, `git merge-tree
// --write-tree` of result and the tip, whose merge base is base (each
// result is a commit with parents result and tip, so base stays the best
// common ancestor of the next step). A tip at base (a branch that changed
// nothing) is skipped; the first tip that changed something is the result
// as it is (base is its ancestor), so Commit is that tip when no other
// branch changed anything. Cost: a few git commands per branch.
//
// A conflict does not stop it: merge-tree still writes a tree, with
// conflict markers in a text file (labelled with the two commits merged:
// "<<<<<<< RESULT" and ">>>>>>> TIP", RESULT the first branch's tip at
// the second step, a merge commit after: Merge.Labels names them), the
// result's side kept for a binary file, and for a file one side deleted
// and the other changed, the changed one. The next branches merge onto
// that tree: one that changed the same lines again conflicts again (its
// markers around the markers), one that did not merges cleanly. Merge
// lists every conflicted path of every step, and the branches that
// changed each.
//
// No program of the repository's runs: a merge driver its config defines
// (merge.NAME.driver, which a .gitattributes line merge=NAME would run)
// is replaced for the merge by git merge-file, git's own three-way merge,
// and merge.renormalize is off (it would run filter drivers).
func (r *Repo) MergeBranches(ctx context.Context, base string, tips []Tip) (Merge, error) {
	base, err := r.commitOf(ctx, base)
	if err != nil {
		return Merge{}, fmt.Errorf("merge the branches: the fork's checkpoint: %w", err)
	}
	tips = slices.Clone(tips) // their commits resolved, not the caller's
	for i := range tips {
		c, err := r.commitOf(ctx, tips[i].Commit)
		if err != nil {
			return Merge{}, fmt.Errorf("merge the branches: branch %q: %w", types.Excerpt(tips[i].Name, 60), err)
		}
		if c != base {
			if err := r.git(ctx, "", nil, nil, nil, "merge-base", "--is-ancestor", base, c); err != nil {
				return Merge{}, fmt.Errorf("merge the branches: branch %q: its commit %s does not descend from the fork's checkpoint %s", types.Excerpt(tips[i].Name, 60), short(c), short(base))
			}
		}
		tips[i].Commit = c
	}
	drivers, err := r.mergeDrivers(ctx)
	if err != nil {
		return Merge{}, fmt.Errorf("merge the branches: %w", err)
	}
	m := Merge{Commit: base}
	at := map[string]int{} // path → its index in m.Conflicts
	var merged []string    // the names of the branches in m.Commit
	for _, tip := range tips {
		if tip.Commit == base {
			continue
		}
		if m.Commit == base { // the first change: taken as it is
			m.Commit = tip.Commit
			merged = append(merged, tip.Name)
			continue
		}
		tree, paths, err := r.mergeTree(ctx, drivers, m.Commit, tip.Commit)
		if err != nil {
			return Merge{}, fmt.Errorf("merge the branches: branch %q: %w", types.Excerpt(tip.Name, 60), err)
		}
		if len(paths) > 0 {
			if m.Labels == nil {
				m.Labels = map[string][]string{}
			}
			// Views of one list that only grows: no copy per step.
			m.Labels[m.Commit] = merged[:len(merged):len(merged)]
			m.Labels[tip.Commit] = []string{tip.Name}
		}
		merged = append(merged, tip.Name)
		for _, p := range paths {
			if _, ok := at[p]; !ok {
				at[p] = len(m.Conflicts)
				m.Conflicts = append(m.Conflicts, Conflict{Path: p})
			}
		}
		msg := "dtree: merge branch " + strconv.Quote(types.Excerpt(tip.Name, 100))
		out, err := r.output(ctx, "", nil, "commit-tree", tree, "-p", m.Commit, "-p", tip.Commit, "-m", msg)
		if err != nil {
			return Merge{}, fmt.Errorf("merge the branches: branch %q: %w", types.Excerpt(tip.Name, 60), err)
		}
		m.Commit = strings.TrimSpace(out)
	}
	m.Clean = len(m.Conflicts) == 0
	if !m.Clean {
		if err := r.nameBranches(ctx, base, tips, &m); err != nil {
			return Merge{}, fmt.Errorf("merge the branches: %w", err)
		}
	}
	return m, nil
}

// mergeDrivers are the names of the merge drivers the repository's config
// defines (any merge.NAME.KEY), for mergeTree to replace.
func (r *Repo) mergeDrivers(ctx context.Context) ([]string, error) {
	out, err := r.output(ctx, "", nil, "config", "-z", "--name-only", "--get-regexp", `^merge\..+\.`)
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.Code == 1 {
			return nil, nil // none
		}
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, key := range strings.Split(out, "\x00") {
		rest, ok := strings.CutPrefix(key, "merge.")
		if i := strings.LastIndexByte(rest, '.'); ok && i > 0 {
			if name := rest[:i]; !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	return names, nil
}

// mergeTree merges commit theirs onto ours with `git merge-tree
// --write-tree`: the tree written (with conflict markers where there are
// conflicts) and the conflicted paths. Config given on git's command line
// (GIT_CONFIG_COUNT) wins over the repository's: each of drivers runs
// git merge-file instead, labelled as git's own merge labels its markers.
func (r *Repo) mergeTree(ctx context.Context, drivers []string, ours, theirs string) (tree string, conflicted []string, err error) {
	config := [][2]string{{"merge.renormalize", "false"}}
	// %A, %O and %B are names of temporary files git makes; the labels
	// are commit ids: nothing the repository chose reaches the shell.
	cmd := "git merge-file --marker-size=%L -L " + ours + " -L base -L " + theirs + " %A %O %B"
	for _, name := range drivers {
		config = append(config, [2]string{"merge." + name + ".driver", cmd})
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(config))}
	for i, kv := range config {
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+kv[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+kv[1])
	}
	var out strings.Builder
	err = r.git(ctx, "", env, nil, &out, "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs)
	var ge *GitError
	if err != nil && !(errors.As(err, &ge) && ge.Code == 1) { // 1: conflicts
		return "", nil, err
	}
	fields := strings.Split(out.String(), "\x00")
	tree = fields[0]
	if len(tree) < 40 || strings.Trim(tree, "0123456789abcdef") != "" {
		return "", nil, fmt.Errorf("git merge-tree wrote no tree (%q)", types.Excerpt(out.String(), 80))
	}
	for _, p := range fields[1:] {
		if p == "" {
			break
		}
		if len(conflicted) == 0 || conflicted[len(conflicted)-1] != p {
			conflicted = append(conflicted, p)
		}
	}
	return tree, conflicted, nil
}

// nameBranches fills each conflict's Branches, in the merge's order: the
// tips whose change from base touched its path, where a rename counts
// for both names; a branch that changed a file another renamed to the
// path counts too, and for a path merge-tree made up (PATH~COMMIT, a file
// moved aside where a directory goes), the branches that touched PATH or
// a path below it.
// One diff-tree per branch, streamed (two when renames count): the
// memory is the conflicts'.
func (r *Repo) nameBranches(ctx context.Context, base string, tips []Tip, m *Merge) error {
	want := map[string][]int{} // a path → the conflicts it counts for
	dirs := map[string][]int{} // a directory → the conflicts all below it count for
	for i, c := range m.Conflicts {
		want[c.Path] = append(want[c.Path], i)
		if j := strings.LastIndexByte(c.Path, '~'); j > 0 && isCommitID(c.Path[j+1:]) {
			want[c.Path[:j]] = append(want[c.Path[:j]], i)
			dirs[c.Path[:j]] = append(dirs[c.Path[:j]], i)
		}
	}
	hits := make([][]int, len(m.Conflicts)) // conflict → tips, by index
	add := func(is []int, k int) {
		for _, i := range is {
			if n := len(hits[i]); n == 0 || hits[i][n-1] != k {
				hits[i] = append(hits[i], k)
			}
		}
	}
	hit := func(paths map[string][]int, k int, p string) {
		add(paths[p], k)
		if len(dirs) > 0 {
			for j := strings.IndexByte(p, '/'); j > 0; j = nextSlash(p, j) {
				add(dirs[p[:j]], k)
			}
		}
	}
	renamed := map[string][]int{} // a path another branch renamed to a conflict's
	scan := func(paths map[string][]int, renames bool) error {
		for k, tip := range tips {
			if tip.Commit == base {
				continue
			}
			err := r.stream(ctx, func(rd io.Reader) error {
				return eachChange(rd, func(from, to string) {
					hit(paths, k, to)
					if from != "" {
						hit(paths, k, from)
						if is := want[to]; renames && len(is) > 0 {
							renamed[from] = append(renamed[from], is...)
						}
					}
				})
			}, "diff-tree", "-r", "-z", "-M", "--name-status", "--no-ext-diff", "--no-textconv", base, tip.Commit)
			if err != nil {
				return fmt.Errorf("what branch %q changed: %w", types.Excerpt(tip.Name, 60), err)
			}
		}
		return nil
	}
	if err := scan(want, true); err != nil {
		return err
	}
	if len(renamed) > 0 {
		if err := scan(renamed, false); err != nil {
			return err
		}
	}
	for i, ks := range hits {
		slices.Sort(ks)
		for _, k := range slices.Compact(ks) {
			m.Conflicts[i].Branches = append(m.Conflicts[i].Branches, tips[k].Name)
		}
	}
	return nil
}

// isCommitID is a full commit id: what MergeBranches gives merge-tree as
// labels.
func isCommitID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && strings.Trim(s, "0123456789abcdef") == ""
}

// eachChange reads `git diff-tree -z --name-status` (a status, then one
// path, or two for a rename or copy) and calls f with each change: from
// is the source of a rename or copy, "" otherwise.
func eachChange(rd io.Reader, f func(from, to string)) error {
	br := bufio.NewReaderSize(rd, 64<<10)
	next := func() (string, error) {
		s, err := br.ReadString(0)
		return strings.TrimSuffix(s, "\x00"), err
	}
	for {
		status, err := next()
		if err != nil {
			return nil
		}
		from := ""
		if status != "" && (status[0] == 'R' || status[0] == 'C') {
			if from, err = next(); err != nil {
				return fmt.Errorf("diff-tree: a rename without its paths")
			}
		}
		to, err := next()
		if err != nil {
			return fmt.Errorf("diff-tree: a record without its path")
		}
		f(from, to)
	}
}

// errDirGone is a directory removed or replaced while it was being held.
var errDirGone = errors.New("the directory was removed while dtree took hold of it")

// HoldBranchTrees marks run runID's branch trees (WorktreesDir/RUN-ID.b)
// as in use for as long as this process holds them (release, or its end,
// however it ends): dtree clean leaves them. A run takes it before its
// fork makes the first, so no moment is left when clean could take one
// for a dead run's. It makes the directory, and refuses a link.
func (r *Repo) HoldBranchTrees(runID string) (release func(), err error) {
	fail := func(err error) (func(), error) {
		return nil, fmt.Errorf("the branches' worktrees: %w", err)
	}
	if !runIDPattern.MatchString(runID) {
		return fail(fmt.Errorf("%q is not a run id", runID))
	}
	parent, err := r.worktreesParent()
	if err != nil {
		return fail(err)
	}
	runDir := filepath.Join(parent, runID+".b")
	for range 3 { // dtree clean may remove it between the two
		if err := os.Mkdir(runDir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fail(err)
		}
		if st, err := os.Lstat(runDir); err == nil && st.Mode()&os.ModeSymlink != 0 {
			to, _ := os.Readlink(runDir)
			return fail(fmt.Errorf("%s is a link (to %s), and dtree makes worktrees only in the repository itself: remove the link", runDir, to))
		} else if err == nil && !st.IsDir() {
			return fail(fmt.Errorf("%s is not a directory, and dtree makes the branches' worktrees there: remove it", runDir))
		}
		release, err = holdDir(runDir, true)
		if !errors.Is(err, errDirGone) {
			break
		}
	}
	switch {
	case errors.Is(err, ErrWorktreeInUse):
		return fail(fmt.Errorf("%s: dtree clean is removing them: run again", runDir))
	case err != nil:
		return fail(fmt.Errorf("%s: %w", runDir, err))
	}
	return release, nil
}

// BranchTreeInfo is a fork's branch tree that git has a record of, as
// AddBranchTree made it (detached, at P/WorktreesDir/RUN-ID.b/NAME, P the
// repository's root or a worktree of dtree's in it: a --worktree run's,
// or a branch's whose own fork it is).
type BranchTreeInfo struct {
	Dir    string
	RunID  string
	RunDir string // Dir's parent, RUN-ID.b
	Gone   bool   // its directory is not there
}

// BranchTrees are the fork branch trees of the repository, as `git
// worktree list` says, in its order.
func (r *Repo) BranchTrees(ctx context.Context) ([]BranchTreeInfo, error) {
	all, err := r.listWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	top := filepath.Join(r.Root, filepath.FromSlash(WorktreesDir))
	var list []BranchTreeInfo
	for _, w := range all {
		if !w.detached {
			continue
		}
		runDir := filepath.Dir(w.Dir)
		id, ok := strings.CutSuffix(filepath.Base(runDir), ".b")
		parent := filepath.Dir(runDir)
		if !ok || !runIDPattern.MatchString(id) || filepath.Base(w.Dir) == "." ||
			!strings.HasSuffix(parent, string(filepath.Separator)+filepath.FromSlash(WorktreesDir)) || !within(top, parent) {
			continue
		}
		list = append(list, BranchTreeInfo{Dir: w.Dir, RunID: id, RunDir: runDir, Gone: w.Gone})
	}
	return list, nil
}

// within says whether path is dir or under it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// RemoveDeadBranchTrees removes the branch trees dirs of one run, all in
// runDir (BranchTrees' RunDir), unless a running dtree holds them
// (ErrWorktreeInUse): a run killed during a fork left them. Their
// checkpoints stay on their refs, until the run's are pruned. Those
// whose directory is gone leave git's records only: `git worktree prune`
// takes them. dryRun checks and removes nothing.
func (r *Repo) RemoveDeadBranchTrees(ctx context.Context, runDir string, dirs []string, dryRun bool) error {
	runDir = filepath.Clean(runDir)
	st, err := os.Lstat(runDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if dryRun {
			return nil
		}
		return r.git(ctx, "", nil, nil, nil, "worktree", "prune")
	case err != nil:
		return fmt.Errorf("remove the worktrees of %s: %w", runDir, err)
	case !st.IsDir():
		return fmt.Errorf("remove the worktrees of %s: it is not a directory of dtree's (a link?): remove it by hand, then run git worktree prune", runDir)
	}
	// Nothing above it a link either: what RemoveAll would go through.
	if real, err := filepath.EvalSymlinks(runDir); err != nil || real != runDir {
		return fmt.Errorf("remove the worktrees of %s: it is reached through a link (to %s): remove it by hand, then run git worktree prune", runDir, real)
	}
	release, err := holdDir(runDir, false)
	if err != nil {
		if errors.Is(err, ErrWorktreeInUse) {
			return err
		}
		return fmt.Errorf("remove the worktrees of %s: %w", runDir, err)
	}
	defer release()
	if dryRun {
		return nil
	}
	for _, dir := range dirs {
		if filepath.Dir(filepath.Clean(dir)) != runDir {
			return fmt.Errorf("remove worktree %s: it is not in %s", dir, runDir)
		}
		if err := r.removeBranchDir(ctx, dir); err != nil {
			return fmt.Errorf("remove worktree %s: %w", dir, err)
		}
	}
	os.Remove(runDir) // when nothing else is left in it
	// The records of those whose directory was gone.
	return r.git(ctx, "", nil, nil, nil, "worktree", "prune")
}
