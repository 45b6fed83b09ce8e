package testchart

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// BuildTools builds dtree, the fake agent (internal/testagent) and the
// lean agent (internal/testchart/leanagent, as "claude") into dir/bin for
// the benchmark tools, run from the repository's root, and returns that
// directory.
func BuildTools(dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	for _, b := range [][2]string{{"dtree", "./cmd/dtree"}, {"fakeagent", "./internal/testagent/fakeagent"}, {"claude", "./internal/testchart/leanagent"}} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, b[0]), b[1]).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("build %s: %v\n%s", b[0], err, out)
		}
	}
	return bin, nil
}
