package workspace

import (
	"context"
	"fmt"
	"os"
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
