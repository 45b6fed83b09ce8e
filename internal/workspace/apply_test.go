package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ApplyCommit makes a commit of a patch on a commit, leaving the work
// tree and the user's index as they are: dtree join's fork and branch
// trees, merged three-way after.
func TestApplyCommit(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "one\n", "b.txt": "two\n"})
	head := strings.TrimSpace(mustGit(t, dir, "rev-parse", "HEAD"))
	patch := func(name, diff string) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, []byte(diff), 0o644))
		return p
	}
	changeA := patch("a.patch", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n")
	notThere := patch("c.patch", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-nothing like it\n+x\n")
	empty := patch("empty.patch", "")
	ctx := context.Background()
	r, err := Open(ctx, dir)
	require.NoError(t, err)

	for _, tc := range []struct {
		name, patch string
		want        string // a.txt in the commit; "" for an *ApplyError
		same        bool   // the commit is HEAD itself
	}{
		{name: "applies", patch: changeA, want: "ONE\n"},
		{name: "empty patch", patch: empty, want: "one\n", same: true},
		{name: "does not apply", patch: notThere},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := r.ApplyCommit(ctx, head, tc.patch, "test")
			if tc.want == "" {
				var ae *ApplyError
				require.ErrorAs(t, err, &ae)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.same, c == head)
			assert.Equal(t, tc.want, mustGit(t, dir, "show", c+":a.txt"))
			assert.Equal(t, "two\n", mustGit(t, dir, "show", c+":b.txt"))
			if !tc.same {
				assert.Equal(t, head, strings.TrimSpace(mustGit(t, dir, "rev-parse", c+"^")))
			}
		})
	}
	// The work tree and the user's index are untouched.
	assert.Equal(t, "one\n", read(t, dir, "a.txt"))
	assert.Empty(t, mustGit(t, dir, "status", "--porcelain"))
	entries, err := os.ReadDir(filepath.Join(dir, ".git", "dtree"))
	require.NoError(t, err)
	assert.Empty(t, entries, "its index is removed")
}
