//go:build unix

package runlog

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run held by one resume is refused to the next, with the holder's pid,
// until the first lets it go.
func TestLockResumeRefusesASecondResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	release, err := LockResume(dir)
	require.NoError(t, err)

	_, err = LockResume(dir)
	var busy *ResumingError
	require.ErrorAs(t, err, &busy)
	assert.Equal(t, os.Getpid(), busy.Pid)
	assert.EqualError(t, err, fmt.Sprintf("another dtree (pid %d) is resuming it", os.Getpid()))

	release()
	again, err := LockResume(dir)
	require.NoError(t, err, "a lock let go is free")
	again()
}
