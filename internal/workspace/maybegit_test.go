package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// git is asked only where it could find a repository; where it could not,
// Open says so without starting it, as git would.
func TestMayBeInGit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if mayBeInGit(root) {
		t.Skip("the temporary directory is itself under a .git or a HEAD")
	}
	mk := func(parts ...string) string {
		p := filepath.Join(append([]string{root}, parts...)...)
		require.NoError(t, os.MkdirAll(p, 0o755))
		return p
	}
	plain := mk("plain", "deep", "er")
	repo := mk("repo", "sub")
	mk("repo", ".git")
	worktree := mk("wt", "a")
	require.NoError(t, os.WriteFile(filepath.Join(root, "wt", ".git"), []byte("gitdir: /elsewhere\n"), 0o644))
	bare := mk("bare.git", "objects")
	require.NoError(t, os.WriteFile(filepath.Join(root, "bare.git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	link := filepath.Join(root, "plain", "to-repo")
	require.NoError(t, os.Symlink(repo, link))

	tests := []struct {
		name string
		dir  string
		want bool
	}{
		{"no .git or HEAD up to /", plain, false},
		{"under a .git directory's parent", repo, true},
		{"a worktree's .git file", worktree, true},
		{"inside a repository's own directory", bare, true},
		{"a link into a repository", link, true},
		{"not there: git says what is wrong", filepath.Join(root, "gone"), true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, mayBeInGit(tt.dir), tt.name)
	}

	_, err := Open(context.Background(), plain)
	assert.ErrorIs(t, err, ErrNotGit)
}
