package conformance

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scan for processes left behind finds a process by its HOME, and
// only it: without this the timeout checks could not fail.
func TestProcsOfFindsAProcessByItsHome(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	home := t.TempDir()
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Until it has exec'd, the child's /proc shows the test's own
	// environment and command line: wait for sleep's.
	assert.Eventually(t, func() bool { return len(procsOf(home)) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Empty(t, procsOf(home+"x"), "a HOME is matched whole")
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	assert.Empty(t, procsOf(home))

	// A process that does not carry the HOME is found by a path under it
	// in its command line.
	other := exec.Command("sleep", "30")
	other.Args[0] = home + "/sleep" // its argv[0], so its cmdline
	other.Env = []string{"PATH=" + os.Getenv("PATH")}
	require.NoError(t, other.Start())
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	assert.Eventually(t, func() bool { return len(procsOf(home)) == 1 }, 5*time.Second, 5*time.Millisecond)
}
