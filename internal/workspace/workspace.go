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
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
	if !mayBeInGit(dir) {
		return nil, fmt.Errorf("%w: %s", ErrNotGit, dir)
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

// mayBeInGit says whether git could find a repository from dir: some
// directory from dir up (symbolic links resolved, as git's getcwd does)
// holds a .git, or a HEAD as a repository's own directory does. With
// neither, git would say it is in none, and asking it took 2 ms of every
// run's start outside git (readme/performance.md). dtree's git commands
// drop GIT_DIR (baseEnv), so nothing else points git at a repository.
func mayBeInGit(dir string) bool {
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return true // git says what is wrong with it
	}
	if d, err = filepath.Abs(d); err != nil {
		return true
	}
	for {
		for _, name := range []string{".git", "HEAD"} {
			if _, err := os.Lstat(filepath.Join(d, name)); !errors.Is(err, fs.ErrNotExist) {
				return true
			}
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}

// baseEnv is env without what would make git read another repository,
// index or object store, read pathspecs otherwise, or ask a question: every
// GIT_ variable goes but keptGit's. dtree may itself run under git (a
// hook sets GIT_DIR and GIT_INDEX_FILE): the user's index stays theirs.
func baseEnv(env []string) []string {
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") && !keptGit[name] && !strings.HasPrefix(name, "GIT_TRACE") {
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=dtree", "GIT_AUTHOR_EMAIL=dtree@localhost",
		"GIT_COMMITTER_NAME=dtree", "GIT_COMMITTER_EMAIL=dtree@localhost")
}

// keptGit are the GIT_ variables dtree's git commands keep (and
// GIT_TRACE*): where git is, which config and attribute files it reads,
// and where it stops looking for a repository (a user's
// GIT_CEILING_DIRECTORIES keeps dtree out of a repository above, as it
// keeps git out).
var keptGit = map[string]bool{
	"GIT_EXEC_PATH": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true,
	"GIT_CONFIG_NOSYSTEM": true, "GIT_ATTR_NOSYSTEM": true,
	"GIT_CEILING_DIRECTORIES": true, "GIT_DISCOVERY_ACROSS_FILESYSTEM": true,
}

// safety are the options every git command runs with: no hook (update-ref
// runs reference-transaction), no fsmonitor program, no pager, and dtree's
// indexes whole (a split index would share files with the user's). A
// repository's config is the user's, but a checkout from elsewhere can
// carry one, and dtree's bookkeeping needs none of them. Filter drivers
// (Git LFS's) do run: they are how the repository's files are read into
// git and written back, and a restore without them would write what git
// stores (an LFS pointer) over the file.
var safety = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.splitIndex=false", "--no-pager"}

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
	// synced is true while the index holds exactly Last.Tree (with the
	// files' stat data): a `git add` that adds nothing then means the tree
	// did not change, and the snapshot stops there.
	synced bool
	// started is true once this Run has made its index (its first
	// snapshot): one found before was left by another process.
	started bool
	// onTree, when set, is called with a snapshot's new tree before its
	// commit is made: Checkpoint starts the diff then, on the other core.
	onTree func(tree string)
}

