package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The safety of readme/workspace.md#safety: in every state a user's
// repository can be in, a run's checkpoints record the agent's edits, a
// restore puts the tree back file for file, and the user's HEAD, index,
// refs, stash and in-progress operation are as they were.

// fingerprint is every file under root but .git: its kind, mode and
// content (a symlink's target), sorted, one a line.
func fingerprint(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a submodule's or linked worktree's .git file
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%q link %q", rel, target))
		case info.IsDir(): // git records no directory, only the files in it
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			lines = append(lines, fmt.Sprintf("%q %v %s", rel, info.Mode().Perm()&0o100, hex.EncodeToString(sum[:8])))
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// sameTree checks two fingerprints are the same, naming at most ten of
// the lines that differ.
func sameTree(t *testing.T, want, got, msg string) {
	t.Helper()
	if want == got {
		return
	}
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var diff []string
	for l := range w {
		if !g[l] {
			diff = append(diff, "- "+l)
		}
	}
	for l := range g {
		if !w[l] {
			diff = append(diff, "+ "+l)
		}
	}
	sort.Strings(diff)
	t.Errorf("%s: %d lines differ:\n%s", msg, len(diff), strings.Join(diff[:min(len(diff), 10)], "\n"))
}

// repoState is what of the repository is the user's: HEAD, index (its
// bytes), every ref but dtree's, stash, reflog, status and the files of
// an operation in progress (MERGE_HEAD, rebase-merge). It changes
// nothing: git status runs without optional locks.
func repoState(t *testing.T, root string) string {
	t.Helper()
	gitDir := strings.TrimSpace(mustGitEnv(t, root, nil, "rev-parse", "--absolute-git-dir"))
	index, err := os.ReadFile(filepath.Join(gitDir, "index"))
	if err != nil && !os.IsNotExist(err) {
		require.NoError(t, err)
	}
	sum := sha256.Sum256(index)
	var b strings.Builder
	fmt.Fprintf(&b, "index %x\n", sum[:8])
	var refs []string
	for _, line := range strings.Split(mustGitEnv(t, root, nil, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(line, "refs/dtree/") {
			refs = append(refs, line)
		}
	}
	b.WriteString(strings.Join(refs, "\n"))
	b.WriteString(mustGitEnv(t, root, nil, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"))
	b.WriteString(mustGitEnv(t, root, nil, "stash", "list"))
	for _, name := range []string{"HEAD", "MERGE_HEAD", "ORIG_HEAD", "REBASE_HEAD", "rebase-merge/done", "rebase-merge/git-rebase-todo", "logs/HEAD"} {
		if data, err := os.ReadFile(filepath.Join(gitDir, name)); err == nil {
			fmt.Fprintf(&b, "%s: %s\n", name, data)
		}
	}
	return b.String()
}

// mustGitEnv runs git in dir with the test identity, no machine config,
// no optional locks, and env; it returns stdout.
func mustGitEnv(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "protocol.file.allow=always", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(withoutGit(os.Environ()), append([]string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "GIT_OPTIONAL_LOCKS=0", "GIT_EDITOR=true", "DTREE_TEST_OWN_GIT=1"}, env...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "git %v: %s", args, stderr.String())
	return string(out)
}

// withoutGit is env without GIT_ variables: the test's own git commands
// read the repository they run in, whatever the test sets for dtree.
func withoutGit(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_") {
			out = append(out, kv)
		}
	}
	return out
}

// gitMay runs git and lets it fail (a merge that conflicts).
func gitMay(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "gc.auto=0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_EDITOR=true")
	cmd.Run() //nolint:errcheck // expected to fail
}

func TestSafetyRepositoryStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup makes the repository in dir and returns the directory
		// dtree runs in.
		setup func(t *testing.T, dir string) string
		// step is the agent's edit in root.
		step func(t *testing.T, root string)
		// want are paths the step's change lists, each with its status.
		want []string
		// check, when not nil, checks the tree after the undo.
		check func(t *testing.T, root string)
	}{
		{
			name: "mid-merge, conflicted index",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"a.txt": "base\n", "b.txt": "b\n"})
				mustGit(t, dir, "checkout", "-q", "-b", "other")
				commitFiles(t, dir, map[string]string{"a.txt": "other\n"})
				mustGit(t, dir, "checkout", "-q", "main")
				commitFiles(t, dir, map[string]string{"a.txt": "main\n"})
				gitMay(t, dir, "merge", "other")
				require.FileExists(t, filepath.Join(dir, ".git", "MERGE_HEAD"))
				require.NotEmpty(t, mustGit(t, dir, "ls-files", "-u"))
				return dir
			},
			step: func(t *testing.T, root string) {
				write(t, root, "a.txt", "resolved by the agent\n")
				write(t, root, "b.txt", "b2\n")
			},
			want: []string{"M a.txt", "M b.txt"},
		},
		{
			name: "mid-rebase",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"a.txt": "base\n"})
				mustGit(t, dir, "checkout", "-q", "-b", "topic")
				commitFiles(t, dir, map[string]string{"a.txt": "topic\n"})
				mustGit(t, dir, "checkout", "-q", "main")
				commitFiles(t, dir, map[string]string{"a.txt": "main\n"})
				mustGit(t, dir, "checkout", "-q", "topic")
				gitMay(t, dir, "rebase", "main")
				require.DirExists(t, filepath.Join(dir, ".git", "rebase-merge"))
				return dir
			},
			step: func(t *testing.T, root string) { write(t, root, "a.txt", "fixed\n") },
			want: []string{"M a.txt"},
		},
		{
			name: "detached HEAD",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"a.txt": "1\n"})
				commitFiles(t, dir, map[string]string{"a.txt": "2\n"})
				mustGit(t, dir, "checkout", "-q", "--detach", "HEAD~1")
				return dir
			},
			step: func(t *testing.T, root string) { write(t, root, "new.txt", "n\n") },
			want: []string{"A new.txt"},
		},
		{
			name: "unborn branch, no commit yet",
			setup: func(t *testing.T, dir string) string {
				write(t, dir, "a.txt", "a\n")
				write(t, dir, "staged.txt", "s\n")
				mustGit(t, dir, "add", "staged.txt")
				return dir
			},
			step: func(t *testing.T, root string) {
				write(t, root, "a.txt", "edited\n")
				require.NoError(t, os.Remove(filepath.Join(root, "staged.txt")))
			},
			want: []string{"M a.txt", "D staged.txt"},
		},
		{
			name: "submodule",
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "subsrc")
				require.NoError(t, os.Mkdir(sub, 0o755))
				mustGit(t, sub, "init", "-q", "-b", "main")
				commitFiles(t, sub, map[string]string{"s.txt": "s1\n"})
				root := filepath.Join(dir, "super")
				require.NoError(t, os.Mkdir(root, 0o755))
				mustGit(t, root, "init", "-q", "-b", "main")
				commitFiles(t, root, map[string]string{"a.txt": "a\n"})
				mustGitEnv(t, root, nil, "submodule", "add", "-q", sub, "mod")
				mustGit(t, root, "commit", "-q", "-m", "submodule")
				return root
			},
			step: func(t *testing.T, root string) {
				// The agent commits in the submodule: its gitlink moves.
				commitFiles(t, filepath.Join(root, "mod"), map[string]string{"s.txt": "s2\n"})
				write(t, root, "a.txt", "a2\n")
			},
			want: []string{"M a.txt", "M mod"},
			// A restore sets the gitlink back, not the submodule's own
			// checkout (`git submodule update` does that): the submodule
			// stays a working repository with the agent's commit.
			check: func(t *testing.T, root string) {
				assert.Equal(t, "s2\n", read(t, root, "mod/s.txt"))
				assert.Equal(t, "", mustGitEnv(t, filepath.Join(root, "mod"), nil, "status", "--porcelain"))
				assert.Equal(t, " M mod\n", mustGitEnv(t, root, nil, "status", "--porcelain"))
			},
		},
		{
			name: "odd file names",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"a.txt": "a\n", "-rf": "dash\n", "with space.txt": "s\n"})
				return dir
			},
			step: func(t *testing.T, root string) {
				write(t, root, "-rf", "dash edited\n")
				write(t, root, "--help", "h\n")
				write(t, root, "with space.txt", "s2\n")
				write(t, root, "new\nline.txt", "n\n")
				write(t, root, "caf\xe9 \xff.txt", "latin-1\n")
				write(t, root, ":(top)magic*?[a].txt", "magic\n")
				write(t, root, "dir with space/-x", "x\n")
			},
			want: []string{"M -rf", "A --help", "M with space.txt", "A new\nline.txt", "A caf\xe9 \xff.txt", "A :(top)magic*?[a].txt", "A dir with space/-x"},
		},
		{
			name: "symlinks and the executable bit",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"a.txt": "a\n", "run.sh": "#!/bin/sh\n", "b.txt": "b\n"})
				require.NoError(t, os.Symlink("a.txt", filepath.Join(dir, "link")))
				mustGit(t, dir, "add", "link")
				mustGit(t, dir, "commit", "-q", "-m", "link")
				return dir
			},
			step: func(t *testing.T, root string) {
				require.NoError(t, os.Chmod(filepath.Join(root, "run.sh"), 0o755))
				require.NoError(t, os.Remove(filepath.Join(root, "link")))
				require.NoError(t, os.Symlink("b.txt", filepath.Join(root, "link")))
				require.NoError(t, os.Symlink("../outside", filepath.Join(root, "newlink")))
			},
			want: []string{"M run.sh", "M link", "A newlink"},
		},
		{
			name: "a file replaced by a directory",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"x": "file\n", "d/y": "y\n"})
				return dir
			},
			step: func(t *testing.T, root string) {
				require.NoError(t, os.Remove(filepath.Join(root, "x")))
				write(t, root, "x/inner.txt", "now a directory\n")
				require.NoError(t, os.RemoveAll(filepath.Join(root, "d")))
				write(t, root, "d", "now a file\n")
			},
			want: []string{"D x", "A x/inner.txt", "D d/y", "A d"},
		},
		{
			name: "a directory replaced by a link to one outside",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"d/y": "y\n", "a.txt": "a\n"})
				return dir
			},
			step: func(t *testing.T, root string) {
				require.NoError(t, os.RemoveAll(filepath.Join(root, "d")))
				outside := filepath.Join(filepath.Dir(root), "outside-"+filepath.Base(root))
				require.NoError(t, os.MkdirAll(outside, 0o755))
				require.NoError(t, os.Symlink(outside, filepath.Join(root, "d")))
			},
			want: []string{"D d/y", "A d"},
			check: func(t *testing.T, root string) {
				// The undo wrote d/y in a directory d, not through the link.
				outside := filepath.Join(filepath.Dir(root), "outside-"+filepath.Base(root))
				assert.NoFileExists(t, filepath.Join(outside, "y"))
				info, err := os.Lstat(filepath.Join(root, "d"))
				require.NoError(t, err)
				assert.True(t, info.IsDir())
				assert.Equal(t, "y\n", read(t, root, "d/y"))
			},
		},
		{
			name: "a repository the agent made in the tree",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"a.txt": "a\n"})
				return dir
			},
			step: func(t *testing.T, root string) {
				nested := filepath.Join(root, "nested")
				require.NoError(t, os.Mkdir(nested, 0o755))
				mustGit(t, nested, "init", "-q", "-b", "main")
				commitFiles(t, nested, map[string]string{"n.txt": "n\n"})
			},
			want: []string{"A nested"},
			// Recorded as its commit (a gitlink); the undo does not
			// delete a repository: it is there, whole.
			check: func(t *testing.T, root string) {
				assert.Equal(t, "n\n", read(t, root, "nested/n.txt"))
				assert.Equal(t, "", mustGitEnv(t, filepath.Join(root, "nested"), nil, "status", "--porcelain"))
			},
		},
		{
			// As Git LFS's: what git stores is not the file. The filter
			// runs both ways, so a restore writes the file, not the blob.
			name: "a filter driver",
			setup: func(t *testing.T, dir string) string {
				mustGit(t, dir, "config", "filter.rev.clean", "rev")
				mustGit(t, dir, "config", "filter.rev.smudge", "rev")
				mustGit(t, dir, "config", "filter.rev.required", "true")
				commitFiles(t, dir, map[string]string{".gitattributes": "*.r filter=rev\n", "a.r": "hello\n", "b.r": "world\n"})
				// Files older than the index, as a user's are: git trusts
				// their stat data and does not read them again.
				old := time.Now().Add(-time.Hour)
				for _, name := range []string{"a.r", "b.r", ".gitattributes"} {
					require.NoError(t, os.Chtimes(filepath.Join(dir, name), old, old))
				}
				mustGit(t, dir, "update-index", "--refresh")
				return dir
			},
			step: func(t *testing.T, root string) {
				write(t, root, "a.r", "changed\n")
				require.NoError(t, os.Remove(filepath.Join(root, "b.r")))
				write(t, root, "c.r", "new\n")
			},
			want: []string{"M a.r", "D b.r", "A c.r"},
		},
		{
			name: "files marked assume-unchanged and skip-worktree",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
				mustGit(t, dir, "update-index", "--assume-unchanged", "a.txt")
				mustGit(t, dir, "update-index", "--skip-worktree", "b.txt")
				return dir
			},
			step: func(t *testing.T, root string) {
				write(t, root, "a.txt", "a2\n")
				write(t, root, "b.txt", "b2\n")
			},
			want: []string{"M a.txt", "M b.txt"},
		},
		{
			name: "a tracked file a .gitignore matches",
			setup: func(t *testing.T, dir string) string {
				commitFiles(t, dir, map[string]string{"config.local": "c\n", "a.txt": "a\n"})
				commitFiles(t, dir, map[string]string{".gitignore": "*.local\n"})
				return dir
			},
			step: func(t *testing.T, root string) { write(t, root, "config.local", "edited\n") },
			want: []string{"M config.local"},
		},
		{
			name: "linked worktree",
			setup: func(t *testing.T, dir string) string {
				main := filepath.Join(dir, "main")
				require.NoError(t, os.Mkdir(main, 0o755))
				mustGit(t, main, "init", "-q", "-b", "main")
				commitFiles(t, main, map[string]string{"a.txt": "a\n"})
				linked := filepath.Join(dir, "linked")
				mustGit(t, main, "worktree", "add", "-q", "-b", "side", linked)
				write(t, main, "main-only.txt", "the main worktree's\n")
				return linked
			},
			step: func(t *testing.T, root string) { write(t, root, "a.txt", "linked edit\n") },
			want: []string{"M a.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath("git"); err != nil {
				t.Skip("needs git")
			}
			dir := t.TempDir()
			if !strings.Contains(tt.name, "linked") && !strings.Contains(tt.name, "submodule") {
				mustGit(t, dir, "init", "-q", "-b", "main")
			}
			root := tt.setup(t, dir)
			checkRestore(t, root, tt.step, tt.want, tt.check)
		})
	}
}

