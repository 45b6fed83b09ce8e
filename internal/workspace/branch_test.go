package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBranchDirName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 10<<10)
	tests := []struct {
		label string
		want  string // "" when only the properties are checked
	}{
		{"docs", "docs"},
		{"unit_tests-2", "unit_tests-2"},
		{"Unit tests", "Unit-tests."},
		{"unit tests", "unit-tests."},
		{"unit-tests", "unit-tests"},
		{"../../etc/passwd", "etc-passwd."},
		{"..", "branch."},
		{".", "branch."},
		{"", "branch."},
		{"a/b", "a-b."},
		{`a\b`, "a-b."},
		{"nul\x00byte", "nul-byte."},
		{"-rf", "rf."},
		{"x.lock", "x-lock."},
		{"données", "donn-es."},
		{"テスト", "branch."},
		{"con", "con_."},
		{"CON", "CON_."},
		{"a\nb", "a-b."},
		{"bad\xffutf8", "bad-utf8."},
		{long, strings.Repeat("x", 40) + "."},
		{long + "y", strings.Repeat("x", 40) + "."},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		name := BranchDirName(tt.label)
		if tt.want != "" && strings.HasSuffix(tt.want, ".") {
			assert.True(t, strings.HasPrefix(name, tt.want), "%q gives %q", tt.label, name)
			assert.Len(t, name, len(tt.want)+12, "%q gives %q", tt.label, name)
		} else if tt.want != "" {
			assert.Equal(t, tt.want, name)
		}
		assert.LessOrEqual(t, len(name), 53, "%q", tt.label)
		assert.NotContains(t, name, "/")
		assert.NotContains(t, name, `\`)
		assert.NotContains(t, name, "\x00")
		assert.NotContains(t, name, "..")
		assert.NotEqual(t, ".", name[:1], "%q gives %q", tt.label, name)
		assert.NotEqual(t, "-", name[:1], "%q gives %q", tt.label, name)
		// Unique, where case is ignored too.
		low := strings.ToLower(name)
		if other, ok := seen[low]; ok {
			t.Errorf("%q and %q both give %q", other, tt.label, name)
		}
		seen[low] = tt.label
		// Always the same.
		assert.Equal(t, name, BranchDirName(tt.label))
	}
	// Every one is a valid ref for the branch's checkpoints.
	if testing.Short() {
		return
	}
	dir := gitRepo(t, map[string]string{"a": "a\n"})
	for _, tt := range tests {
		mustGit(t, dir, "check-ref-format", Ref(BranchRunID("20261127T080000Z-abcdef", tt.label)))
	}
}

// gitCommit makes a commit on parent with files changed (nil: deleted),
// without moving any branch, and returns it.
func gitCommit(t *testing.T, dir, parent string, files map[string]*string) string {
	t.Helper()
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	run := func(args ...string) string {
		t.Helper()
		return gitEnv(t, dir, env, args...)
	}
	run("read-tree", parent)
	for name, text := range files {
		if text == nil {
			run("rm", "-q", "--cached", "--", name)
			continue
		}
		blob := strings.TrimSpace(gitIn(t, dir, *text, "hash-object", "-w", "--stdin"))
		run("update-index", "--add", "--cacheinfo", "100644,"+blob+","+name)
	}
	tree := strings.TrimSpace(run("write-tree"))
	return strings.TrimSpace(run("commit-tree", tree, "-p", parent, "-m", "branch"))
}

func gitEnv(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := gitCmd(dir, args...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := gitCmd(dir, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	require.NoError(t, err, "git %v", args)
	return string(out)
}

func s(text string) *string { return &text }

// show is a file of a commit.
func show(t *testing.T, dir, commit, path string) string {
	t.Helper()
	return gitIn(t, dir, "", "cat-file", "blob", commit+":"+path)
}

func lines(n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if c, ok := change[i]; ok {
			b.WriteString(c + "\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

// commitLabel is a commit id merge-tree puts in a path it moves aside.
var commitLabel = regexp.MustCompile(`~[0-9a-f]{40}$`)

func TestMergeBranches(t *testing.T) {
	t.Parallel()
	ten := lines(10, nil)
	bin := "\x00\x01binary\x00"
	type branch struct {
		name  string
		files map[string]*string // nil map: no change (the tip is base)
	}
	tests := []struct {
		name      string
		branches  []branch
		conflicts []Conflict
		files     map[string]string // in the merged commit ("" : not there)
		markers   []string          // files holding conflict markers
	}{
		{
			name: "different files",
			branches: []branch{
				{"tests", map[string]*string{"a.txt": s("A\n")}},
				{"docs", map[string]*string{"b.txt": s("B\n")}},
			},
			files: map[string]string{"a.txt": "A\n", "b.txt": "B\n", "f.txt": ten},
		},
		{
			name: "one file, other lines",
			branches: []branch{
				{"tests", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "one"}))}},
				{"docs", map[string]*string{"f.txt": s(lines(10, map[int]string{9: "nine"}))}},
			},
			files: map[string]string{"f.txt": lines(10, map[int]string{1: "one", 9: "nine"})},
		},
		{
			name: "same lines",
			branches: []branch{
				{"tests", map[string]*string{"f.txt": s(lines(10, map[int]string{5: "tests"})), "a.txt": s("A\n")}},
				{"docs", map[string]*string{"f.txt": s(lines(10, map[int]string{5: "docs"}))}},
			},
			conflicts: []Conflict{{"f.txt", []string{"tests", "docs"}}},
			files:     map[string]string{"a.txt": "A\n"},
			markers:   []string{"f.txt"},
		},
		{
			// Labels are any text: a NUL, 10 KB.
			name: "odd names",
			branches: []branch{
				{"../x\x00y", map[string]*string{"f.txt": s(lines(10, map[int]string{5: "one"}))}},
				{strings.Repeat("é", 5<<10), map[string]*string{"f.txt": s(lines(10, map[int]string{5: "two"}))}},
			},
			conflicts: []Conflict{{"f.txt", []string{"../x\x00y", strings.Repeat("é", 5<<10)}}},
			markers:   []string{"f.txt"},
		},
		{
			name: "deleted by one, changed by the other",
			branches: []branch{
				{"clean up", map[string]*string{"f.txt": nil}},
				{"docs", map[string]*string{"f.txt": s(lines(10, map[int]string{2: "two"}))}},
			},
			conflicts: []Conflict{{"f.txt", []string{"clean up", "docs"}}},
			files:     map[string]string{"f.txt": lines(10, map[int]string{2: "two"})},
		},
		{
			name: "a branch with no change",
			branches: []branch{
				{"idle", nil},
				{"docs", map[string]*string{"b.txt": s("B\n")}},
				{"idle too", nil},
			},
			files: map[string]string{"b.txt": "B\n", "a.txt": "a\n"},
		},
		{
			name: "added by both, the same",
			branches: []branch{
				{"one", map[string]*string{"new.txt": s("same\n")}},
				{"two", map[string]*string{"new.txt": s("same\n")}},
			},
			files: map[string]string{"new.txt": "same\n"},
		},
		{
			name: "added by both, different",
			branches: []branch{
				{"one", map[string]*string{"new.txt": s("one\n")}},
				{"two", map[string]*string{"new.txt": s("two\n")}},
			},
			conflicts: []Conflict{{"new.txt", []string{"one", "two"}}},
			markers:   []string{"new.txt"},
		},
		{
			name: "binary",
			branches: []branch{
				{"one", map[string]*string{"bin.dat": s(bin + "one")}},
				{"two", map[string]*string{"bin.dat": s(bin + "two")}},
			},
			conflicts: []Conflict{{"bin.dat", []string{"one", "two"}}},
			files:     map[string]string{"bin.dat": bin + "one"}, // the first's kept
		},
		{
			// The merge base of every step is base: three branches on
			// other lines of one file merge cleanly.
			name: "three branches, one file",
			branches: []branch{
				{"a", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "A"}))}},
				{"b", map[string]*string{"f.txt": s(lines(10, map[int]string{5: "B"}))}},
				{"c", map[string]*string{"f.txt": s(lines(10, map[int]string{10: "C"}))}},
			},
			files: map[string]string{"f.txt": lines(10, map[int]string{1: "A", 5: "B", 10: "C"})},
		},
		{
			// A conflict, then a branch on other lines of the file: it
			// merges onto the markers; the conflict names all three.
			name: "conflict, then another line",
			branches: []branch{
				{"a", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "A"}))}},
				{"b", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "B"}))}},
				{"c", map[string]*string{"f.txt": s(lines(10, map[int]string{10: "C"})), "c.txt": s("C\n")}},
			},
			conflicts: []Conflict{{"f.txt", []string{"a", "b", "c"}}},
			files:     map[string]string{"c.txt": "C\n"},
			markers:   []string{"f.txt"},
		},
		{
			// A conflict, then a branch on the same lines: markers around
			// the markers.
			name: "conflict, then the same line",
			branches: []branch{
				{"a", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "A"}))}},
				{"b", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "B"}))}},
				{"c", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "C"}))}},
			},
			conflicts: []Conflict{{"f.txt", []string{"a", "b", "c"}}},
			markers:   []string{"f.txt"},
		},
		{
			name: "a file where the other adds a directory",
			branches: []branch{
				{"file", map[string]*string{"x": s("file\n")}},
				{"dir", map[string]*string{"x/y": s("dir\n")}},
			},
			conflicts: []Conflict{{"x~COMMIT", []string{"file", "dir"}}},
			files:     map[string]string{"x/y": "dir\n"},
		},
		{
			name: "renamed by one, changed by the other",
			branches: []branch{
				{"move", map[string]*string{"f.txt": nil, "h.txt": s(ten)}},
				{"edit", map[string]*string{"f.txt": s(lines(10, map[int]string{3: "three"}))}},
			},
			files: map[string]string{"h.txt": lines(10, map[int]string{3: "three"})},
		},
		{
			name: "renamed two ways",
			branches: []branch{
				{"h", map[string]*string{"f.txt": nil, "h.txt": s(ten)}},
				{"k", map[string]*string{"f.txt": nil, "k.txt": s(ten)}},
			},
			conflicts: []Conflict{{"f.txt", []string{"h", "k"}}, {"h.txt", []string{"h", "k"}}, {"k.txt", []string{"h", "k"}}},
		},
		{
			// The conflict is at the new name; the branch that changed
			// the old one is named too.
			name: "renamed and changed by one, changed by the other",
			branches: []branch{
				{"move", map[string]*string{"f.txt": nil, "h.txt": s(lines(10, map[int]string{1: "moved"}))}},
				{"edit", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "edited"}))}},
			},
			conflicts: []Conflict{{"h.txt", []string{"move", "edit"}}},
			markers:   []string{"h.txt"},
		},
		{
			name: "conflicts in two steps",
			branches: []branch{
				{"a", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "A"})), "g.txt": s("A\n")}},
				{"b", map[string]*string{"f.txt": s(lines(10, map[int]string{1: "B"}))}},
				{"c", map[string]*string{"g.txt": s("C\n")}},
			},
			conflicts: []Conflict{{"f.txt", []string{"a", "b"}}, {"g.txt", []string{"a", "c"}}},
			markers:   []string{"f.txt", "g.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := gitRepo(t, map[string]string{"f.txt": ten, "a.txt": "a\n", "g.txt": "g\n", "bin.dat": bin})
			base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
			var tips []Tip
			for _, b := range tt.branches {
				commit := "main" // a name for base: resolved
				if b.files != nil {
					commit = gitCommit(t, dir, base, b.files)
				}
				tips = append(tips, Tip{Name: b.name, Commit: commit})
			}
			repo, err := Open(ctx, dir)
			require.NoError(t, err)
			given := slices.Clone(tips)
			m, err := repo.MergeBranches(ctx, base, tips)
			require.NoError(t, err)
			assert.Equal(t, given, tips, "the caller's tips are as they were")
			assert.Equal(t, len(tt.conflicts) == 0, m.Clean)
			assert.Equal(t, m.Clean, m.Labels == nil)
			for i := range m.Conflicts {
				m.Conflicts[i].Path = commitLabel.ReplaceAllString(m.Conflicts[i].Path, "~COMMIT")
			}
			assert.Equal(t, tt.conflicts, m.Conflicts)
			for name, want := range tt.files {
				assert.Equal(t, want, show(t, dir, m.Commit, name), name)
			}
			for _, name := range tt.markers {
				text := show(t, dir, m.Commit, name)
				assert.Contains(t, text, "<<<<<<< ", name)
				assert.Contains(t, text, ">>>>>>> ", name)
			}
			// Every branch that changed something is in the merge's history.
			for _, tip := range tips {
				mustGit(t, dir, "merge-base", "--is-ancestor", tip.Commit, m.Commit)
			}
			// The user's branch did not move.
			assert.Equal(t, base, strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD")))
		})
	}
}

// The markers of a conflict onto which a later branch changed the same
// line hold both conflicts: each side's text is there.
func TestMergeBranchesNestedMarkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"f.txt": lines(10, nil)})
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	var tips []Tip
	for _, n := range []string{"A", "B", "C"} {
		tips = append(tips, Tip{Name: n, Commit: gitCommit(t, dir, base, map[string]*string{"f.txt": s(lines(10, map[int]string{1: n}))})})
	}
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	m, err := repo.MergeBranches(ctx, base, tips)
	require.NoError(t, err)
	text := show(t, dir, m.Commit, "f.txt")
	for _, n := range []string{"\nA\n", "\nB\n", "\nC\n"} {
		assert.Contains(t, text, n)
	}
	assert.Equal(t, 2, strings.Count(text, "<<<<<<< "), text)
	// The inner conflict is A against B, the outer the result so far
	// against C; Labels says which branches each label holds.
	assert.Contains(t, text, "<<<<<<< "+tips[0].Commit+"\n")
	assert.Contains(t, text, ">>>>>>> "+tips[1].Commit+"\n")
	assert.Contains(t, text, ">>>>>>> "+tips[2].Commit+"\n")
	require.Len(t, m.Labels, 4)
	assert.Equal(t, []string{"A"}, m.Labels[tips[0].Commit])
	assert.Equal(t, []string{"B"}, m.Labels[tips[1].Commit])
	assert.Equal(t, []string{"C"}, m.Labels[tips[2].Commit])
	outer := strings.TrimPrefix(strings.SplitN(text, "\n", 2)[0], "<<<<<<< ")
	assert.Equal(t, []string{"A", "B"}, m.Labels[outer], text)
}

func TestMergeBranchesErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"f.txt": "f\n"})
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	one := gitCommit(t, dir, base, map[string]*string{"f.txt": s("one\n")})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)

	// No branches: the base.
	m, err := repo.MergeBranches(ctx, base, nil)
	require.NoError(t, err)
	assert.Equal(t, Merge{Commit: base, Clean: true}, m)

	_, err = repo.MergeBranches(ctx, base, []Tip{{Name: "docs", Commit: "nope"}})
	require.ErrorContains(t, err, `branch "docs": "nope" is not a commit`)
	_, err = repo.MergeBranches(ctx, "--output=x", []Tip{{Name: "docs", Commit: one}})
	require.ErrorContains(t, err, `the fork's checkpoint: "--output=x" is not a commit`)
	assert.NoFileExists(t, filepath.Join(dir, "x"))
	// A tip that is not of the fork: the caller's mistake, said.
	_, err = repo.MergeBranches(ctx, one, []Tip{{Name: "docs", Commit: base}})
	require.ErrorContains(t, err, `branch "docs": its commit `+short(base)+" does not descend from the fork's checkpoint "+short(one))
}

// A repository whose config defines a merge driver, which its attributes
// name, cannot make the merge run it: git's own merge runs instead.
func TestMergeBranchesNoRepositoryDriver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"f.txt": lines(10, nil), "g.txt": lines(10, nil), "h.txt": lines(10, nil), ".gitattributes": "f.txt merge=evil\n"})
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	mark := filepath.Join(t.TempDir(), "driver-ran")
	driver := "touch '" + mark + "'; exit 1"
	mustGit(t, dir, "config", "merge.evil.driver", driver)
	mustGit(t, dir, "config", "merge.the.worst.driver", driver) // a dotted name
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "info", "attributes"), []byte("g.txt merge=the.worst\n"), 0o644))
	// For files no attribute names (h.txt), from an included file.
	include := filepath.Join(t.TempDir(), "included")
	require.NoError(t, os.WriteFile(include, []byte("[merge]\n\tdefault = odd name=x\n[merge \"odd name=x\"]\n\tdriver = \""+driver+"\"\n"), 0o644))
	mustGit(t, dir, "config", "include.path", include)
	changes := func(who string, line int) map[string]*string {
		return map[string]*string{"f.txt": s(lines(10, map[int]string{line: who})), "g.txt": s(lines(10, map[int]string{2: who})), "h.txt": s(lines(10, map[int]string{line: who}))}
	}
	a, b := gitCommit(t, dir, base, changes("a", 1)), gitCommit(t, dir, base, changes("b", 9))

	// Git itself runs the driver: the test can see it.
	out, err := gitCmd(dir, "merge-tree", "--write-tree", "--no-messages", "--name-only", a, b).CombinedOutput()
	require.Equal(t, "f.txt\ng.txt\nh.txt\n", strings.SplitN(string(out), "\n", 2)[1], "the drivers said conflict: %v", err)
	require.FileExists(t, mark)
	require.NoError(t, os.Remove(mark))

	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	m, err := repo.MergeBranches(ctx, base, []Tip{{"a", a}, {"b", b}})
	require.NoError(t, err)
	assert.NoFileExists(t, mark, "the repository's merge driver ran")
	// f.txt and h.txt merged as git merges: both changes; g.txt
	// conflicts, with markers labelled by commit.
	assert.Equal(t, lines(10, map[int]string{1: "a", 9: "b"}), show(t, dir, m.Commit, "f.txt"))
	assert.Equal(t, lines(10, map[int]string{1: "a", 9: "b"}), show(t, dir, m.Commit, "h.txt"))
	assert.Equal(t, []Conflict{{"g.txt", []string{"a", "b"}}}, m.Conflicts)
	g := show(t, dir, m.Commit, "g.txt")
	assert.Contains(t, g, "<<<<<<< "+a+"\n")
	assert.Contains(t, g, ">>>>>>> "+b+"\n")
}

