package agent

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What an in-process agent prints reaches the output and the result as a
// text CLI's would: stderr after its marker, tails bounded, the answer
// trimmed and without escapes.
func TestInProcessResult(t *testing.T) {
	t.Parallel()
	argv := []string{"dtree (replay)", "--answers", "a.yaml"}
	tests := []struct {
		name           string
		stdout, stderr string
		exit           int
		output, answer string
		stderrTail     string
	}{
		{name: "stdout", stdout: "{\"completed\": true}\n", output: "{\"completed\": true}\n", answer: `{"completed": true}`},
		{name: "escapes and spaces", stdout: "  \x1b[1mYes\x1b[0m \n", output: "  \x1b[1mYes\x1b[0m \n", answer: "Yes"},
		{name: "stderr", stderr: "rate limited\n", exit: 1, output: "----- stderr -----\nrate limited\n", stderrTail: "rate limited\n"},
		{name: "both", stdout: "half", stderr: "then failed\n", exit: 1, output: "half\n----- stderr -----\nthen failed\n", answer: "half", stderrTail: "then failed\n"},
		{name: "nothing", output: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			res := InProcessResult(Call{Output: &out}, argv, tt.stdout, tt.stderr, tt.exit)
			assert.Equal(t, tt.output, out.String())
			assert.Equal(t, tt.answer, res.Answer)
			assert.Equal(t, tt.stderrTail, res.StderrTail)
			assert.Equal(t, tt.exit, res.ExitCode)
			assert.Equal(t, argv, res.Argv)
			assert.Equal(t, int64(len(tt.stdout)), res.StdoutBytes)
			assert.Equal(t, int64(len(tt.stderr)), res.StderrBytes)
			assert.NoError(t, res.OutputError)
		})
	}

	// No output to write to is no error; a huge stderr is kept to its tail.
	res := InProcessResult(Call{}, argv, "", strings.Repeat("e", 10*MaxStderrTail), 1)
	assert.Len(t, res.StderrTail, MaxStderrTail)
	assert.Equal(t, int64(10*MaxStderrTail), res.StderrBytes)
	assert.NoError(t, res.OutputError)
}

// The replay agent is a built-in with no program: nothing to look up,
// Run refuses it, a dry run shows it as dtree, dtree clis as reading no
// prompt.
func TestInProcessBuiltin(t *testing.T) {
	t.Parallel()
	def, err := NewRegistry(nil).Lookup("Replay")
	require.NoError(t, err)
	assert.True(t, def.InProcess)
	assert.Empty(t, def.Binary)

	_, err = Run(t.Context(), Call{Def: def, Prompt: "p"})
	require.Error(t, err)
	assert.Equal(t, "CLI replay is answered inside dtree, not by a program: replay is built into dtree; pass --answers FILE", err.Error())

	argv, onStdin, err := Preview(def, "p", "", 0, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"dtree (replay)"}, argv)
	assert.False(t, onStdin)

	tr := TraitsOf(Entry{Def: def, Builtin: true}, func(string) string { return "" })
	assert.Equal(t, "none", tr.Prompt)
	assert.Equal(t, "none", tr.Long)
	assert.Empty(t, tr.Usage)
	assert.Empty(t, tr.ModelFlag)
}
