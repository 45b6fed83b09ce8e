package agent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// long.log gets both streams in the order they arrive, with a marker line
// wherever the stream changes, so stderr can be told from stdout.
func TestOutputMarksStreamSwitches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		writes []string // "o:" stdout, "e:" stderr
		want   string
	}{
		{"stdout only", []string{"o:a\n", "o:b\n"}, "a\nb\n"},
		{"stderr only", []string{"e:oops\n"}, "----- stderr -----\noops\n"},
		{"switch at line ends", []string{"o:a\n", "e:warn\n", "o:b\n"},
			"a\n----- stderr -----\nwarn\n----- stdout -----\nb\n"},
		{"switch mid-line", []string{"o:partial", "e:warn\n", "o:rest\n"},
			"partial\n----- stderr -----\nwarn\n----- stdout -----\nrest\n"},
		{"empty writes change nothing", []string{"o:a\n", "e:", "o:b\n"}, "a\nb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got strings.Builder
			k := &sink{out: &got}
			streams := map[string]*stream{
				"o": {sink: k, tail: tail{max: 64}, name: "stdout"},
				"e": {sink: k, tail: tail{max: 64}, name: "stderr"},
			}
			var stdout, stderr strings.Builder
			for _, w := range tt.writes {
				which, p, _ := strings.Cut(w, ":")
				n, err := streams[which].Write([]byte(p))
				assert.NoError(t, err)
				assert.Equal(t, len(p), n)
				map[string]*strings.Builder{"o": &stdout, "e": &stderr}[which].WriteString(p)
			}
			assert.Equal(t, tt.want, got.String())
			// The tails, which the answer is read from, have no markers.
			assert.Equal(t, stdout.String(), streams["o"].tail.String())
			assert.Equal(t, stderr.String(), streams["e"].tail.String())
		})
	}
}