// Sixteen branches merge in a few git commands each.
func TestMergeSixteenBranches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 16
	dir := gitRepo(t, map[string]string{"f.txt": lines(3*n, nil)})
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	var tips []Tip
	want := map[int]string{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("branch %d", i)
		line := 3*i + 2 // every third line: hunks apart
		want[line] = name
		tips = append(tips, Tip{Name: name, Commit: gitCommit(t, dir, base, map[string]*string{
			"f.txt":                     s(lines(3*n, map[int]string{line: name})),
			fmt.Sprintf("b%02d.txt", i): s(name + "\n"),
		})})
	}
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	start := time.Now()
	m, err := repo.MergeBranches(ctx, base, tips)
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("16 branches merged in %v", took)
	assert.True(t, m.Clean, "%v", m.Conflicts)
	assert.Equal(t, lines(3*n, want), show(t, dir, m.Commit, "f.txt"))
	for i := 0; i < n; i++ {
		assert.Equal(t, fmt.Sprintf("branch %d\n", i), show(t, dir, m.Commit, fmt.Sprintf("b%02d.txt", i)))
	}
	// One merge commit per branch but the first, first parents back to
	// the first branch, then base.
	assert.Equal(t, fmt.Sprint(n), strings.TrimSpace(mustGit(t, dir, "rev-list", "--count", "--first-parent", base+".."+m.Commit)))
	assert.Less(t, took, 30*time.Second)
}