// Begin starts a run's checkpoints: it takes the first, of the tree as it
// is now, and points the run's ref at it. The checkpoint goes on top of
// parent (a commit) when not "", else on the run's ref when the run has
// checkpoints already (a resumed run, or one taken up again after a
// crash: nothing recorded is dropped), else on HEAD. exclude are paths
// (absolute, or relative to the root) no snapshot records: the run's log
// directory.
//
// The run's index starts as a copy of the user's (git's stat data of every
// tracked file), so that only files changed since the user's last git
// command are read, and tracked files a .gitignore matches are recorded
// too; an empty one when the user's marks files assume-unchanged or
// skip-worktree (they would be left out), or cannot be read.
func (r *Repo) Begin(ctx context.Context, runID, parent string, exclude ...string) (*Run, error) {
	dir := filepath.Join(r.GitDir, "dtree")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	run := &Run{Repo: r, ID: runID, Ref: Ref(runID), index: filepath.Join(dir, runID+".index")}
	msg := "dtree " + runID + ": before the run"
	var old string
	if parent == "" {
		var err error
		if old, err = r.resolve(ctx, run.Ref); err != nil {
			return nil, err
		}
		if parent = old; parent != "" {
			msg = "dtree " + runID + ": taken up again"
		} else if parent, err = r.Head(ctx); err != nil {
			return nil, err
		}
	}
	for _, p := range exclude {
		if rel, ok := r.rel(p); ok && rel != "." && !r.ignored(ctx, rel) {
			run.exclude = append(run.exclude, ":(exclude,literal)"+rel)
		}
	}
	cp, err := run.snapshot(ctx, parent, msg)
	if err != nil {
		run.Close()
		return nil, err
	}
	args := []string{"update-ref", "-m", "dtree checkpoint", run.Ref, cp.Commit}
	if old != "" {
		args = append(args, old)
	}
	if err := r.git(ctx, "", nil, nil, nil, args...); err != nil {
		run.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	run.Last, run.synced = cp, true
	return run, nil
}

// resolve is the commit ref (a full ref name) points at, "" when there is
// no such ref, or it names no commit (something wrote over it: the run's
// checkpoints start again, and the ref is overwritten).
func (r *Repo) resolve(ctx context.Context, ref string) (string, error) {
	out, err := r.output(ctx, "", nil, "rev-parse", "-q", "--verify", ref+"^{commit}")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) {
			return "", nil
		}
		return "", fmt.Errorf("checkpoints: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// seed copies the user's index to the run's, with its modification time
// (git trusts the stat data of files older than the index), and says
// whether it did. It does not when the user's index marks any file
// assume-unchanged or skip-worktree (`git ls-files -v` shows it in lower
// case, or S): `git add -A` would not look at those files.
func (run *Run) seed(ctx context.Context) bool {
	user := filepath.Join(run.Repo.GitDir, "index")
	st, err := os.Stat(user)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	var flags flagged
	if err := run.Repo.git(ctx, "", nil, nil, &flags, "ls-files", "-v", "-z"); err != nil || flags.found {
		return false
	}
	if err := copyFile(run.index, user); err != nil {
		run.Close()
		return false
	}
	if err := os.Chtimes(run.index, st.ModTime(), st.ModTime()); err != nil {
		run.Close()
		return false
	}
	return true
}

// copyFile copies src to dst, streamed: an index of a million files is
// not held in memory.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// flagged reads `git ls-files -v -z` and finds whether any entry is marked
// assume-unchanged (a lower-case tag) or skip-worktree (S).
type flagged struct {
	found bool
	mid   bool // inside a record: its tag was seen
}

func (f *flagged) Write(p []byte) (int, error) {
	for _, c := range p {
		switch {
		case f.found:
			return len(p), nil
		case !f.mid:
			f.found = c == 'S' || c >= 'a' && c <= 'z'
			f.mid = true
		case c == 0:
			f.mid = false
		}
	}
	return len(p), nil
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
	run.synced = false
}

// snapshot records the working tree in the run's index and makes a commit
// of it on parent (none when ""), without moving any ref. A tree the same
// as parent's gives parent itself: nothing changed, nothing new.
//
// A Run's first snapshot (Begin's, or the first of a run taken up again)
// makes its index anew: one found there was left by another process,
// with its lock when that process died part way, which would stop git.
// The new index is a copy of the user's (seed) when it can be, else empty.
//
// An index that is not there (an agent deleted .git/dtree) is made again
// the same way.
func (run *Run) snapshot(ctx context.Context, parent, msg string) (Checkpoint, error) {
	if !run.started {
		run.Close()
		run.started = true
	}
	if _, err := os.Lstat(run.index); errors.Is(err, fs.ErrNotExist) {
		run.synced = false
		_ = os.MkdirAll(filepath.Dir(run.index), 0o755)
		if run.seed(ctx) {
			if cp, err := run.record(ctx, parent, msg); err == nil {
				return cp, nil
			}
			run.Close() // the copy of the user's index would not do: start afresh
		}
	}
	return run.record(ctx, parent, msg)
}

// record is snapshot with the run's index as it is.
func (run *Run) record(ctx context.Context, parent, msg string) (Checkpoint, error) {
	r, env := run.Repo, []string{"GIT_INDEX_FILE=" + run.index}
	unchanged := run.synced && parent != "" && parent == run.Last.Commit
	run.synced = false
	// -v names each path it adds or removes: none, and the index still
	// holds Last's tree.
	var added counter
	args := append([]string{"add", "-A", "-v", "--ignore-errors", "--", "."}, run.exclude...)
	if err := r.git(ctx, "", env, nil, &added, args...); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	if unchanged && added == 0 {
		run.synced = true
		return run.Last, nil
	}
	tree, err := r.output(ctx, "", env, "write-tree")
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	tree = strings.TrimSpace(tree)
	if parent != "" && parent == run.Last.Commit && tree == run.Last.Tree {
		run.synced = true
		return run.Last, nil
	}
	if run.onTree != nil {
		run.onTree(tree)
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

// counter counts the bytes written to it.
type counter int64

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

// Checkpoint records the working tree as it is now, on top of the run's
// newest checkpoint, and returns what changed since it. A tree that did
// not change makes no commit: the change is empty, From and To the same.
//
// What changed is read from the two trees while the commit is made and
// the ref moved: diff-tree runs beside commit-tree and update-ref.
func (run *Run) Checkpoint(ctx context.Context, msg string) (types.Change, error) {
	from := run.Last
	type diffed struct {
		c   types.Change
		err error
	}
	var diff chan diffed
	if from.Tree != "" {
		run.onTree = func(tree string) {
			diff = make(chan diffed, 1)
			go func() {
				c, err := run.Repo.Changes(ctx, from.Tree, tree)
				diff <- diffed{c, err}
			}()
		}
	}
	cp, err := run.snapshot(ctx, from.Commit, "dtree "+run.ID+": "+msg)
	run.onTree = nil
	if err == nil && cp.Commit != from.Commit {
		if err = run.Repo.git(ctx, "", nil, nil, nil, "update-ref", "-m", "dtree checkpoint", run.Ref, cp.Commit, from.Commit); err != nil {
			err = fmt.Errorf("checkpoint: %w", err)
		} else {
			run.Last, run.synced = cp, true
		}
	}
	var c types.Change
	if diff != nil {
		d := <-diff
		c = d.c
		if err == nil {
			err = d.err
		}
	} else if err == nil {
		c, err = run.Repo.Changes(ctx, from.Commit, cp.Commit)
	}
	if err != nil {
		return types.Change{}, err
	}
	c.From, c.To = from.Commit, cp.Commit
	return c, nil
}

// Changes is what differs between two commits: files, lines added and
// removed, the first types.MaxChangePaths paths.
func (r *Repo) Changes(ctx context.Context, from, to string) (types.Change, error) {
	c := types.Change{From: from, To: to, Paths: []types.PathChange{}}
	if from == to {
		return c, nil
	}
	args := []string{"diff-tree", "-r", "-z", "--no-renames", "--raw", "--numstat", "--no-textconv", "--no-ext-diff"}
	if from == "" {
		args = append(args, "--root", to)
	} else {
		args = append(args, from, to)
	}
	err := r.stream(ctx, func(rd io.Reader) error { return readDiff(rd, &c) }, args...)
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
// to, and records the result as the run's newest checkpoint.
//
// When moving fails part way (a full disk, a file it cannot write), it
// puts the tree back as the checkpoint before says, and the error says
// so. Should that fail too, or the process die part way, every file is
// still in a checkpoint on the run's ref: taking the run up again (Begin,
// or Reopen and Snapshot as dtree undo does: the tree as it is is
// recorded) then Restore to the same commit again finishes the move
// (readme/workspace.md#safety).
func (run *Run) Restore(ctx context.Context, to, msg string) (before types.Change, err error) {
	if before, err = run.Checkpoint(ctx, "before "+msg); err != nil {
		return before, err
	}
	cur := run.Last
	toTree, err := run.Repo.output(ctx, "", nil, "rev-parse", "--verify", "--end-of-options", to+"^{tree}")
	if err != nil {
		return before, fmt.Errorf("restore: %w", err)
	}
	toTree = strings.TrimSpace(toTree)
	if toTree == cur.Tree {
		return before, nil
	}
	// git read-tree -m -u writes over an ignored file (git's read-tree
	// counts ignored files as expendable), and no checkpoint has one.
	if way, err := run.inTheWay(ctx, cur.Commit, to); err != nil {
		return before, fmt.Errorf("restore: %w", err)
	} else if len(way) > 0 {
		return before, &InTheWayError{Paths: way}
	}
	env := []string{"GIT_INDEX_FILE=" + run.index}
	run.synced = false
	start := time.Now()
	if err := run.Repo.git(ctx, "", env, nil, nil, "read-tree", "-m", "-u", cur.Commit, to); err != nil {
		if berr := run.putBack(context.WithoutCancel(ctx), cur, toTree, start); berr != nil {
			return before, fmt.Errorf("restore: %w; putting the working tree back failed too (%v): it may be part way; every file is in checkpoint %s of run %s: once the cause is fixed, restore again", err, berr, short(cur.Commit), run.ID)
		}
		return before, fmt.Errorf("restore: %w; the working tree is as it was (checkpoint %s)", err, short(cur.Commit))
	}
	// The tree is as to says. Recording it can still fail (no room for a
	// commit): the next checkpoint records it then.
	commit, err := run.Repo.output(ctx, "", nil, "commit-tree", toTree, "-p", cur.Commit, "-m", "dtree "+run.ID+": "+msg)
	if err != nil {
		return before, fmt.Errorf("restore: the working tree is as %s says, but it could not be recorded as a checkpoint: %w", short(to), err)
	}
	next := Checkpoint{Commit: strings.TrimSpace(commit), Tree: toTree}
	if err := run.Repo.git(ctx, "", nil, nil, nil, "update-ref", "-m", "dtree checkpoint", run.Ref, next.Commit, cur.Commit); err != nil {
		return before, fmt.Errorf("restore: the working tree is as %s says, but it could not be recorded as a checkpoint: %w", short(to), err)
	}
	run.Last, run.synced = next, true
	return before, nil
}

// putBack moves a working tree a restore left part way, from cur towards
// toTree, back to checkpoint cur. First the careful way: checkpoint what
// is there and move it back with read-tree -m, which overwrites nothing
// unrecorded. That needs room for the index and the objects; when it
// fails (the disk is full), the forced way: the files the move added
// (those of toTree not in cur, written since start) are removed, which
// frees room, and `read-tree --reset -u` writes cur's files back over
// what the move wrote. The index still holds cur: git writes it only at
// the end of a move, and a move that failed left it as it was.
func (run *Run) putBack(ctx context.Context, cur Checkpoint, toTree string, start time.Time) error {
	env := []string{"GIT_INDEX_FILE=" + run.index}
	if _, err := run.Checkpoint(ctx, "restore failed part way"); err == nil {
		if run.Last.Commit == cur.Commit {
			return nil // nothing had moved
		}
		if err := run.Repo.git(ctx, "", env, nil, nil, "read-tree", "-m", "-u", run.Last.Commit, cur.Commit); err == nil {
			return run.putBackAt(ctx, cur)
		}
	}
	// The forced way. First what frees room: removing the files the move
	// added. Then, as the checkpoint above may have failed after its add
	// wrote the index, the index starts again from cur's tree (stat data
	// lost: every file of cur is compared by content).
	run.synced = false
	if err := run.removeAdded(ctx, cur.Tree, toTree, start); err != nil {
		return err
	}
	if err := run.Repo.git(ctx, "", env, nil, nil, "read-tree", cur.Tree); err != nil {
		return err
	}
	if err := run.Repo.git(ctx, "", env, nil, nil, "read-tree", "--reset", "-u", cur.Tree); err != nil {
		return err
	}
	return run.putBackAt(ctx, cur)
}

// putBackAt records that the tree is back at checkpoint cur, its index
// too: a commit of cur's tree on the newest checkpoint (the part-way tree
// when putBack recorded it), so the run's ref keeps every state the tree
// was in. When that commit cannot be made (no room for it), the ref goes
// back to cur itself.
func (run *Run) putBackAt(ctx context.Context, cur Checkpoint) error {
	run.synced = false
	last := run.Last
	if last.Commit == cur.Commit {
		run.synced = true
		return nil
	}
	commit, err := run.Repo.output(ctx, "", nil, "commit-tree", cur.Tree, "-p", last.Commit, "-m", "dtree "+run.ID+": put back as it was")
	if err == nil {
		next := Checkpoint{Commit: strings.TrimSpace(commit), Tree: cur.Tree}
		if err = run.Repo.git(ctx, "", nil, nil, nil, "update-ref", "-m", "dtree checkpoint", run.Ref, next.Commit, last.Commit); err == nil {
			run.Last, run.synced = next, true
			return nil
		}
	}
	if err := run.Repo.git(ctx, "", nil, nil, nil, "update-ref", "-m", "dtree checkpoint", run.Ref, cur.Commit); err != nil {
		return err
	}
	run.Last, run.synced = cur, true
	return nil
}

// removeAdded removes the files of tree to that are not in tree from and
// were written since start: a move from one to the other wrote them.
// Files older than start were there before it (an ignored file the move
// refused to overwrite) and stay.
func (run *Run) removeAdded(ctx context.Context, from, to string, start time.Time) error {
	return run.Repo.stream(ctx, func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			path, err := br.ReadString(0)
			if err != nil {
				return nil
			}
			p := filepath.Join(run.Repo.Root, filepath.FromSlash(strings.TrimSuffix(path, "\x00")))
			if st, err := os.Lstat(p); err == nil && !st.IsDir() && !st.ModTime().Before(start) {
				os.Remove(p)
			}
		}
	}, "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--diff-filter=A", from, to)
}

// stream runs a git command whose stdout read reads as it comes, so that
// output of any size takes bounded memory. read's error wins over git's
// (git stopped writing because read stopped reading); what read leaves
// unread is drained, so git is never blocked on a full pipe.
func (r *Repo) stream(ctx context.Context, read func(io.Reader) error, args ...string) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- read(pr)
		io.Copy(io.Discard, pr) //nolint:errcheck // draining
	}()
	err := r.git(ctx, "", nil, nil, pw, args...)
	pw.Close()
	if rerr := <-done; rerr != nil {
		return rerr
	}
	return err
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

// Prune deletes a run's ref, its fork branches' (Ref(BranchRunID(runID,
// …)): refs/dtree/runs/RUN-ID.NAME), and its leftover index; the commits
// go with the next git gc.
func (r *Repo) Prune(ctx context.Context, runID string) error {
	os.Remove(filepath.Join(r.GitDir, "dtree", runID+".index"))
	var err error
	if runIDPattern.MatchString(runID) { // no character a pattern reads
		var refs string
		refs, err = r.output(ctx, "", nil, "for-each-ref", "--format=delete %(refname)", "--", Ref(runID), Ref(runID)+".*")
		if err == nil && refs != "" {
			err = r.git(ctx, "", nil, strings.NewReader(refs), nil, "update-ref", "--stdin")
		}
	} else {
		err = r.git(ctx, "", nil, nil, nil, "update-ref", "-d", Ref(runID))
	}
	if err != nil {
		return fmt.Errorf("removing the checkpoints of run %s: %w", runID, err)
	}
	return nil
}

// InTheWayError is a restore refused, before it changed anything, because
// files no checkpoint records (ignored ones) are where it would write.
type InTheWayError struct {
	Paths []string // the first MaxListedWay
}

// MaxListedWay bounds the files an InTheWayError names.
const MaxListedWay = 20

func (e *InTheWayError) Error() string {
	q := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		q[i] = strconv.Quote(p)
	}
	n := len(e.Paths)
	return fmt.Sprintf("restore: %s where it would write, and no checkpoint has %s: %s; the working tree is as it was (move %s away, then try again)",
		types.Choose(n, "an ignored file is", "ignored files are"), types.Choose(n, "it", "them"), strings.Join(q, ", "), types.Choose(n, "it", "them"))
}

// inTheWay is the files of the working tree, which no checkpoint records
// (ignored ones), that moving from cur to to would write over: where to
// adds a path, a file there, a directory there holding more than the
// files the move deletes, or a file where a directory above it goes.
func (run *Run) inTheWay(ctx context.Context, cur, to string) ([]string, error) {
	out, err := run.Repo.output(ctx, "", nil, "diff-tree", "-r", "-z", "--no-renames", "--name-status", "--diff-filter=AD", cur, to)
	if err != nil {
		return nil, err
	}
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	deleted := map[string]bool{}
	var added []string
	for i := 0; i+1 < len(f); i += 2 {
		switch f[i] {
		case "D":
			deleted[f[i+1]] = true
		case "A":
			added = append(added, f[i+1])
		}
	}
	var way []string
	seen := map[string]bool{}
	dirOK := map[string]bool{} // directories known to be directories
	abs := func(p string) string { return filepath.Join(run.Repo.Root, filepath.FromSlash(p)) }
	report := func(p string) {
		if !seen[p] {
			seen[p] = true
			way = append(way, p)
		}
	}
	for _, p := range added {
		if len(way) >= MaxListedWay {
			break
		}
		// The directories above it, from the top: a file (or a link)
		// there is replaced by the move when cur has it, else in the way.
		above := true
		for i := strings.IndexByte(p, '/'); i >= 0; i = nextSlash(p, i) {
			d := p[:i]
			if dirOK[d] {
				continue
			}
			st, err := os.Lstat(abs(d))
			if err != nil {
				above = false // not there: nothing below it either
				break
			}
			if !st.IsDir() {
				if !deleted[d] {
					report(d)
				}
				above = false
				break
			}
			dirOK[d] = true
		}
		if !above {
			continue
		}
		st, err := os.Lstat(abs(p))
		if err != nil {
			continue
		}
		if !st.IsDir() {
			report(p)
			continue
		}
		// A directory where a file goes: what the move deletes from it
		// goes; anything else in it is in the way.
		_ = filepath.WalkDir(abs(p), func(q string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			rel, rerr := filepath.Rel(run.Repo.Root, q)
			if rerr != nil || !deleted[filepath.ToSlash(rel)] {
				report(p)
				return filepath.SkipAll
			}
			return nil
		})
	}
	return way, nil
}

// nextSlash is the index of the next '/' in p after i, or -1.
func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
