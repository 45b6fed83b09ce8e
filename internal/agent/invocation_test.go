//go:build unix

package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A dtree killed during a call leaves its prompt file in the workdir; the
// next start removes the files of dtrees that no longer run, and only
// those.
func TestRemoveStalePromptFiles(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	dir := t.TempDir()
	files := map[string]bool{ // name -> removed
		fmt.Sprintf(".dtree-prompt-%d-1.txt", dead.Process.Pid): true,  // its dtree is gone
		fmt.Sprintf(".dtree-prompt-%d-2.txt", os.Getppid()):     false, // its dtree runs
		fmt.Sprintf(".dtree-prompt-%d-3.txt", os.Getpid()):      true,  // this one has written none yet
		".dtree-prompt-123456.txt":                              true,  // an older dtree's name, no pid
		".dtree-prompt-notes.md":                                false, // not a prompt file
		"dtree-prompt-1-4.txt":                                  false, // not hidden: not the workdir's kind
	}
	for name := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("p"), 0o600))
	}
	removed := RemoveStalePromptFiles(dir)
	for name, gone := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		assert.Equal(t, gone, os.IsNotExist(err), name)
		assert.Equal(t, gone, slices.Contains(removed, name), name)
	}
}

// fillArg is a strings.Replacer of {prompt}, {prompt_file} and {model}, in
// one pass: what it puts in is never replaced again.
func TestFillArg(t *testing.T) {
	t.Parallel()
	prompt, file, model := "say {model} and {prompt_file} {", "/tmp/p.txt", "m{prompt}"
	want := strings.NewReplacer("{prompt}", prompt, "{prompt_file}", file, "{model}", model)
	for _, arg := range []string{
		"", "-p", "{prompt}", "--model={model}", "{prompt_file}", "@{prompt_file}x", "{{prompt}}", "{prompt",
		"{model}{prompt}{prompt_file}{", "{}{ {prompt_fil {prompt}_file}", "é{model}é", "}{",
	} {
		assert.Equal(t, want.Replace(arg), fillArg(arg, prompt, file, model), "argument %q", arg)
	}
}