// checkRestore runs a step in root between checkpoints, checks its change
// lists want, restores the tree before it and after it, and checks that
// each is as it was file for file, and the user's repository untouched.
func checkRestore(t *testing.T, root string, step func(*testing.T, string), want []string, check func(*testing.T, string)) {
	t.Helper()
	ctx := context.Background()
	userBefore := repoState(t, root)
	treeBefore := fingerprint(t, root)
	repo, err := Open(ctx, root)
	require.NoError(t, err)
	run, err := repo.Begin(ctx, "safety", "")
	require.NoError(t, err)
	defer run.Close()
	base := run.Last
	assert.Equal(t, userBefore, repoState(t, root), "Begin changed the user's repository")

	step(t, root)
	treeAfter := fingerprint(t, root)
	c, err := run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	var got []string
	for _, p := range c.Paths {
		got = append(got, p.Status+" "+p.Path)
	}
	assert.ElementsMatch(t, want, got)
	after := run.Last

	_, err = run.Restore(ctx, base.Commit, "undo")
	require.NoError(t, err)
	if check != nil {
		check(t, root)
	} else {
		sameTree(t, treeBefore, fingerprint(t, root), "the tree after undo is not the tree before the step")
		assert.Equal(t, userBefore, repoState(t, root), "the user's repository changed")
	}

	_, err = run.Restore(ctx, after.Commit, "redo")
	require.NoError(t, err)
	sameTree(t, treeAfter, fingerprint(t, root), "the tree after redo is not the tree after the step")
}

