package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Worktrees (readme/workspace.md#worktrees): a run with --worktree goes on
// in a git worktree of its own, on a new branch, so the user's checkout is
// not touched and two runs in one repository do not see each other's
// files.

// WorktreesDir is where dtree makes the runs' worktrees, under the root
// of the user's work tree, with a .gitignore of '*' so that the user's
// `git status` shows none of them.
const WorktreesDir = ".dtree/worktrees"

// BranchPrefix starts the branch of a run's worktree: dtree/RUN-ID.
const BranchPrefix = "dtree/"

// worktreeGitignore is the .gitignore of WorktreesDir.
const worktreeGitignore = "# Created by dtree: the worktrees of runs (dtree run --worktree), each on its branch dtree/RUN-ID.\n*\n"

// runIDPattern is what a run id may be where it names a branch and a
// directory read back from a log (a file anyone may have edited).
var runIDPattern = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._-]{0,99}$`)

// Worktree is a run's worktree: its directory, its branch, and the
// commit it started from.
type Worktree struct {
	Dir    string // absolute
	Branch string // dtree/RUN-ID; "" for a fork's branch (AddBranchTree: detached)
	Base   string // the commit the branch started at
	// Repo is the worktree as a work tree of its own: checkpoints taken
	// in it go on its files.
	Repo *Repo
}

// ErrUnborn is a repository whose HEAD has no commit yet: a worktree from
// HEAD has nothing to start from.
var ErrUnborn = errors.New("HEAD has no commit yet")

// WorktreeDir is where the worktree of run id goes in the repository.
func (r *Repo) WorktreeDir(id string) string {
	return filepath.Join(r.Root, filepath.FromSlash(WorktreesDir), id)
}

// AddWorktree makes run id's worktree, WorktreeDir(id), on a new branch
// dtree/ID: from HEAD, or, when dirty, from a commit of the working tree
// as it is (uncommitted and untracked files too, not ignored ones; its
// parent HEAD), made with an index of dtree's own as checkpoints are.
// exclude are paths that commit leaves out (the run's logs). The user's
// HEAD, index, stash and files are not touched.
func (r *Repo) AddWorktree(ctx context.Context, id string, dirty bool, exclude ...string) (*Worktree, error) {
	if !runIDPattern.MatchString(id) {
		return nil, fmt.Errorf("worktree: %q cannot name a branch", id)
	}
	head, err := r.Head(ctx)
	if err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if head == "" && !dirty {
		return nil, fmt.Errorf("worktree: %w", ErrUnborn)
	}
	parent, err := r.worktreesParent()
	if err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	base := head
	if dirty {
		if base, err = r.snapshotTree(ctx, id, head, append(exclude, parent)...); err != nil {
			return nil, fmt.Errorf("worktree: %w", err)
		}
	}
	wt := &Worktree{Dir: r.WorktreeDir(id), Branch: BranchPrefix + id, Base: base}
	// The branch is made by worktree add itself: if the add fails, there
	// is no branch left behind.
	if err := r.git(ctx, "", nil, nil, nil, "worktree", "add", "--quiet", "--no-track", "-b", wt.Branch, wt.Dir, base); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if wt.Repo, err = Open(ctx, wt.Dir); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	return wt, nil
}

// worktreesParent makes WorktreesDir, with its .gitignore, and returns
// it: an error when it is, or is under, a link (a checkout can carry
// .dtree as a link to anywhere: the worktrees stay in the repository).
func (r *Repo) worktreesParent() (string, error) {
	parent := filepath.Join(r.Root, filepath.FromSlash(WorktreesDir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(parent); err != nil || real != parent {
		return "", fmt.Errorf("%s is a link (to %s), and dtree makes worktrees only in the repository itself: remove the link", parent, real)
	}
	if _, err := os.Lstat(filepath.Join(parent, ".gitignore")); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(filepath.Join(parent, ".gitignore"), []byte(worktreeGitignore), 0o644); err != nil {
			return "", err
		}
	}
	return parent, nil
}

// snapshotTree is a commit of the working tree as it is, on parent (none
// when ""), with an index of its own that it removes after.
func (r *Repo) snapshotTree(ctx context.Context, id, parent string, exclude ...string) (string, error) {
	dir := filepath.Join(r.GitDir, "dtree")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	run := &Run{Repo: r, ID: id, index: filepath.Join(dir, id+".base.index")}
	defer run.Close()
	for _, p := range exclude {
		if rel, ok := r.rel(p); ok && rel != "." {
			run.exclude = append(run.exclude, ":(exclude,literal)"+rel)
		}
	}
	cp, err := run.snapshot(ctx, parent, "dtree "+id+": the working tree the run started from")
	return cp.Commit, err
}

// Worktree is the run's worktree recorded as branch dtree/ID: the one at
// WorktreeDir(ID) when it is there and on that branch, else made again
// there from the branch (dtree clean removed it). The branch is checked,
// and the directory derived from it, not taken from a log.
func (r *Repo) Worktree(ctx context.Context, branch string) (*Worktree, error) {
	id, ok := strings.CutPrefix(branch, BranchPrefix)
	if !ok || !runIDPattern.MatchString(id) {
		return nil, fmt.Errorf("worktree: %q is not the branch of a run's worktree (dtree/RUN-ID)", branch)
	}
	wt := &Worktree{Dir: r.WorktreeDir(id), Branch: branch}
	tip, err := r.output(ctx, "", nil, "rev-parse", "-q", "--verify", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("worktree: the branch %s is gone: %w", branch, err)
	}
	wt.Base = strings.TrimSpace(tip)
	if _, err := os.Stat(filepath.Join(wt.Dir, ".git")); err != nil {
		// Gone: the worktree's administrative files too, before adding it
		// again at the same place.
		_ = r.git(ctx, "", nil, nil, nil, "worktree", "prune")
		if err := r.git(ctx, "", nil, nil, nil, "worktree", "add", "--quiet", wt.Dir, branch); err != nil {
			return nil, fmt.Errorf("worktree: %w", err)
		}
	}
	if wt.Repo, err = Open(ctx, wt.Dir); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if wt.Repo.Root != wt.Dir {
		return nil, fmt.Errorf("worktree: %s is not a worktree of its own", wt.Dir)
	}
	if on, err := wt.onBranch(ctx); err != nil || !on {
		return nil, fmt.Errorf("worktree: %s is not on its branch %s: check it out there (git -C %s switch %s), then resume", wt.Dir, branch, wt.Dir, branch)
	}
	return wt, nil
}

// onBranch says whether the worktree's HEAD is its branch.
func (wt *Worktree) onBranch(ctx context.Context) (bool, error) {
	out, err := wt.Repo.output(ctx, "", nil, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.Code == 1 {
			return false, nil // detached
		}
		return false, err
	}
	return strings.TrimSpace(out) == "refs/heads/"+wt.Branch, nil
}

// Commit records the worktree's files as they are (tracked and untracked,
// not ignored) as a commit on its branch, through the worktree's own
// index, so that `git status` in it is clean after: the run's result, for
// the user to look at and merge. msg is its message; the author is the
// user's identity (user.name, user.email) when the repository's config
// has one, else dtree's. No hook runs. changed is false, and the branch
// stays, when the files are as the branch's tip has them.
func (wt *Worktree) Commit(ctx context.Context, msg string, exclude ...string) (commit string, changed bool, err error) {
	r := wt.Repo
	on, err := wt.onBranch(ctx)
	if err != nil {
		return "", false, fmt.Errorf("commit the worktree: %w", err)
	}
	if !on {
		return "", false, fmt.Errorf("commit the worktree: its HEAD is no longer on %s (something in the run moved it): its files are as the run left them in %s", wt.Branch, wt.Dir)
	}
	args := []string{"add", "-A", "--ignore-errors", "--", "."}
	for _, p := range exclude {
		if rel, ok := r.rel(p); ok && rel != "." {
			args = append(args, ":(exclude,literal)"+rel)
		}
	}
	if err := r.git(ctx, "", nil, nil, nil, args...); err != nil {
		return "", false, fmt.Errorf("commit the worktree: %w", err)
	}
	tree, err := r.output(ctx, "", nil, "write-tree")
	if err != nil {
		return "", false, fmt.Errorf("commit the worktree: %w", err)
	}
	tree = strings.TrimSpace(tree)
	head, err := r.Head(ctx)
	if err != nil {
		return "", false, fmt.Errorf("commit the worktree: %w", err)
	}
	if head != "" {
		headTree, err := r.output(ctx, "", nil, "rev-parse", "--verify", head+"^{tree}")
		if err != nil {
			return "", false, fmt.Errorf("commit the worktree: %w", err)
		}
		if strings.TrimSpace(headTree) == tree {
			return head, false, nil
		}
	}
	commitArgs := []string{"commit-tree", tree, "-m", msg}
	if head != "" {
		commitArgs = append(commitArgs, "-p", head)
	}
	out, err := r.output(ctx, "", r.identity(ctx), commitArgs...)
	if err != nil {
		return "", false, fmt.Errorf("commit the worktree: %w", err)
	}
	commit = strings.TrimSpace(out)
	// On the branch, only if it is still where it was (old value head).
	if err := r.git(ctx, "", nil, nil, nil, "update-ref", "-m", "dtree: the run's result", "refs/heads/"+wt.Branch, commit, head); err != nil {
		return "", false, fmt.Errorf("commit the worktree: %w", err)
	}
	return commit, true, nil
}

// identity is the user's name and email as the repository's config gives
// them, as author and committer, or nothing (dtree's, from the
// environment of every git command).
func (r *Repo) identity(ctx context.Context) []string {
	name, err1 := r.output(ctx, "", nil, "config", "--get", "user.name")
	email, err2 := r.output(ctx, "", nil, "config", "--get", "user.email")
	name, email = strings.TrimSpace(name), strings.TrimSpace(email)
	if err1 != nil || err2 != nil || name == "" || email == "" {
		return nil
	}
	return []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email,
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email}
}

// WorktreeInfo is one of dtree's worktrees in the repository: a worktree
// under WorktreesDir on a branch dtree/….
type WorktreeInfo struct {
	Dir    string
	Branch string // dtree/RUN-ID
	Head   string // its HEAD's commit
	// Gone is a worktree whose directory is not there any more.
	Gone bool
}

// Worktrees are dtree's worktrees of the repository, as `git worktree
// list` says: those under WorktreesDir whose branch is dtree/….
func (r *Repo) Worktrees(ctx context.Context) ([]WorktreeInfo, error) {
	all, err := r.listWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	under := filepath.Join(r.Root, filepath.FromSlash(WorktreesDir)) + string(filepath.Separator)
	var list []WorktreeInfo
	for _, w := range all {
		id, ok := strings.CutPrefix(w.Branch, BranchPrefix)
		if ok && runIDPattern.MatchString(id) && strings.HasPrefix(w.Dir, under) {
			list = append(list, w.WorktreeInfo)
		}
	}
	return list, nil
}

