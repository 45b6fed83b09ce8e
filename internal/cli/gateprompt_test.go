package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/run"
)

func TestGatePromptAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, typed           string
		answer, reason, shown string
	}{
		{"approve, no reason", "a\n\n", run.Approve, "", "reason (optional, Enter for none): "},
		{"approve with a reason", "yes\nlooks good\n", run.Approve, "looks good", ""},
		{"reject asks a reason until one comes", "r\n\n  \nno changelog\n", run.Reject, "no changelog", "reason (required): reason (required): reason (required): "},
		{"a label's words", "Rejected.\nwhy\n", run.Reject, "why", ""},
		{"anything else is asked again", "maybe\n\nn\nwhy\n", run.Reject, "why", "[a/r] approve or reject? [a/r] approve or reject? [a/r] "},
		{"the end of stdin: no answer", "", "", "", ""},
		{"the end of stdin at the reason: no answer", "r\n", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			g := &gatePrompt{p: newProgress(&out, false, false, false), in: strings.NewReader(tc.typed)}
			answer, reason, err := g.ask(context.Background(), run.Gate{Node: "gate", Text: "Ship?"})
			require.NoError(t, err)
			assert.Equal(t, tc.answer, answer)
			assert.Equal(t, tc.reason, reason)
			assert.Contains(t, out.String(), "⏸ gate waits for your approval:\n  Ship?\n")
			assert.Contains(t, out.String(), tc.shown)
		})
	}
}

func TestGatePromptTimeoutAndInterrupt(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	var out bytes.Buffer
	g := &gatePrompt{p: newProgress(&out, false, false, false), in: r}
	answer, reason, err := g.ask(context.Background(), run.Gate{Node: "gate", Text: "Ship?", Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, run.Reject, answer)
	assert.Equal(t, "no answer in 50ms", reason)
	assert.Contains(t, out.String(), "no answer in 50ms: rejected\n")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = g.ask(ctx, run.Gate{Node: "gate", Text: "Ship?"})
	assert.ErrorIs(t, err, context.Canceled)
}

// The gate's text and the run so far reach the terminal inert.
func TestGatePromptInert(t *testing.T) {
	var out bytes.Buffer
	g := &gatePrompt{p: newProgress(&out, false, false, false), in: strings.NewReader("a\n\n")}
	_, _, err := g.ask(context.Background(), run.Gate{Node: "gate", Text: "Ship \x1b]0;pwned\a it", SoFar: []string{"b \x1b[31mred: succeeded"}})
	require.NoError(t, err)
	assert.NotContains(t, out.String(), "\x1b")
	assert.NotContains(t, out.String(), "\a")
}

// A line typed between two gates answers neither: the second asks anew.
func TestGatePromptDropsTypeAhead(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	g := &gatePrompt{p: newProgress(io.Discard, false, false, false), in: r}
	go func() { _, _ = io.WriteString(w, "a\n\n") }()
	answer, _, err := g.ask(context.Background(), run.Gate{Node: "g1", Text: "One?"})
	require.NoError(t, err)
	require.Equal(t, run.Approve, answer)
	go func() { _, _ = io.WriteString(w, "r\n") }() // while an agent runs
	time.Sleep(100 * time.Millisecond)
	go func() { // typed once the question is up
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(w, "a\nfine\n")
	}()
	answer, reason, err := g.ask(context.Background(), run.Gate{Node: "g2", Text: "Two?"})
	require.NoError(t, err)
	assert.Equal(t, run.Approve, answer)
	assert.Equal(t, "fine", reason)
}
