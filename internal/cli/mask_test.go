package cli

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Under GitHub Actions every write to stderr or stdout has the runner's
// command markers broken (ci.Neutralize); only the writer of dtree's own
// commands may start a line with "::". Elsewhere nothing changes.
func TestMaskedWriterMakesCommandsInert(t *testing.T) {
	t.Parallel()
	for _, actions := range []string{"true", ""} {
		var out bytes.Buffer
		a := &App{Getenv: func(k string) string {
			if k == "GITHUB_ACTIONS" {
				return actions
			}
			return ""
		}, Environ: func() []string { return nil }}
		w := a.masked(&out, false)
		fmt.Fprint(w, "dtree: error: FAIL ##[error]x\n::warning::y\n")
		fmt.Fprint(a.commandWriter(w), "::error file=c.csv::z ##[add-mask]s\n")
		fmt.Fprint(a.masked(&out, true), `{"e": "##[error]x"}`+"\n")
		if actions == "" {
			assert.Equal(t, "dtree: error: FAIL ##[error]x\n::warning::y\n::error file=c.csv::z ##[add-mask]s\n{\"e\": \"##[error]x\"}\n", out.String())
			continue
		}
		assert.Equal(t, "dtree: error: FAIL ## [error]x\n: :warning::y\n::error file=c.csv::z ## [add-mask]s\n{\"e\": \"##\\u005berror]x\"}\n", out.String())
	}
}