// Restore puts the run's working tree at the merge: the merged files, and
// the markers when it is not clean.
func TestRestoreMerge(t *testing.T) {
	t.Parallel()
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprint("clean=", clean), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := gitRepo(t, map[string]string{"f.txt": lines(10, nil), ".gitignore": "build/\n"})
			write(t, dir, "build/out", "ignored\n")
			repo, err := Open(ctx, dir)
			require.NoError(t, err)
			run, err := repo.Begin(ctx, "20261127T080000Z-abcdef", "")
			require.NoError(t, err)
			defer run.Close()
			base := run.Last.Commit
			bLine := 9
			if !clean {
				bLine = 1
			}
			a := gitCommit(t, dir, base, map[string]*string{"f.txt": s(lines(10, map[int]string{1: "a"})), "a.txt": s("A\n")})
			b := gitCommit(t, dir, base, map[string]*string{"f.txt": s(lines(10, map[int]string{bLine: "b"}))})
			m, err := repo.MergeBranches(ctx, base, []Tip{{"a", a}, {"b", b}})
			require.NoError(t, err)
			require.Equal(t, clean, m.Clean)
			_, err = run.Restore(ctx, m.Commit, "join")
			require.NoError(t, err)
			assert.Equal(t, "A\n", read(t, dir, "a.txt"))
			f := read(t, dir, "f.txt")
			if clean {
				assert.Equal(t, lines(10, map[int]string{1: "a", 9: "b"}), f)
			} else {
				assert.Contains(t, f, "<<<<<<< ")
				assert.Contains(t, f, "\na\n=======\nb\n")
			}
			assert.Equal(t, "ignored\n", read(t, dir, "build/out"))
			// The run's newest checkpoint is the merged tree.
			assert.Equal(t, strings.TrimSpace(mustGit(t, dir, "rev-parse", m.Commit+"^{tree}")), run.Last.Tree)
		})
	}
}

