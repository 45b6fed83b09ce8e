package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ApplyError is a patch of Apply's that git apply refused: Index is its
// place in the list, Git what git said.
type ApplyError struct {
	Index int
	Git   error
}

func (e *ApplyError) Error() string { return e.Git.Error() }
func (e *ApplyError) Unwrap() error { return e.Git }

// Apply applies patch files (git diff --binary, paths from the
// repository's top) to the work tree, in order, each on what the ones
// before it made (dtree join: readme/ci.md#branches-on-separate-machines).
// All or none: when one does not apply, those applied before it are
// taken back, and the error is an *ApplyError naming it. The index is
// not touched.
func (r *Repo) Apply(ctx context.Context, patches []string) error {
	var applied []string
	for i, p := range patches {
		if st, err := os.Stat(p); err == nil && st.Size() == 0 {
			continue // nothing changed: git apply takes no empty patch
		}
		if err := r.git(ctx, "", nil, nil, nil, "apply", "--whitespace=nowarn", "--", p); err != nil {
			for k := len(applied) - 1; k >= 0; k-- {
				if rerr := r.git(context.WithoutCancel(ctx), "", nil, nil, nil, "apply", "-R", "--whitespace=nowarn", "--", applied[k]); rerr != nil {
					return fmt.Errorf("%w; and taking back %s failed: %v", &ApplyError{Index: i, Git: err}, applied[k], rerr)
				}
			}
			return &ApplyError{Index: i, Git: err}
		}
		applied = append(applied, p)
	}
	return nil
}

// ApplyCommit applies patch (git diff --binary) onto commit parent's tree,
// in an index of its own, and returns the commit of the result, on
// parent; the work tree and the user's index are not touched. An empty
// patch is parent itself. A patch that does not apply is an *ApplyError
// (Index 0). dtree join makes the fork's tree and each branch's of the
// patches of runs on other machines with it, so that the branches merge
// three-way as a fork's in one run (readme/ci.md).
func (r *Repo) ApplyCommit(ctx context.Context, parent, patch, msg string) (string, error) {
	if st, err := os.Stat(patch); err != nil {
		return "", err
	} else if st.Size() == 0 {
		return parent, nil
	}
	dir := filepath.Join(r.GitDir, "dtree")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "apply-*.index")
	if err != nil {
		return "", err
	}
	index := f.Name()
	f.Close()
	os.Remove(index) // git read-tree writes it anew; an empty file is no index
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	read := []string{"read-tree", parent}
	if parent == "" {
		read = []string{"read-tree", "--empty"}
	}
	if err := r.git(ctx, "", env, nil, nil, read...); err != nil {
		return "", err
	}
	if err := r.git(ctx, "", env, nil, nil, "apply", "--cached", "--whitespace=nowarn", "--", patch); err != nil {
		return "", &ApplyError{Git: err}
	}
	tree, err := r.output(ctx, "", env, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree), "-m", msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	commit, err := r.output(ctx, "", nil, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(commit), nil
}