// listedWorktree is a worktree as `git worktree list` gives it.
type listedWorktree struct {
	WorktreeInfo
	detached bool
}

// listWorktrees is every worktree of the repository, the main one first.
func (r *Repo) listWorktrees(ctx context.Context) ([]listedWorktree, error) {
	out, err := r.output(ctx, "", nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, fmt.Errorf("list the worktrees: %w", err)
	}
	var list []listedWorktree
	var cur listedWorktree
	for _, field := range strings.Split(out, "\x00") {
		key, val, _ := strings.Cut(field, " ")
		switch key {
		case "":
			if cur.Dir != "" {
				list = append(list, cur)
			}
			cur = listedWorktree{}
		case "worktree":
			cur.Dir = filepath.Clean(val)
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case "detached":
			cur.detached = true
		case "prunable":
			cur.Gone = true
		}
	}
	if cur.Dir != "" {
		list = append(list, cur)
	}
	return list, nil
}

// ErrWorktreeInUse is a worktree a running dtree goes on in.
var ErrWorktreeInUse = errors.New("a running dtree goes on in it")

// WorktreeChangedError is a worktree whose files differ from its branch:
// removing it would lose them.
type WorktreeChangedError struct {
	Dir   string
	Files int
	Paths []string // the first few
}

func (e *WorktreeChangedError) Error() string {
	return fmt.Sprintf("worktree %s has %d %s not committed on its branch (%s)", e.Dir, e.Files,
		map[bool]string{true: "file", false: "files"}[e.Files == 1], strings.Join(e.Paths, ", "))
}