// The whole way: a fork's two branches each in its worktree, each
// checkpointed on its own ref, merged, restored in the run's tree, the
// worktrees removed.
func TestBranchTrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"f.txt": lines(10, nil), ".gitignore": "build/\n"})
	write(t, dir, "wip.txt", "the user's\n")
	before := userState(t, dir)
	mark := hostile(t, dir)
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	const runID = "20261127T080000Z-abcdef"
	run, err := repo.Begin(ctx, runID, "")
	require.NoError(t, err)
	defer run.Close()
	fork := run.Last.Commit

	labels := []string{"Unit tests", "../docs"}
	trees := make([]*Worktree, len(labels))
	errs := make([]error, len(labels))
	var wg sync.WaitGroup
	for i, label := range labels { // side by side, as the coordinator does
		wg.Add(1)
		go func() {
			defer wg.Done()
			trees[i], errs[i] = repo.AddBranchTree(ctx, runID, label, fork)
		}()
	}
	wg.Wait()
	for i, label := range labels {
		require.NoError(t, errs[i])
		wt := trees[i]
		assert.Equal(t, repo.BranchTreeDir(runID, label), wt.Dir)
		assert.Equal(t, filepath.Join(dir, ".dtree", "worktrees", runID+".b"), filepath.Dir(wt.Dir))
		assert.Equal(t, wt.Dir, wt.Repo.Root)
		assert.Equal(t, fork, wt.Base)
		assert.Empty(t, wt.Branch)
		assert.Equal(t, fork+"\n", mustGit(t, wt.Dir, "rev-parse", "HEAD"))
		assert.Equal(t, "the user's\n", read(t, wt.Dir, "wip.txt"), "the fork's checkpoint has it")
	}
	assert.Equal(t, ".gitignore\nf.txt\nwip.txt\n", mustGit(t, dir, "ls-tree", "--name-only", fork))

	// Each branch checkpoints in its worktree, on its own ref.
	var tips []Tip
	for i, label := range labels {
		br, err := trees[i].Repo.Begin(ctx, BranchRunID(runID, label), fork)
		require.NoError(t, err)
		write(t, trees[i].Dir, fmt.Sprintf("b%d.txt", i), label+"\n")
		write(t, trees[i].Dir, "f.txt", lines(10, map[int]string{1 + 8*i: label}))
		_, err = br.Checkpoint(ctx, "step")
		require.NoError(t, err)
		br.Close()
		// The ref is seen from the run's repository.
		assert.Equal(t, br.Last.Commit+"\n", mustGit(t, dir, "rev-parse", Ref(BranchRunID(runID, label))))
		mustGit(t, dir, "merge-base", "--is-ancestor", fork, br.Last.Commit)
		tips = append(tips, Tip{Name: label, Commit: br.Last.Commit})
	}
	assert.NoFileExists(t, filepath.Join(dir, "b0.txt"), "a branch's files stay in its worktree")

	m, err := repo.MergeBranches(ctx, fork, tips)
	require.NoError(t, err)
	require.True(t, m.Clean)
	_, err = run.Restore(ctx, m.Commit, "join")
	require.NoError(t, err)
	assert.Equal(t, "Unit tests\n", read(t, dir, "b0.txt"))
	assert.Equal(t, "../docs\n", read(t, dir, "b1.txt"))
	assert.Equal(t, lines(10, map[int]string{1: "Unit tests", 9: "../docs"}), read(t, dir, "f.txt"))

	for _, wt := range trees {
		write(t, wt.Dir, "left.txt", "not checkpointed\n")
		require.NoError(t, repo.RemoveBranchTree(ctx, wt))
		assert.NoDirExists(t, wt.Dir)
		require.NoError(t, repo.RemoveBranchTree(ctx, wt), "twice")
	}
	assert.NoDirExists(t, filepath.Join(dir, ".dtree", "worktrees", runID+".b"))
	assert.NotContains(t, mustGit(t, dir, "worktree", "list", "--porcelain"), runID)
	// The branches' checkpoints stay.
	for _, tip := range tips {
		mustGit(t, dir, "cat-file", "-e", tip.Commit)
	}
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("hooks ran: %s", b)
	}
	mustGit(t, dir, "config", "--unset", "core.hooksPath")
	// The user's checkout: only what the join restored changed.
	assert.NotEqual(t, before, userState(t, dir))
	assert.Equal(t, " M f.txt\n?? b0.txt\n?? b1.txt\n", status(t, dir))
}