// commitFiles writes files in dir and commits them.
func commitFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		write(t, dir, name, text)
	}
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "-q", "-m", "files")
}

// TestSafetyHostileConfig: a repository whose config runs programs (an
// fsmonitor, every hook, an external diff, a textconv, a pager): no
// checkpoint or restore runs any of them. (Filter drivers do run: see the
// filter driver case of TestSafetyRepositoryStates.)
func TestSafetyHostileConfig(t *testing.T) {
	t.Parallel()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", ".gitattributes": "* diff=evil\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	prog := filepath.Join(t.TempDir(), "evil")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\n[ -n \"$DTREE_TEST_OWN_GIT\" ] || echo \"$0 $*\" >> '"+marker+"'\ncat\n"), 0o755))
	for _, kv := range [][2]string{
		{"core.fsmonitor", prog},
		{"diff.external", prog},
		{"diff.evil.textconv", prog + " textconv"},
		{"core.pager", prog + " pager"},
	} {
		mustGit(t, dir, "config", kv[0], kv[1])
	}
	hooks := filepath.Join(dir, ".git", "hooks")
	for _, hook := range []string{"reference-transaction", "post-index-change", "pre-commit", "post-commit", "post-checkout", "pre-auto-gc"} {
		require.NoError(t, os.WriteFile(filepath.Join(hooks, hook), []byte("#!/bin/sh\n[ -n \"$DTREE_TEST_OWN_GIT\" ] || echo "+hook+" >> '"+marker+"'\n"), 0o755))
	}
	require.NoFileExists(t, marker)
	checkRestore(t, dir, func(t *testing.T, root string) {
		write(t, root, "a.txt", "edited\n")
		write(t, root, "b.txt", "new\n")
	}, []string{"M a.txt", "A b.txt"}, nil)
	_, err := os.Stat(marker)
	if err == nil {
		b, _ := os.ReadFile(marker)
		t.Fatalf("a program of the repository's config ran:\n%s", b)
	}
}

