package checkpoints

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dtree-dev/dtree/internal/workspace"
	"github.com/dtree-dev/dtree/types"
)

// UndoFile is the undo log in a run's directory: one line per undo of the
// run's changes (readme/workspace.md#undo).
const UndoFile = "undo.jsonl"

// Undone is one line of the undo log: the tree was put back as checkpoint
// To says (What: "before the run", "before node 4 (visit 2)", "before
// the last undo"), and the tree it replaced is checkpoint Replaced, on
// the run's ref, which dtree undo --redo puts back.
type Undone struct {
	Replaced string    `json:"replaced"`
	Time     time.Time `json:"time"`
	To       string    `json:"to"`
	What     string    `json:"what"`
}

// LastUndo is the newest line of the run's undo log; ok is false when
// there is none. Lines that cannot be read are passed over.
func LastUndo(dir string) (last Undone, ok bool, err error) {
	f, err := os.Open(filepath.Join(dir, UndoFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Undone{}, false, nil
	}
	if err != nil {
		return Undone{}, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		var u Undone
		if json.Unmarshal(sc.Bytes(), &u) == nil && workspace.IsCommitID(u.To) && workspace.IsCommitID(u.Replaced) {
			last, ok = u, true
		}
	}
	return last, ok, sc.Err()
}

// appendUndo adds a line to the run's undo log.
func appendUndo(dir string, u Undone) error {
	b, err := json.Marshal(u)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, UndoFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// UndoOptions say what dtree undo puts back.
type UndoOptions struct {
	// To is a visit (NODE or NODE@VISIT): the tree before it. "" is the
	// tree before the run.
	To string
	// Known says whether a node is one of the run's chart's (Find).
	Known func(string) bool
	// Redo puts back the tree the last undo replaced.
	Redo bool
	// Force replaces a tree that changed since the run ended (or since
	// the last undo).
	Force bool
	// LogDir is the run's log directory's parent, which no checkpoint
	// records (as the run did not).
	LogDir string
}

// Undid is what an undo did.
type Undid struct {
	What     string       // what the tree is as now: "before the run", …
	To       string       // the checkpoint the tree was put back to
	Replaced string       // the checkpoint of the tree it replaced
	Change   types.Change // from Replaced to To
	Already  bool         // the tree was that already: nothing was done
}

// ChangedError is a working tree that changed since the run ended (or
// since its last undo): undo refuses to replace it without --force.
type ChangedError struct {
	RunID  string
	Since  string // "the run ended", "the last undo"
	Change types.Change
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("the working tree changed since %s: %s", e.Since, ChangeList(e.Change, 10))
}

// ChangeList names a change's files, at most max of them, with git's
// status letters.
func ChangeList(c types.Change, max int) string {
	s := types.Plural(c.Files, "file") + ": "
	for i, p := range c.Paths {
		if i == max {
			break
		}
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q (%s)", p.Path, p.Status)
	}
	if more := c.Files - min(len(c.Paths), max); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// Undo puts the working tree back as the run's checkpoints say
// (UndoOptions), on the run's ref: it refuses a tree that changed since
// the run ended unless o.Force, checkpoints the tree it replaces first
// (workspace.Run.Restore), and adds a line to the run's undo log, whose
// Replaced --redo puts back. dir is the run's log directory. The caller
// makes sure the run is not going.
func Undo(ctx context.Context, repo *workspace.Repo, rec *Record, dir string, o UndoOptions) (*Undid, error) {
	last, undone, err := LastUndo(dir)
	if err != nil {
		return nil, err
	}
	to, what := rec.Before, "before the run"
	switch {
	case o.Redo && !undone:
		return nil, &Error{Msg: fmt.Sprintf("run %s has no undo to take back", rec.RunID),
			Hint: "dtree undo --redo puts back the tree the last dtree undo of the run replaced; this run was never undone"}
	case o.Redo:
		to, what = last.Replaced, "before the last undo"
	case o.To != "":
		v, err := rec.Find(o.To, o.Known)
		if err != nil {
			return nil, err
		}
		if v.Branch != "" {
			return nil, &Error{Msg: fmt.Sprintf("node %s's visit %d in run %s ran on fork branch %s, in a worktree of its own: the tree before it has none of the other branches' changes", v.Node, v.Visit, rec.RunID, v.Branch),
				Hint: fmt.Sprintf("undo to before the fork that started the branch (--to FORK), or the whole run; dtree diff %s %s shows what the step changed", rec.RunID, v.Node)}
		}
		to, what = v.From, fmt.Sprintf("before node %s (visit %d)", v.Node, v.Visit)
	}
	expect, since := rec.Last, "run "+rec.RunID+" ended"
	if undone {
		expect, since = last.To, "the last undo of run "+rec.RunID
	}
	if err := hasCheckpoint(ctx, repo, rec, to); err != nil {
		return nil, err
	}
	run, err := repo.Reopen(ctx, rec.RunID, o.LogDir)
	if err != nil {
		return nil, err
	}
	defer run.Close()
	now, err := run.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if !o.Force {
		if err := hasCheckpoint(ctx, repo, rec, expect); err != nil {
			return nil, err
		}
		expectTree, err := repo.Tree(ctx, expect)
		if err != nil {
			return nil, err
		}
		if now.Tree != expectTree {
			c, err := repo.Changes(ctx, expect, now.Commit)
			if err != nil {
				return nil, err
			}
			return nil, &ChangedError{RunID: rec.RunID, Since: since, Change: c}
		}
	}
	toTree, err := repo.Tree(ctx, to)
	if err != nil {
		return nil, err
	}
	if now.Tree == toTree {
		return &Undid{What: what, To: to, Replaced: now.Commit, Already: true}, nil
	}
	// Restore's first checkpoint is the tree it replaces.
	before, err := run.Restore(ctx, to, "undo: "+what)
	if err != nil {
		return nil, err
	}
	replaced := before.To
	u := &Undid{What: what, To: to, Replaced: replaced}
	if err := appendUndo(dir, Undone{Replaced: replaced, Time: time.Now().UTC(), To: to, What: what}); err != nil {
		return u, fmt.Errorf("the tree is as it was %s, but the undo could not be recorded in %s (%w): the tree it replaced is checkpoint %s; git restore --source=%s --worktree -- :/ puts its files back",
			what, filepath.Join(dir, UndoFile), err, replaced, replaced)
	}
	// What it changed is for the message only: the undo is done and
	// recorded whatever this says.
	u.Change, _ = repo.Changes(ctx, replaced, run.Last.Commit)
	return u, nil
}

// hasCheckpoint says when a checkpoint the log names is not in the
// repository.
func hasCheckpoint(ctx context.Context, repo *workspace.Repo, rec *Record, commit string) error {
	ok, err := repo.HasCommit(ctx, commit)
	if err != nil {
		return err
	}
	if !ok {
		return &Error{Msg: fmt.Sprintf("checkpoint %s of run %s is not in the repository %s", commit, rec.RunID, repo.Root),
			Hint: "its ref " + rec.Ref + " was removed (dtree clean, git update-ref -d) and git gc pruned its commits, or the log is another repository's"}
	}
	return nil
}
