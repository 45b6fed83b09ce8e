// Package workspace records the working tree a run's agents edit
// (readme/workspace.md): checkpoints of it, tracked and untracked files but
// not ignored ones, as commits on a private ref of the run under
// refs/dtree/, made with an index of dtree's own (GIT_INDEX_FILE), so the
// user's HEAD, index, branches, stash and reflog are never touched; what
// changed between two; and putting the tree back as a checkpoint says.
//
// It drives the git binary: it is what users have, and it handles every
// repository format (readme/dev.md#dependencies says why not a Go library).
package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// ErrNotGit is a directory in no git work tree, or a machine without git:
// checkpoints are off.
var ErrNotGit = errors.New("not in a git repository")

// RefPrefix is where the runs' refs are: RefPrefix + run id.
const RefPrefix = "refs/dtree/runs/"

// Ref is the private ref of a run's checkpoints.
func Ref(runID string) string { return RefPrefix + runID }

// Repo is the git work tree a directory is in.
type Repo struct {
	Root   string // the work tree's top directory, absolute
	GitDir string // its git directory, absolute (a linked worktree's own)
	// env is the environment git runs with: the caller's, with what would
	// point git elsewhere replaced by this repository.
	env []string
}

// Open finds the git work tree dir is in. The error wraps ErrNotGit when
// there is none, or no git binary.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("%w: git is not installed", ErrNotGit)
	}
	r := &Repo{env: baseEnv(os.Environ())}
	out, err := r.output(ctx, dir, nil, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--absolute-git-dir")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.Code == 128 {
			return nil, fmt.Errorf("%w: %s", ErrNotGit, dir)
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "true" {
		return nil, fmt.Errorf("%w: %s is not in a work tree", ErrNotGit, dir)
	}
	r.Root, r.GitDir = lines[1], lines[2]
	r.env = append(r.env, "GIT_DIR="+r.GitDir, "GIT_WORK_TREE="+r.Root)
	return r, nil
}

// baseEnv is env without what would make git read another repository or
// index, or ask a question.
func baseEnv(env []string) []string {
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX",
			"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
			"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE":
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=dtree", "GIT_AUTHOR_EMAIL=dtree@localhost",
		"GIT_COMMITTER_NAME=dtree", "GIT_COMMITTER_EMAIL=dtree@localhost")
}

// safety are the options every git command runs with: no hook (update-ref
// runs reference-transaction), no fsmonitor program, no pager. A
// repository's config is the user's, but a checkout from elsewhere can
// carry one, and dtree's bookkeeping needs none of them.
var safety = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "--no-pager"}

// GitError is a git command that failed: its arguments, exit code and
// what it said.
type GitError struct {
	Args   []string
	Code   int
	Stderr string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Code)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), types.Excerpt(msg, 400))
}

// git runs a git command in the repository with extra environment,
// stdout to out.
func (r *Repo) git(ctx context.Context, dir string, env []string, stdin io.Reader, out io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, safety...), args...)...)
	cmd.Dir = dir
	if cmd.Dir == "" {
		cmd.Dir = r.Root
	}
	cmd.Env = append(append([]string{}, r.env...), env...)
	cmd.Stdin, cmd.Stdout = stdin, out
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: 64 << 10}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ctx.Err() == nil {
			return &GitError{Args: args, Code: ee.ExitCode(), Stderr: stderr.String()}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// output runs a git command and returns its stdout.
func (r *Repo) output(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	var b strings.Builder
	err := r.git(ctx, dir, env, nil, &b, args...)
	return b.String(), err
}

// limited keeps the first n bytes written to it and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		l.w.Write(p[:k]) //nolint:errcheck // a bytes.Buffer
	}
	return len(p), nil
}