// TestSafetyGitEnvironment: dtree run under git (a hook) or with GIT_
// variables set still records the repository it is in, and the index,
// objects and refs those variables name are untouched.
func TestSafetyGitEnvironment(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n", "*.txt": "a file named like a glob\n"})
	other := gitRepo(t, map[string]string{"o.txt": "o\n"})
	otherState := repoState(t, other)
	for k, v := range map[string]string{
		"GIT_DIR":                          filepath.Join(other, ".git"),
		"GIT_WORK_TREE":                    other,
		"GIT_INDEX_FILE":                   filepath.Join(dir, ".git", "index"),
		"GIT_OBJECT_DIRECTORY":             filepath.Join(other, ".git", "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES": filepath.Join(other, ".git", "objects"),
		"GIT_LITERAL_PATHSPECS":            "1",
		"GIT_ICASE_PATHSPECS":              "1",
		"GIT_NAMESPACE":                    "elsewhere",
		"GIT_CONFIG_PARAMETERS":            "'core.hookspath'='" + other + "'",
	} {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	assert.Equal(t, dir, repo.Root)
	checkRestore(t, dir, func(t *testing.T, root string) {
		write(t, root, "a.txt", "edited\n")
		write(t, root, "A.TXT", "another case\n")
	}, []string{"M a.txt", "A A.TXT"}, nil)
	// The run's logs are left out by a pathspec: the environment does not
	// turn it into a glob or a literal.
	run, err := repo.Begin(ctx, "env", "", filepath.Join(dir, "logs"))
	require.NoError(t, err)
	defer run.Close()
	write(t, dir, "logs/run.log", "more\n")
	write(t, dir, "a.txt", "again\n")
	c, err := run.Checkpoint(ctx, "step")
	require.NoError(t, err)
	require.Len(t, c.Paths, 1)
	assert.Equal(t, "a.txt", c.Paths[0].Path)
	assert.Equal(t, otherState, repoState(t, other), "the repository GIT_DIR named changed")
}

// TestBaseEnv: what of the caller's environment dtree's git commands
// keep: nothing that points git at another repository, index or object
// store or changes how pathspecs read; what says where git is, which
// config it reads and where it stops looking for a repository.
func TestBaseEnv(t *testing.T) {
	t.Parallel()
	in := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8",
		"GIT_DIR=/x/.git", "GIT_WORK_TREE=/x", "GIT_INDEX_FILE=/x/.git/index.lock", "GIT_PREFIX=sub/",
		"GIT_OBJECT_DIRECTORY=/x/.git/objects/incoming", "GIT_ALTERNATE_OBJECT_DIRECTORIES=/y", "GIT_QUARANTINE_PATH=/q",
		"GIT_COMMON_DIR=/c", "GIT_NAMESPACE=ns", "GIT_LITERAL_PATHSPECS=1", "GIT_GLOB_PATHSPECS=1", "GIT_ICASE_PATHSPECS=1",
		"GIT_CONFIG_PARAMETERS='core.hookspath'='/evil'", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=/evil",
		"GIT_AUTHOR_NAME=someone", "GIT_EXTERNAL_DIFF=/evil", "GIT_EDITOR=vi",
		"GIT_EXEC_PATH=/usr/lib/git-core", "GIT_CONFIG_GLOBAL=/home/u/.gitconfig", "GIT_CONFIG_NOSYSTEM=1", "GIT_ATTR_NOSYSTEM=1",
		"GIT_CEILING_DIRECTORIES=/home", "GIT_DISCOVERY_ACROSS_FILESYSTEM=1", "GIT_TRACE2_EVENT=/tmp/t",
	}
	got := baseEnv(in)
	var gits []string
	for _, kv := range got {
		if strings.HasPrefix(kv, "GIT_") {
			gits = append(gits, kv)
		}
	}
	assert.Equal(t, []string{
		"GIT_EXEC_PATH=/usr/lib/git-core", "GIT_CONFIG_GLOBAL=/home/u/.gitconfig", "GIT_CONFIG_NOSYSTEM=1", "GIT_ATTR_NOSYSTEM=1",
		"GIT_CEILING_DIRECTORIES=/home", "GIT_DISCOVERY_ACROSS_FILESYSTEM=1", "GIT_TRACE2_EVENT=/tmp/t",
		"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=dtree", "GIT_AUTHOR_EMAIL=dtree@localhost",
		"GIT_COMMITTER_NAME=dtree", "GIT_COMMITTER_EMAIL=dtree@localhost",
	}, gits)
	assert.Subset(t, got, []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8"})
}

// TestOpenCeiling: GIT_CEILING_DIRECTORIES keeps dtree out of a
// repository above it, as it keeps git out: no checkpoints there.
func TestOpenCeiling(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	t.Setenv("GIT_CEILING_DIRECTORIES", dir)
	_, err := Open(context.Background(), sub)
	require.ErrorIs(t, err, ErrNotGit)
}