// status is `git status --short` but for the user's own wip.txt.
func status(t *testing.T, dir string) string {
	t.Helper()
	out := mustGit(t, dir, "status", "--porcelain", "--untracked-files=all")
	l := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var keep []string
	for _, s := range l {
		if !strings.HasSuffix(s, "wip.txt") {
			keep = append(keep, s)
		}
	}
	return strings.Join(keep, "\n") + "\n"
}

func TestBranchTreeEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"f.txt": "f\n"})
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	const runID = "r1"

	// A 10 KB label, and one with a NUL: a short directory in the run's.
	long := strings.Repeat("é", 5<<10)
	for _, label := range []string{long, "a\x00b", "..", "/etc"} {
		wt, err := repo.AddBranchTree(ctx, runID, label, base)
		require.NoError(t, err, "%q", label[:min(len(label), 10)])
		assert.Equal(t, filepath.Join(dir, ".dtree", "worktrees", runID+".b"), filepath.Dir(wt.Dir))
		assert.LessOrEqual(t, len(filepath.Base(wt.Dir)), 53)
		require.NoError(t, repo.RemoveBranchTree(ctx, wt))
	}

	// Left by a run that died: replaced.
	wt, err := repo.AddBranchTree(ctx, runID, "docs", base)
	require.NoError(t, err)
	write(t, wt.Dir, "half.txt", "half done\n")
	wt2, err := repo.AddBranchTree(ctx, runID, "docs", base)
	require.NoError(t, err)
	assert.Equal(t, wt.Dir, wt2.Dir)
	assert.NoFileExists(t, filepath.Join(wt.Dir, "half.txt"))
	// Gone by hand: removing it prunes git's record.
	require.NoError(t, os.RemoveAll(wt2.Dir))
	require.NoError(t, repo.RemoveBranchTree(ctx, wt2))
	assert.NotContains(t, mustGit(t, dir, "worktree", "list", "--porcelain"), "docs")

	// Not a branch tree: refused, nothing removed.
	keep, err := repo.AddBranchTree(ctx, runID, "keep", base)
	require.NoError(t, err)
	for _, d := range []string{dir, filepath.Join(keep.Dir, ".."), filepath.Join(keep.Dir, "..", ".."), keep.Dir + "/../..", "r1.b/keep", filepath.Join(dir, ".dtree", "worktrees", "x", "keep")} {
		err = repo.RemoveBranchTree(ctx, &Worktree{Dir: d})
		require.ErrorContains(t, err, "not the worktree of a branch", d)
	}
	assert.FileExists(t, filepath.Join(dir, "f.txt"))
	assert.FileExists(t, filepath.Join(keep.Dir, "f.txt"))
	// The run's directory made a link to elsewhere: nothing there removed.
	elsewhere := t.TempDir()
	write(t, elsewhere, "keep/mine.txt", "mine\n")
	runDir := filepath.Dir(keep.Dir)
	require.NoError(t, os.Rename(runDir, runDir+"-moved"))
	require.NoError(t, os.Symlink(elsewhere, runDir))
	require.ErrorContains(t, repo.RemoveBranchTree(ctx, keep), "a link?")
	assert.FileExists(t, filepath.Join(elsewhere, "keep", "mine.txt"))
	require.NoError(t, os.Remove(runDir))
	require.NoError(t, os.Rename(runDir+"-moved", runDir))
	require.NoError(t, repo.RemoveBranchTree(ctx, keep))

	// A bad start, a bad run id.
	_, err = repo.AddBranchTree(ctx, runID, "docs", "nope")
	require.ErrorContains(t, err, `worktree of branch "docs": "nope" is not a commit`)
	_, err = repo.AddBranchTree(ctx, "../x", "docs", base)
	require.ErrorContains(t, err, `"../x" is not a run id`)

	// The run's directory as a link elsewhere: no worktree there.
	elsewhere = t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, ".dtree", "worktrees", "r2.b")))
	_, err = repo.AddBranchTree(ctx, "r2", "docs", base)
	require.ErrorContains(t, err, "is a link")
	assert.NoDirExists(t, filepath.Join(elsewhere, "docs"))
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	return cmd
}

