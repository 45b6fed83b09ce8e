package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every `dtree run` README.md shows, copied as it stands into a fresh
// clone, must keep the agents and command steps out of dtree's own
// checkout: it runs in another directory (--workdir), or starts nothing
// that touches files (--dry-run, the replay agent's --answers). The front
// page once ran build-green.csv in the clone, where its step 1 was
// dtree's own `make test` and claude then edited dtree's code.
func TestReadmeRunsStayOutOfTheClone(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	run := regexp.MustCompile(`(?m)^(?:\$ )?(?:dtree|go run \./cmd/dtree) run (.*)$`)
	found := run.FindAllStringSubmatch(string(b), -1)
	require.NotEmpty(t, found, "README.md shows no dtree run")
	for _, m := range found {
		args := strings.Fields(m[1])
		safe := false
		for _, a := range args {
			switch {
			case a == "--workdir", strings.HasPrefix(a, "--workdir="), a == "--dry-run", a == "--answers", strings.HasPrefix(a, "--answers="):
				safe = true
			}
		}
		assert.True(t, safe, "README.md: %q runs in the clone: give it --workdir (testdata/quickstart/module)", m[0])
	}
}