// RemoveWorktree removes one of dtree's worktrees (its directory and
// git's record of it), unless a running dtree holds it (ErrWorktreeInUse)
// or its files differ from its branch (a *WorktreeChangedError) and not
// force. Its branch stays: it is the run's result. dryRun checks and
// removes nothing.
func (r *Repo) RemoveWorktree(ctx context.Context, w WorktreeInfo, force, dryRun bool) error {
	if w.Gone {
		if dryRun {
			return nil
		}
		return r.git(ctx, "", nil, nil, nil, "worktree", "prune")
	}
	wr, err := Open(ctx, w.Dir)
	if err != nil {
		return fmt.Errorf("worktree %s: %w", w.Dir, err)
	}
	release, err := holdWorktree(wr.GitDir, false)
	if err != nil {
		return fmt.Errorf("worktree %s: %w", w.Dir, err)
	}
	defer release()
	if !force {
		out, err := wr.output(ctx, "", nil, "status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=none")
		if err != nil {
			return fmt.Errorf("worktree %s: %w", w.Dir, err)
		}
		if e := changedFiles(w.Dir, out); e != nil {
			return e
		}
	}
	if dryRun {
		return nil
	}
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	if err := r.git(ctx, "", nil, nil, nil, append(args, w.Dir)...); err != nil {
		return fmt.Errorf("remove worktree %s: %w", w.Dir, err)
	}
	return nil
}

