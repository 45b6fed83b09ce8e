package types

// Change is what a step did to the working tree, between two checkpoints
// of the workspace (readme/workspace.md): From is the checkpoint before
// it, To the one after, both commit ids on the run's private ref. Files
// counts the paths that differ; Added and Removed their lines (a binary
// file counts as a file with no lines). Paths are the first MaxChangePaths
// of them, in git's order; PathsLeftOut counts the rest.
type Change struct {
	Added        int          `json:"added"`
	Files        int          `json:"files"`
	From         string       `json:"from"`
	Paths        []PathChange `json:"paths"`
	PathsLeftOut int          `json:"paths_left_out,omitempty"`
	Removed      int          `json:"removed"`
	To           string       `json:"to"`
}

// PathChange is one file of a Change. Status is git's letter: A added,
// D deleted, M modified, T type changed (a file became a link).
type PathChange struct {
	Added   int    `json:"added"`
	Binary  bool   `json:"binary,omitempty"`
	Path    string `json:"path"`
	Removed int    `json:"removed"`
	Status  string `json:"status"`
}

// PathStatus is a path and the status letter of its change (A, D, M,
// T), without line counts: a change undone outside a step's scope
// (runlog.OutOfScope), whose lines the attempt's change counts.
type PathStatus struct {
	Path   string `json:"path"`
	Status string `json:"status"`
}

// MaxChangePaths bounds the paths a Change lists: a step that rewrote a
// vendored tree of 100,000 files is counted whole, listed in part.
const MaxChangePaths = 100

// Empty reports whether the change changed nothing.
func (c *Change) Empty() bool { return c == nil || c.Files == 0 }