// Thousands of conflicted paths: every one listed with its branches, in
// time linear in them.
func TestMergeManyConflicts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 9,000 files")
	}
	ctx := context.Background()
	const n = 3000
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("d%d/f%d.txt", i%50, i)] = "base\n"
	}
	dir := gitRepo(t, files)
	base := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	branch := func(text string) string {
		mustGit(t, dir, "checkout", "-q", "--detach", base)
		for name := range files {
			write(t, dir, name, text)
		}
		mustGit(t, dir, "commit", "-q", "-a", "-m", text)
		return strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	}
	a, b := branch("a\n"), branch("b\n")
	mustGit(t, dir, "checkout", "-q", "-f", "main")
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	start := time.Now()
	m, err := repo.MergeBranches(ctx, base, []Tip{{"a", a}, {"b", b}, {"none", base}})
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("%d conflicted paths in %v", n, took)
	require.Len(t, m.Conflicts, n)
	for _, c := range m.Conflicts {
		require.Equal(t, []string{"a", "b"}, c.Branches, c.Path)
	}
	assert.Less(t, took, 20*time.Second)
}

// Pruning a run removes its branches' checkpoints too, and no other run's.
func TestPruneBranchRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	head := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	keep := []string{"r10", "r1x.docs", "r1-2", "other"}
	gone := []string{"r1", BranchRunID("r1", "docs"), BranchRunID("r1", "Unit tests")}
	for _, id := range append(keep, gone...) {
		mustGit(t, dir, "update-ref", Ref(id), head)
	}
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, repo.Prune(ctx, "r1"))
	ids, err := repo.Runs(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, keep, ids)
	// An id with what a pattern reads: no ref but its own (none).
	require.NoError(t, repo.Prune(ctx, "r*"))
	ids, err = repo.Runs(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, keep, ids)
	require.NoError(t, repo.Prune(ctx, "nothing"))
}

