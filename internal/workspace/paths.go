package workspace

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dtree-dev/dtree/types"
)

// PathEntry is one path that differs between two commits: its status
// letter (A, D, M, T) and its mode and object in the first, the zero
// object for a path the first does not have.
type PathEntry struct {
	Path    string
	Status  string
	OldMode string
	OldID   string
}

// EachChange calls fn with every path that differs between two commits,
// in git's order, as git lists them: all of them, streamed, so memory
// stays bounded at any size of change. fn's error stops it and is
// returned.
func (r *Repo) EachChange(ctx context.Context, from, to string, fn func(PathEntry) error) error {
	if from == to {
		return nil
	}
	err := r.stream(ctx, func(rd io.Reader) error { return readRaw(rd, fn) },
		"diff-tree", "-r", "-z", "--no-renames", "--raw", "--no-textconv", "--no-ext-diff", from, to)
	if err != nil {
		return fmt.Errorf("what changed: %w", err)
	}
	return nil
}

// readRaw reads diff-tree's -z --raw records, ":oldmode newmode oldid
// newid STATUS" NUL path NUL.
func readRaw(r io.Reader, fn func(PathEntry) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		tok, err := br.ReadString(0)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fields := strings.Fields(strings.TrimSuffix(tok, "\x00"))
		if len(fields) != 5 || !strings.HasPrefix(fields[0], ":") {
			return fmt.Errorf("diff-tree: an unexpected record %q", types.Excerpt(tok, 80))
		}
		p, err := br.ReadString(0)
		if err != nil {
			return fmt.Errorf("diff-tree: a record without its path")
		}
		e := PathEntry{Path: strings.TrimSuffix(p, "\x00"), Status: fields[4],
			OldMode: strings.TrimPrefix(fields[0], ":"), OldID: fields[2]}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// Undone is what RestorePaths put back: how many paths, the first
// types.MaxChangePaths of them with the status letter of the change it
// undid, and the checkpoint taken before, which still has the change.
type Undone struct {
	Files  int
	Paths  []types.PathStatus
	Before Checkpoint
}

// RestorePaths puts back, as the checkpoint from says, each path that
// changed since it and that undo selects, and leaves every other path as
// it is: a step's change outside its paths (readme/workspace.md#scope).
// Like Restore, it checkpoints the tree first, moves it in one read-tree
// through dtree's index (or puts it back as it was when that fails part
// way), and records the result as the newest checkpoint. The paths are
// streamed from git to a file and back, never held: any number of them
// takes bounded memory.
func (run *Run) RestorePaths(ctx context.Context, from string, undo func(path string) bool, msg string) (Undone, error) {
	var u Undone
	if _, err := run.Checkpoint(ctx, "before "+msg); err != nil {
		return u, err
	}
	u.Before = run.Last
	dir := filepath.Dir(run.index)
	list, err := os.CreateTemp(dir, run.ID+".paths-*")
	if err != nil {
		return u, fmt.Errorf("restore paths: %w", err)
	}
	defer os.Remove(list.Name())
	defer list.Close()
	bw := bufio.NewWriterSize(list, 64<<10)
	err = run.Repo.EachChange(ctx, from, u.Before.Commit, func(e PathEntry) error {
		if !undo(e.Path) {
			return nil
		}
		u.Files++
		if len(u.Paths) < types.MaxChangePaths {
			u.Paths = append(u.Paths, types.PathStatus{Path: e.Path, Status: e.Status})
		}
		// update-index --index-info: "mode SP object TAB path"; a mode
		// of 0 removes the path (one the checkpoint did not have).
		mode := e.OldMode
		if strings.Trim(e.OldID, "0") == "" {
			mode = "0"
		}
		_, werr := fmt.Fprintf(bw, "%s %s\t%s\x00", mode, e.OldID, e.Path)
		return werr
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil || u.Files == 0 {
		return u, err
	}
	if _, err := list.Seek(0, io.SeekStart); err != nil {
		return u, fmt.Errorf("restore paths: %w", err)
	}
	// The tree to move to: the newest checkpoint's, with those paths as
	// from has them, built in an index of its own so dtree's stays as
	// the working tree is (read-tree -m -u checks the files against it).
	idx := filepath.Join(dir, run.ID+".paths.index")
	defer os.Remove(idx)
	env := []string{"GIT_INDEX_FILE=" + idx}
	if err := run.Repo.git(ctx, "", env, nil, nil, "read-tree", u.Before.Tree); err != nil {
		return u, fmt.Errorf("restore paths: %w", err)
	}
	if err := run.Repo.git(ctx, "", env, list, nil, "update-index", "-z", "--index-info"); err != nil {
		return u, fmt.Errorf("restore paths: %w", err)
	}
	tree, err := run.Repo.output(ctx, "", env, "write-tree")
	if err != nil {
		return u, fmt.Errorf("restore paths: %w", err)
	}
	_, err = run.Restore(ctx, strings.TrimSpace(tree), msg)
	return u, err
}
