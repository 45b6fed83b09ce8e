package cli

import (
	"bytes"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInterruptSignals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		sigs  []os.Signal
		doing func() string // nil: not a run
		want  string
	}{
		{name: "a run: the first says what it stops", sigs: []os.Signal{os.Interrupt}, doing: func() string { return `node 2 "Fix it"` },
			want: "dtree: interrupted (SIGINT): stopping node 2 \"Fix it\"; press Ctrl-C again to kill it at once\n"},
		{name: "between nodes", sigs: []os.Signal{syscall.SIGHUP}, doing: func() string { return "" },
			want: "dtree: interrupted (SIGHUP): stopping the run; signal again to kill it at once\n"},
		{name: "the second kills", sigs: []os.Signal{syscall.SIGTERM, os.Interrupt}, doing: func() string { return "node 3 \"x\"" },
			want: "dtree: interrupted (SIGTERM): stopping node 3 \"x\"; signal again to kill it at once\n" +
				"dtree: interrupted again (SIGINT): killing every process of the run now\n"},
		{name: "not a run: Run says it", sigs: []os.Signal{os.Interrupt, os.Interrupt}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			cancels := 0
			in := &interrupts{err: &out, cancel: func() { cancels++ }}
			in.setDoing(tt.doing, nil)
			for _, s := range tt.sigs {
				in.signal(s)
			}
			assert.Equal(t, 1, cancels, "the first signal ends the context, once")
			assert.Equal(t, tt.want, out.String())
		})
	}
}
