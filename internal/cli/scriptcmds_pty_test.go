//go:build linux || darwin

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() { ptyCmds["ptyrun"], ptyCmds["screen"] = cmdPtyRun, cmdScreen }

// ptyEnv are the variables a program under ptyrun gets from the script,
// besides PATH and HOME.
var ptyEnv = []string{"TMPDIR", "IS_SANDBOX", "DTREE_RETRY_BACKOFF", "DTREE_TRUST", "NO_COLOR", "LC_ALL", "LANG",
	"FAKEAGENT_SCRIPT", "FAKEAGENT_STATE", "FAKEAGENT_LOG", "FAKEAGENT_PIDS", "GORACE"}

// resizeMark is written into ptyrun's capture where the window was
// resized, for screen: NUL, the new width, NUL (a terminal's output has
// no NUL of dtree's).
const resizeMark = "\x00resize %d\x00"

// cmdPtyRun: ptyrun COLS OUT [-send AFTER TEXT]... [-resize COLS2@SECONDS] PROGRAM ARGS... —
// runs PROGRAM on a pseudo-terminal COLS columns wide as its controlling
// terminal (stdin, stdout and stderr), with TERM=xterm, and writes all it
// printed to OUT. -resize changes the window to COLS2 columns SECONDS
// after the first live line, as a user dragging it would (the kernel
// sends SIGWINCH); the capture marks the moment for screen. -send types
// TEXT (Go escapes: \n is Enter, \x03 Ctrl-C) once AFTER was printed,
// after what the -send before it waited for.
func cmdPtyRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: ptyrun COLS OUT [-send AFTER TEXT]... [-resize COLS2@SECONDS] PROGRAM ARGS...")
	}
	cols, err := strconv.Atoi(args[0])
	ts.Check(err)
	out := ts.MkAbs(args[1])
	args = args[2:]
	resizeTo, resizeAfter := 0, time.Duration(0)
	type send struct{ after, text string }
	var sends []send
	for len(args) > 3 && args[0] == "-send" {
		text, err := strconv.Unquote(`"` + args[2] + `"`)
		ts.Check(err)
		sends, args = append(sends, send{args[1], text}), args[3:]
	}
	if args[0] == "-resize" && len(args) > 2 {
		c, secs, _ := strings.Cut(args[1], "@")
		resizeTo, err = strconv.Atoi(c)
		ts.Check(err)
		s, err := strconv.ParseFloat(secs, 64)
		ts.Check(err)
		resizeAfter = time.Duration(s * float64(time.Second))
		args = args[2:]
	}
	path, err := lookPathIn(args[0], ts.Getenv("PATH"))
	ts.Check(err)
	cmd := exec.Command(path, args[1:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME"), "TERM=xterm"}
	for _, k := range ptyEnv {
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: uint16(cols)})
	ts.Check(err)
	var (
		mu  sync.Mutex
		buf bytes.Buffer
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			mu.Lock()
			buf.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return // EIO once the program and its children are gone
			}
		}
	}()
	if len(sends) > 0 {
		// Each text is typed once what it answers was printed after the
		// text before it; one not awaited in 20s is not typed.
		go func() {
			from := 0
			for _, sd := range sends {
				for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					mu.Lock()
					i := bytes.Index(buf.Bytes()[from:], []byte(sd.after))
					if i >= 0 {
						from += i + len(sd.after)
					}
					mu.Unlock()
					if i >= 0 {
						break
					}
					select {
					case <-done:
						return
					default:
					}
					if time.Now().After(deadline) {
						return
					}
				}
				if _, err := f.Write([]byte(sd.text)); err != nil {
					return
				}
			}
		}()
	}
	if resizeTo > 0 {
		// SECONDS count from the first live line: a loaded machine may
		// take a while to start dtree and its agent.
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			started := bytes.Contains(buf.Bytes(), []byte("\x1b[2K→"))
			mu.Unlock()
			if started {
				break
			}
		}
		time.Sleep(resizeAfter)
		// Marked before the resize: all dtree prints after SIGWINCH is
		// read after the mark.
		mu.Lock()
		fmt.Fprintf(&buf, resizeMark, resizeTo)
		mu.Unlock()
		ts.Check(pty.Setsize(f, &pty.Winsize{Rows: 24, Cols: uint16(resizeTo)}))
	}
	werr := cmd.Wait()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	f.Close()
	mu.Lock()
	defer mu.Unlock()
	ts.Check(os.WriteFile(out, buf.Bytes(), 0o644))
	var exit *exec.ExitError
	if werr != nil && !errors.As(werr, &exit) {
		ts.Fatalf("ptyrun: %v", werr)
	}
}