// Head is HEAD's commit, "" on a branch with no commit yet.
func (r *Repo) Head(ctx context.Context) (string, error) {
	out, err := r.output(ctx, "", nil, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && ge.Code == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// Checkpoint is one recorded state of the working tree: its commit on the
// run's ref and the commit's tree.
type Checkpoint struct {
	Commit string
	Tree   string
}

// Run is one run's checkpoints: its ref, the index dtree snapshots with,
// and the newest checkpoint. A Run is not safe for concurrent use.
type Run struct {
	Repo  *Repo
	ID    string
	Ref   string
	Last  Checkpoint
	index string
	// exclude are pathspecs left out of every snapshot: the run's own
	// logs when they are in the work tree and not ignored.
	exclude []string
}

// Begin starts a run's checkpoints: it takes the first, of the tree as it
// is before the run, on top of HEAD (or of parent, a commit, when not
// ""), and points the run's ref at it. exclude are paths (absolute, or
// relative to the root) no snapshot records: the run's log directory.
func (r *Repo) Begin(ctx context.Context, runID, parent string, exclude ...string) (*Run, error) {
	if parent == "" {
		var err error
		if parent, err = r.Head(ctx); err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(r.GitDir, "dtree")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	run := &Run{Repo: r, ID: runID, Ref: Ref(runID), index: filepath.Join(dir, runID+".index")}
	for _, p := range exclude {
		if rel, ok := r.rel(p); ok && rel != "." && !r.ignored(ctx, rel) {
			run.exclude = append(run.exclude, ":(exclude,literal)"+rel)
		}
	}
	cp, err := run.snapshot(ctx, parent, "dtree "+runID+": before the run")
	if err != nil {
		run.Close()
		return nil, err
	}
	if err := r.git(ctx, "", nil, nil, nil, "update-ref", "-m", "dtree checkpoint", run.Ref, cp.Commit); err != nil {
		run.Close()
		return nil, err
	}
	run.Last = cp
	return run, nil
}

// ignored reports whether git ignores the path (relative to the root): a
// log directory the user's .gitignore names. Snapshots leave it out
// anyway, and git add fails on a pathspec that names an ignored path,
// an exclude too ("The following paths are ignored"), which turned every
// checkpoint off.
// check-ignore takes no literal magic: a path git could read as a
// pattern or magic is not asked about, and keeps its exclude.
func (r *Repo) ignored(ctx context.Context, rel string) bool {
	if strings.ContainsAny(rel, "*?[\\:") {
		return false
	}
	return r.git(ctx, "", nil, nil, nil, "check-ignore", "-q", "--", rel) == nil
}

// rel is p relative to the root, false when it is outside it.
func (r *Repo) rel(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.Root, p)
	}
	rel, err := filepath.Rel(r.Root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Close removes the run's index. The checkpoints stay, on the ref.
func (run *Run) Close() {
	if run.index != "" {
		os.Remove(run.index)
		os.Remove(run.index + ".lock")
	}
}

// snapshot records the working tree in the run's index and makes a commit
// of it on parent (none when ""), without moving any ref. A tree the same
// as parent's gives parent itself: nothing changed, nothing new.
func (run *Run) snapshot(ctx context.Context, parent, msg string) (Checkpoint, error) {
	r, env := run.Repo, []string{"GIT_INDEX_FILE=" + run.index}
	// An agent may have deleted .git/dtree: the index is made again.
	_ = os.MkdirAll(filepath.Dir(run.index), 0o755)
	args := append([]string{"add", "-A", "--ignore-errors", "--", "."}, run.exclude...)
	if err := r.git(ctx, "", env, nil, nil, args...); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	tree, err := r.output(ctx, "", env, "write-tree")
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	tree = strings.TrimSpace(tree)
	if parent != "" && parent == run.Last.Commit && tree == run.Last.Tree {
		return run.Last, nil
	}
	commitArgs := []string{"commit-tree", tree, "-m", msg}
	if parent != "" {
		commitArgs = append(commitArgs, "-p", parent)
	}
	commit, err := r.output(ctx, "", nil, commitArgs...)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	return Checkpoint{Commit: strings.TrimSpace(commit), Tree: tree}, nil
}

// Checkpoint records the working tree as it is now, on top of the run's
// newest checkpoint, and returns what changed since it. A tree that did
// not change makes no commit: the change is empty, From and To the same.
func (run *Run) Checkpoint(ctx context.Context, msg string) (types.Change, error) {
	from := run.Last
	cp, err := run.snapshot(ctx, from.Commit, "dtree "+run.ID+": "+msg)
	if err != nil {
		return types.Change{}, err
	}
	if cp.Commit != from.Commit {
		if err := run.Repo.git(ctx, "", nil, nil, nil, "update-ref", "-m", "dtree checkpoint", run.Ref, cp.Commit, from.Commit); err != nil {
			return types.Change{}, fmt.Errorf("checkpoint: %w", err)
		}
		run.Last = cp
	}
	return run.Repo.Changes(ctx, from.Commit, cp.Commit)
}

// Changes is what differs between two commits: files, lines added and
// removed, the first types.MaxChangePaths paths.
func (r *Repo) Changes(ctx context.Context, from, to string) (types.Change, error) {
	c := types.Change{From: from, To: to, Paths: []types.PathChange{}}
	if from == to {
		return c, nil
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- readDiff(pr, &c)
		pr.CloseWithError(io.EOF) // let git finish writing into nothing
		io.Copy(io.Discard, pr)   //nolint:errcheck // draining
	}()
	args := []string{"diff-tree", "-r", "-z", "--no-renames", "--raw", "--numstat", "--no-textconv", "--no-ext-diff"}
	if from == "" {
		args = append(args, "--root", to)
	} else {
		args = append(args, from, to)
	}
	err := r.git(ctx, "", nil, nil, pw, args...)
	pw.CloseWithError(io.EOF)
	if rerr := <-done; err == nil {
		err = rerr
	}
	if err != nil {
		return types.Change{}, fmt.Errorf("what changed: %w", err)
	}
	return c, nil
}

// readDiff reads diff-tree's -z --raw --numstat output: the raw records
// (":mode mode sha sha STATUS" NUL path NUL) for every path, then a
// numstat record ("added TAB removed TAB path" NUL) for each. It keeps the
// first MaxChangePaths paths and counts the rest: memory stays bounded
// at any size of change.
func readDiff(r io.Reader, c *types.Change) error {
	br := bufio.NewReaderSize(r, 64<<10)
	kept := map[string]int{}
	for {
		tok, err := br.ReadString(0)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		tok = strings.TrimSuffix(tok, "\x00")
		if strings.HasPrefix(tok, ":") { // a raw record; its path follows
			fields := strings.Fields(tok)
			path, err := br.ReadString(0)
			if err != nil {
				return fmt.Errorf("diff-tree: a record without its path")
			}
			path = strings.TrimSuffix(path, "\x00")
			c.Files++
			if len(c.Paths) < types.MaxChangePaths {
				status := ""
				if len(fields) > 0 {
					status = fields[len(fields)-1]
				}
				kept[path] = len(c.Paths)
				c.Paths = append(c.Paths, types.PathChange{Path: path, Status: status})
			} else {
				c.PathsLeftOut++
			}
			continue
		}
		added, rest, ok1 := strings.Cut(tok, "\t")
		removed, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 {
			continue
		}
		a, aerr := strconv.Atoi(added)
		d, derr := strconv.Atoi(removed)
		binary := aerr != nil || derr != nil
		if !binary {
			c.Added += a
			c.Removed += d
		}
		if i, ok := kept[path]; ok {
			p := &c.Paths[i]
			p.Added, p.Removed, p.Binary = max(a, 0), max(d, 0), binary
		}
	}
}

// Restore puts the working tree back as to says, on the files
// checkpoints record (ignored ones are not touched). It checkpoints the
// tree first (before, on the run's ref, so nothing is lost), moves it to
// to, and records the result as the run's newest checkpoint. When moving
// fails part way it puts the tree back as before says; the error says
// which of the two the tree is in.
func (run *Run) Restore(ctx context.Context, to, msg string) (before types.Change, err error) {
	if before, err = run.Checkpoint(ctx, "before "+msg); err != nil {
		return before, err
	}
	cur := run.Last
	toTree, err := run.Repo.output(ctx, "", nil, "rev-parse", "--verify", to+"^{tree}")
	if err != nil {
		return before, fmt.Errorf("restore: %w", err)
	}
	toTree = strings.TrimSpace(toTree)
	if toTree == cur.Tree {
		return before, nil
	}
	env := []string{"GIT_INDEX_FILE=" + run.index}
	if err := run.Repo.git(ctx, "", env, nil, nil, "read-tree", "-m", "-u", cur.Commit, to); err != nil {
		// Put back what was there: snapshot what is (part moved) and move
		// it to the checkpoint taken first.
		back := context.WithoutCancel(ctx)
		if _, berr := run.Checkpoint(back, "restore failed part way"); berr == nil {
			if berr = run.Repo.git(back, "", env, nil, nil, "read-tree", "-m", "-u", run.Last.Commit, cur.Commit); berr == nil {
				run.Last = cur
				return before, fmt.Errorf("restore: %w; the working tree is as it was (checkpoint %s)", err, short(cur.Commit))
			}
		}
		return before, fmt.Errorf("restore: %w; the working tree may be part way: `dtree undo %s` again, or `git -C %s read-tree -m -u HEAD %s` puts it as checkpoint %s says", err, run.ID, run.Repo.Root, cur.Commit, short(cur.Commit))
	}
	commit, err := run.Repo.output(ctx, "", nil, "commit-tree", toTree, "-p", cur.Commit, "-m", "dtree "+run.ID+": "+msg)
	if err != nil {
		return before, fmt.Errorf("restore: %w", err)
	}
	next := Checkpoint{Commit: strings.TrimSpace(commit), Tree: toTree}
	if err := run.Repo.git(ctx, "", nil, nil, nil, "update-ref", "-m", "dtree checkpoint", run.Ref, next.Commit, cur.Commit); err != nil {
		return before, fmt.Errorf("restore: %w", err)
	}
	run.Last = next
	return before, nil
}

func short(commit string) string { return commit[:min(len(commit), 12)] }

// Runs are the run ids that have checkpoints in the repository.
func (r *Repo) Runs(ctx context.Context) ([]string, error) {
	out, err := r.output(ctx, "", nil, "for-each-ref", "--format=%(refname)", RefPrefix)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if id, ok := strings.CutPrefix(line, RefPrefix); ok && id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Prune deletes a run's ref and leftover index; its commits go with the
// next git gc.
func (r *Repo) Prune(ctx context.Context, runID string) error {
	os.Remove(filepath.Join(r.GitDir, "dtree", runID+".index"))
	if err := r.git(ctx, "", nil, nil, nil, "update-ref", "-d", Ref(runID)); err != nil {
		return fmt.Errorf("removing the checkpoints of run %s: %w", runID, err)
	}
	return nil
}
