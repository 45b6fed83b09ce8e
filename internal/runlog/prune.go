package runlog

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Old runs (readme/logs.md#old-runs): keep_runs and dtree clean remove
// the directories of the oldest finished runs of a log directory.

// runIDPattern is a run id as NewRunID makes them: only such directories
// are ever removed, whatever else a log directory holds.
var runIDPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6,}$`)

// RunDir is one run's directory in a log directory.
type RunDir struct {
	ID    string
	Dir   string
	Going bool // a dtree holds it: the run goes on

	started time.Time // the time of its first event, to order runs of one second
}

// OldRuns are the runs of logDir past the newest keep (keep 0: all of
// them) that no dtree holds, oldest first: what keep_runs and dtree clean
// remove. Its runs are the directories named as run ids that hold an
// events.jsonl; no log directory has none. Only the runs past the newest
// keep are asked whether a dtree holds them, and a run's first event is
// read only to order it among runs of the same second: a log directory of
// 100 runs costs a run's start 100 stats, not 300 opens.
func OldRuns(logDir string, keep int) ([]RunDir, error) {
	past, err := PastRuns(logDir, keep)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(past, func(r RunDir) bool { return r.Going }), nil
}

// PastRuns are the runs of logDir past the newest keep, oldest first,
// each with Going set: OldRuns and those a dtree holds, which dtree clean
// names as kept.
func PastRuns(logDir string, keep int) ([]RunDir, error) {
	runs, err := listRuns(logDir)
	if err != nil {
		return nil, err
	}
	past := len(runs) - max(keep, 0)
	if past <= 0 {
		return nil, nil
	}
	runs = runs[:past]
	for i := range runs {
		runs[i].Going = Going(runs[i].Dir)
	}
	return runs, nil
}

// listRuns are the runs of logDir, oldest first, Going not yet known.
func listRuns(logDir string) ([]RunDir, error) {
	entries, err := os.ReadDir(logDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var runs []RunDir
	for _, e := range entries {
		if !e.IsDir() || !runIDPattern.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(logDir, e.Name())
		if st, err := os.Lstat(filepath.Join(dir, "events.jsonl")); err != nil || !st.Mode().IsRegular() {
			continue
		}
		runs = append(runs, RunDir{ID: e.Name(), Dir: dir})
	}
	// Run ids start with the time they started, to the second; the time
	// of the first event tells two of the same second apart, and a run
	// without one yet is just starting: the newest of its second. Only
	// runs that share their second are read for it.
	second := func(r RunDir) string { return r.ID[:16] }
	slices.SortStableFunc(runs, func(a, b RunDir) int { return strings.Compare(second(a), second(b)) })
	for i := 0; i < len(runs); {
		j := i + 1
		for j < len(runs) && second(runs[j]) == second(runs[i]) {
			j++
		}
		if j-i > 1 {
			same := runs[i:j]
			for k := range same {
				same[k].started = startedAt(same[k].Dir)
			}
			slices.SortStableFunc(same, func(a, b RunDir) int {
				switch {
				case a.started.IsZero() && b.started.IsZero():
					return 0
				case a.started.IsZero():
					return 1
				case b.started.IsZero():
					return -1
				}
				return a.started.Compare(b.started)
			})
		}
		i = j
	}
	return runs, nil
}

// startedAt is the time of the run's first event, zero when it cannot be
// read.
func startedAt(dir string) time.Time {
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	var b [64]byte
	n, _ := io.ReadFull(f, b[:])
	line := string(b[:n])
	rest, ok := strings.CutPrefix(line, `{"time":"`)
	if !ok {
		return time.Time{}
	}
	text, _, _ := strings.Cut(rest, `"`)
	t, _ := time.Parse(time.RFC3339Nano, text)
	return t
}

// RemoveRun removes a run's directory from its log directory, and the
// log directory's latest link when it pointed at it.
func RemoveRun(r RunDir) error {
	if err := os.RemoveAll(r.Dir); err != nil {
		return err
	}
	latest := filepath.Join(filepath.Dir(r.Dir), Latest)
	if target, err := os.Readlink(latest); err == nil && target == r.ID {
		_ = os.Remove(latest)
	}
	return nil
}
