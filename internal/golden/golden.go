// Package golden compares test output with files under testdata, and
// rewrites them when tests run with -update. It is the one place the -update
// flag is defined.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files and testscript expectations with the current output")

// Update reports whether the tests were asked to rewrite golden files.
func Update() bool { return *update }

// Assert compares got with the golden file at path, or writes it with
// -update.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test with -update to create it")
	assert.Equal(t, string(want), string(got), "output differs from %s (go test -update rewrites it)", path)
}
