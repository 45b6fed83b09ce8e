package cli

import (
	"io"
	"os"
	"slices"

	"github.com/dtree-dev/dtree/internal/ci"
	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/settings"
)

// Secrets (readme/logs.md#secrets) are masked by one Redactor per command,
// which App holds: built from the environment when the command starts, given
// the custom CLIs' env: values once the settings are read (a.settings), and
// the run's id once its log is open (a.exceptRun). Everything on stderr goes
// through it (Run wraps a.Err); stdout where a command prints what came from
// a chart or an agent (run, lint), through maskedOut.

// redactor is the masking of the secrets known so far.
func (a *App) redactor() *runlog.Redactor {
	if r := a.mask.Load(); r != nil {
		return r
	}
	r := runlog.NewRedactor(a.environ())
	if a.mask.CompareAndSwap(nil, r) {
		return r
	}
	return a.mask.Load()
}

func (a *App) environ() []string {
	if a.Environ != nil {
		return a.Environ()
	}
	return os.Environ()
}

// maskSettings adds the secrets set in the custom CLIs' env: to those of
// the environment.
func (a *App) maskSettings(s *settings.Settings) {
	env := slices.Clone(a.environ())
	for _, d := range s.CLIs {
		for k, v := range d.Env {
			env = append(env, k+"="+v)
		}
	}
	a.mask.Store(runlog.NewRedactor(env))
}

// exceptRun makes the masking leave the run's id alone, in its paths and
// its lines: r is the run log's Redactor.
func (a *App) exceptRun(r *runlog.Redactor) { a.mask.Store(r) }

// maskedWriter masks the secrets in each write. Every write dtree makes to
// stderr or stdout is whole: a line, or a JSON document (json.Encoder
// writes each Encode at once).
type maskedWriter struct {
	w    io.Writer
	a    *App
	json bool // the writes are JSON documents: mask inside strings only
	// ascii spells dtree's symbols in ASCII (→ as ->) for a locale that
	// is not UTF-8 (locale.go); never in JSON.
	ascii bool
	// commands lets a line start with a workflow command under GitHub
	// Actions: the writer of dtree's own (commandWriter). Any other
	// write there has every command made inert (ci.Neutralize).
	commands bool
}

func (m maskedWriter) Write(p []byte) (int, error) {
	var out []byte
	if m.json {
		out = m.a.redactor().JSON(p)
	} else {
		out = m.a.redactor().Bytes(p)
	}
	if m.ascii {
		out = asciiSymbols(out)
	}
	if m.a.inActions() {
		// No text an agent wrote is a command on the runner
		// (readme/ci.md#github-actions).
		out = ci.Neutralize(out, m.json, !m.commands)
	}
	if _, err := m.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// maskedFile is a maskedWriter on a file, which keeps its Fd for the
// terminal check of the live progress line.
type maskedFile struct {
	maskedWriter
	f interface{ Fd() uintptr }
}

func (m maskedFile) Fd() uintptr { return m.f.Fd() }

// masked wraps w so that its writes are masked.
func (a *App) masked(w io.Writer, json bool) io.Writer {
	switch w := w.(type) {
	case maskedWriter, maskedFile:
		return w
	case interface{ Fd() uintptr }:
		return maskedFile{maskedWriter{w: w.(io.Writer), a: a, json: json, ascii: a.ascii && !json}, w}
	}
	return maskedWriter{w: w, a: a, json: json, ascii: a.ascii && !json}
}

// commandWriter is w, masked, for the workflow commands dtree writes
// itself under GitHub Actions (groups, annotations, stop-commands), each
// write a command whose texts are escaped or stopped: its lines may start
// with "::".
func (a *App) commandWriter(w io.Writer) io.Writer {
	switch m := a.masked(w, false).(type) {
	case maskedWriter:
		m.commands = true
		return m
	case maskedFile:
		m.commands = true
		return m
	default:
		return m
	}
}

// maskedOut is stdout masked: with json, for one JSON document per write.
func (a *App) maskedOut(json bool) io.Writer { return a.masked(a.Out, json) }