func lookPathIn(name, path string) (string, error) {
	for _, dir := range strings.Split(path, string(os.PathListSeparator)) {
		p := dir + string(os.PathSeparator) + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH", name)
}

// cmdScreen: screen FILE COLS — prints what a terminal COLS columns wide
// shows after FILE's output (from ptyrun), one row a line, trailing
// spaces and empty rows at the end dropped. It plays the output as a
// terminal that reflows its lines on a resize does (VTE, iTerm2, kitty,
// Windows Terminal): the text, CR, LF, erase line (ESC [2K), cursor up
// (ESC [nA), erase below (ESC [J); a line reaching the last column wraps.
// Any other escape sequence fails the command: the test would not see
// what it does.
func cmdScreen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: screen FILE COLS")
	}
	cols, err := strconv.Atoi(args[1])
	ts.Check(err)
	t := &vt{cols: cols, rows: [][]rune{nil}, wrapped: []bool{false}}
	in := ts.ReadFile(args[0])
	for len(in) > 0 {
		var n int
		if n, err = t.feed(in); err != nil {
			ts.Fatalf("screen: %v", err)
		}
		in = in[n:]
	}
	io.WriteString(ts.Stdout(), t.String())
}

// vt is a terminal screen of rows without a height limit.
type vt struct {
	cols    int
	rows    [][]rune
	wrapped []bool // row i continues on row i+1
	r, c    int
}

func (t *vt) feed(s string) (int, error) {
	switch {
	case strings.HasPrefix(s, "\x00resize "):
		end := strings.IndexByte(s[1:], 0) + 1
		n, err := strconv.Atoi(s[len("\x00resize "):end])
		if err != nil {
			return 0, err
		}
		t.resize(n)
		return end + 1, nil
	case s[0] == '\r':
		t.c = 0
		return 1, nil
	case s[0] == '\n':
		t.down()
		t.c = 0 // the pty's ONLCR
		return 1, nil
	case s[0] == 0x1b:
		end := strings.IndexAny(s, "ABCDJKHm")
		if len(s) < 3 || s[1] != '[' || end < 0 {
			return 0, fmt.Errorf("escape sequence %q not understood", s[:min(len(s), 8)])
		}
		arg, op := s[2:end], s[end]
		n := 1
		if arg != "" {
			var err error
			if n, err = strconv.Atoi(arg); err != nil {
				return 0, fmt.Errorf("escape sequence %q not understood", s[:end+1])
			}
		}
		switch {
		case op == 'K' && arg == "2":
			t.rows[t.r] = nil
		case op == 'A':
			t.r = max(0, t.r-n)
		case op == 'J' && arg == "":
			t.rows[t.r] = t.rows[t.r][:min(t.c, len(t.rows[t.r]))]
			t.rows, t.wrapped = t.rows[:t.r+1], t.wrapped[:t.r+1]
			t.wrapped[t.r] = false
		default:
			return 0, fmt.Errorf("escape sequence %q not understood", s[:end+1])
		}
		return end + 1, nil
	}
	r, size := utf8.DecodeRuneInString(s)
	if t.c >= t.cols {
		t.wrapped[t.r] = true
		t.down()
		t.c = 0
	}
	row := t.rows[t.r]
	for len(row) < t.c {
		row = append(row, ' ')
	}
	if t.c < len(row) {
		row[t.c] = r
	} else {
		row = append(row, r)
	}
	t.rows[t.r] = row
	t.c++
	return size, nil
}

func (t *vt) down() {
	t.r++
	if t.r == len(t.rows) {
		t.rows, t.wrapped = append(t.rows, nil), append(t.wrapped, false)
	}
}

// resize reflows the screen to n columns: each line, its wrapped rows
// joined, is wrapped again, and the cursor keeps its place in its line.
func (t *vt) resize(n int) {
	var lines [][]rune
	var curLine, curOff int
	var line []rune
	for i, row := range t.rows {
		if i == t.r {
			curLine, curOff = len(lines), len(line)+t.c
		}
		line = append(line, row...)
		if i < len(t.rows)-1 && t.wrapped[i] {
			// a wrapped row is full: pad what erase left short
			for len(line)%t.cols != 0 {
				line = append(line, ' ')
			}
			continue
		}
		lines, line = append(lines, line), nil
	}
	t.cols, t.rows, t.wrapped = n, nil, nil
	for i, l := range lines {
		start := len(t.rows)
		for len(l) > n {
			t.rows, t.wrapped = append(t.rows, l[:n]), append(t.wrapped, true)
			l = l[n:]
		}
		t.rows, t.wrapped = append(t.rows, l), append(t.wrapped, false)
		if i == curLine {
			t.r, t.c = start+curOff/n, curOff%n
			if curOff > 0 && curOff%n == 0 && curOff >= len(lines[i]) {
				t.r, t.c = t.r-1, n // pending wrap at the end of a full row
			}
		}
	}
}

func (t *vt) String() string {
	var b strings.Builder
	end := len(t.rows)
	for end > 0 && strings.TrimRight(string(t.rows[end-1]), " ") == "" {
		end--
	}
	for _, row := range t.rows[:end] {
		b.WriteString(strings.TrimRight(string(row), " ") + "\n")
	}
	return b.String()
}
