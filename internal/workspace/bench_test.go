package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// benchFiles is how many files the benchmarks' repository has: the
// issue's "a repository of 10,000 files".
const benchFiles = 10000

// bench is the benchmarks' repository, made once for all of them (and
// every b.N they are run with), removed by TestMain.
var bench struct {
	once sync.Once
	dir  string
	err  error
}

// benchRepo is a repository of benchFiles small committed files in 100
// directories, with the user's index up to date (git status run once, as
// a user's would be): made the first time, shared after.
func benchRepo(b *testing.B) string {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("needs git")
	}
	bench.once.Do(func() { bench.dir, bench.err = makeBenchRepo() })
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.dir
}

func makeBenchRepo() (string, error) {
	dir, err := os.MkdirTemp("", "dtree-bench-workspace-")
	if err != nil {
		return "", err
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "gc.auto=0"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w: %s", args, err, out)
		}
		return nil
	}
	if err := git("init", "-q", "-b", "main"); err != nil {
		return dir, err
	}
	for i := range benchFiles {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("file%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return dir, err
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "package d\n\n// file %d\nvar x%d = %d\n", i, i, i), 0o644); err != nil {
			return dir, err
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "10k files"}, {"status", "--porcelain"}} {
		if err := git(args...); err != nil {
			return dir, err
		}
	}
	return dir, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

// BenchmarkCheckpoint is a checkpoint after a step that changed a few
// files (three edited) in a repository of 10,000: what each node_end
// costs. Target: well under 100 ms (readme/performance.md).
func BenchmarkCheckpoint(b *testing.B) {
	dir := benchRepo(b)
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	run, err := repo.Begin(ctx, "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for k := range 3 {
			p := filepath.Join(dir, fmt.Sprintf("d%02d", k), fmt.Sprintf("file%05d.go", k))
			if err := os.WriteFile(p, []byte("package d\n// step "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		c, err := run.Checkpoint(ctx, "step")
		if err != nil {
			b.Fatal(err)
		}
		if c.Files != 3 && i > 0 {
			b.Fatalf("change of %d files, want 3", c.Files)
		}
	}
}

// BenchmarkBegin is the first checkpoint of a run, of the tree before it,
// in a repository of 10,000 files with a few uncommitted edits.
func BenchmarkBegin(b *testing.B) {
	dir := benchRepo(b)
	ctx := context.Background()
	for k := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", k), fmt.Sprintf("file%05d.go", k))
		if err := os.WriteFile(p, []byte("package d\n// uncommitted\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	repo, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		id := "bench-" + strconv.Itoa(i)
		run, err := repo.Begin(ctx, id, "")
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		run.Close()
		if err := repo.Prune(ctx, id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkCheckpointUnchanged is a checkpoint after a step that changed
// nothing (a decision, a validation) in a repository of 10,000 files.
func BenchmarkCheckpointUnchanged(b *testing.B) {
	dir := benchRepo(b)
	ctx := context.Background()
	repo, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	run, err := repo.Begin(ctx, "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	b.ResetTimer()
	for range b.N {
		c, err := run.Checkpoint(ctx, "step")
		if err != nil {
			b.Fatal(err)
		}
		if c.Files != 0 {
			b.Fatalf("change of %d files, want none", c.Files)
		}
	}
}