// A --worktree run forks too: its branches' worktrees are made from its
// own worktree, inside it, and merge there.
func TestBranchTreeOfAWorktreeRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gitRepo(t, map[string]string{"f.txt": lines(10, nil)})
	repo, err := Open(ctx, dir)
	require.NoError(t, err)
	runWT, err := repo.AddWorktree(ctx, "r1", false)
	require.NoError(t, err)
	run, err := runWT.Repo.Begin(ctx, "r1", "")
	require.NoError(t, err)
	defer run.Close()
	var tips []Tip
	for i, label := range []string{"a", "b"} {
		wt, err := runWT.Repo.AddBranchTree(ctx, "r1", label, run.Last.Commit)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(runWT.Dir, ".dtree", "worktrees", "r1.b", label), wt.Dir)
		br, err := wt.Repo.Begin(ctx, BranchRunID("r1", label), run.Last.Commit)
		require.NoError(t, err)
		write(t, wt.Dir, "f.txt", lines(10, map[int]string{1 + 8*i: label}))
		_, err = br.Checkpoint(ctx, "step")
		require.NoError(t, err)
		br.Close()
		tips = append(tips, Tip{label, br.Last.Commit})
		require.NoError(t, runWT.Repo.RemoveBranchTree(ctx, wt))
	}
	m, err := runWT.Repo.MergeBranches(ctx, run.Last.Commit, tips)
	require.NoError(t, err)
	require.True(t, m.Clean)
	_, err = run.Restore(ctx, m.Commit, "join")
	require.NoError(t, err)
	assert.Equal(t, lines(10, map[int]string{1: "a", 9: "b"}), read(t, runWT.Dir, "f.txt"))
	// The run's result has the merge, and nothing of the branches' trees.
	_, changed, err := runWT.Commit(ctx, "result")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, "f.txt\n", mustGit(t, dir, "ls-tree", "-r", "--name-only", "dtree/r1"))
	assert.Equal(t, lines(10, nil), read(t, dir, "f.txt"), "the user's checkout is untouched")
}