// changedFiles reads `git status --porcelain -z`: nil when it lists
// nothing.
func changedFiles(dir, out string) *WorktreeChangedError {
	var e *WorktreeChangedError
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		if e == nil {
			e = &WorktreeChangedError{Dir: dir}
		}
		e.Files++
		if len(e.Paths) < 5 {
			e.Paths = append(e.Paths, f[3:])
		}
		if f[0] == 'R' || f[0] == 'C' {
			i++ // the rename's source
		}
	}
	return e
}

// DeleteMergedBranch deletes a run's branch when HEAD has all of it
// (merged, or never moved past where it started), as `git branch -d`
// would; merged is false, and the branch stays, otherwise. dryRun
// deletes nothing.
func (r *Repo) DeleteMergedBranch(ctx context.Context, branch string, dryRun bool) (merged bool, err error) {
	id, ok := strings.CutPrefix(branch, BranchPrefix)
	if !ok || !runIDPattern.MatchString(id) {
		return false, fmt.Errorf("%q is not the branch of a run's worktree", branch)
	}
	tip, err := r.output(ctx, "", nil, "rev-parse", "-q", "--verify", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return false, nil // gone already
	}
	tip = strings.TrimSpace(tip)
	if err := r.git(ctx, "", nil, nil, nil, "merge-base", "--is-ancestor", tip, "HEAD"); err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.Code == 1 {
			return false, nil
		}
		return false, err
	}
	if dryRun {
		return true, nil
	}
	if err := r.git(ctx, "", nil, nil, nil, "update-ref", "-d", "refs/heads/"+branch, tip); err != nil {
		return false, err
	}
	return true, nil
}

// Hold marks the worktree as in use for as long as this process holds
// it (release, or its end, however it ends): dtree clean leaves it.
func (wt *Worktree) Hold() (release func(), err error) {
	return holdWorktree(wt.Repo.GitDir, true)
}

// LeftoverIndexes are the index files of runs dtree left in the
// repository's $GIT_DIR/dtree (a run killed before it removed its own):
// their paths and the run ids they are of.
func (r *Repo) LeftoverIndexes() (map[string]string, error) {
	entries, err := os.ReadDir(filepath.Join(r.GitDir, "dtree"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".index")
		if !ok {
			id, ok = strings.CutSuffix(name, ".index.lock")
		}
		if !ok || !e.Type().IsRegular() {
			continue
		}
		id = strings.TrimSuffix(id, ".base")
		out[filepath.Join(r.GitDir, "dtree", name)] = id
	}
	return out, nil
}
