package runlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunIDSortsByTime(t *testing.T) {
	t.Parallel()
	early := NewRunID(time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC))
	late := NewRunID(time.Date(2026, 11, 22, 3, 4, 6, 0, time.FixedZone("x", 3600)))
	assert.Regexp(t, `^20261122T030405Z-[0-9a-f]{6}$`, early)
	assert.Regexp(t, `^20261122T020406Z-[0-9a-f]{6}$`, late, "ids are in UTC")
}

// Runs started in the same second share the timestamp, and a 24-bit suffix
// collides about once in 30 batches of 1000: the second run must draw again,
// not fail with "file exists".
func TestRunDirDrawsAgainWhenTheIDIsTaken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC)
	draws := []string{"a", "a", "a", "b"}
	next := func(time.Time) string { id := draws[0]; draws = draws[1:]; return id }

	id, err := makeRunDir(dir, "", now, next)
	require.NoError(t, err)
	assert.Equal(t, "a", id)
	id, err = makeRunDir(dir, "", now, next)
	require.NoError(t, err)
	assert.Equal(t, "b", id, "a taken id is drawn again")
	assert.Empty(t, draws)

	_, err = makeRunDir(dir, "b", now, next)
	assert.ErrorContains(t, err, "file exists", "a given id that exists is another run's")

	// Many runs opened at once in one second all get their own directory.
	seen := map[string]bool{}
	for range 2000 {
		l, err := Open(Options{Dir: dir, Now: func() time.Time { return now }})
		require.NoError(t, err)
		require.False(t, seen[l.RunID], "run id %s twice", l.RunID)
		seen[l.RunID] = true
		l.Close()
	}
}

func TestLogWritesAsItGoes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretEnv := []string{"ANTHROPIC_API_KEY=sk-ant-12345678", "GH_TOKEN=ghp_abcdefgh", "PATH=/usr/bin", "SHORT_KEY=ab"}
	l, err := Open(Options{Dir: dir, Short: true, Long: true, Redactor: NewRedactor(secretEnv)})
	require.NoError(t, err)

	// latest points at the run before anything else happens.
	target, err := os.Readlink(filepath.Join(dir, "latest"))
	require.NoError(t, err)
	assert.Equal(t, l.RunID, target)

	require.NoError(t, l.Event(NodeStart{Node: "4", CLI: "key sk-ant-12345678"}))
	require.NoError(t, l.Event(NodeEnd{Node: "4", Status: "failed"}))
	// Events wait for Flush, which the run calls before each agent call:
	// then they are on disk, and a run killed now keeps them.
	assert.Empty(t, readLines(t, filepath.Join(l.Dir, "events.jsonl")))
	require.NoError(t, l.Flush())
	lines := readLines(t, filepath.Join(l.Dir, "events.jsonl"))
	require.Len(t, lines, 2)
	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ev))
	assert.Equal(t, "node_start", ev["event"])
	assert.Equal(t, "key ***", ev["cli"])

	// short.json's parts come masked by the run, each entry once as it
	// is encoded; the log's Redactor masks inside JSON strings only.
	require.NoError(t, l.ShortJSON([]byte(`{"status": "running", `), l.Redactor().JSON([]byte(`"token": "ghp_abcdefgh"}`))))
	short, err := os.ReadFile(filepath.Join(l.Dir, "short.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"status": "running", "token": "***"}`, string(short))

	// A secret split across two writes of agent output is still caught.
	w := l.Call("4", "claude", 1, "run")
	_, _ = w.Write([]byte("token: ghp_abc"))
	_, _ = w.Write([]byte("defgh and PATH=/usr/bin, SHORT_KEY=ab\n"))
	require.NoError(t, w.Close())
	require.NoError(t, l.Close())
	long, err := os.ReadFile(filepath.Join(l.Dir, "long.log"))
	require.NoError(t, err)
	assert.Contains(t, string(long), "node 4 · run · attempt 1 · claude")
	assert.Contains(t, string(long), "token: *** and PATH=/usr/bin, SHORT_KEY=ab\n")
	assert.NotContains(t, string(long), "ghp_")

	// A second run moves latest.
	l2, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	defer l2.Close()
	target, err = os.Readlink(filepath.Join(dir, "latest"))
	require.NoError(t, err)
	assert.Equal(t, l2.RunID, target)
	_, err = os.Stat(filepath.Join(l2.Dir, "long.log"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no long.log when long logs are off")
}

func TestStreamRedactorKeepsEverythingElse(t *testing.T) {
	t.Parallel()
	r := NewRedactor([]string{"X_SECRET=0123456789"})
	input := strings.Repeat("abc 01234 5678 ", 1000) + "0123456789 end"
	for _, chunk := range []int{1, 3, 7, 100, 4096} {
		s := r.Stream()
		var out strings.Builder
		for i := 0; i < len(input); i += chunk {
			out.Write(s.Write([]byte(input[i:min(i+chunk, len(input))])))
		}
		out.Write(s.Flush())
		assert.Equal(t, strings.Repeat("abc 01234 5678 ", 1000)+"*** end", out.String(), "chunk %d", chunk)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func TestWriteAtomicReplacesWhole(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "short.json")
	for i, content := range []string{"first, long content\n", "second\n", strings.Repeat("third ", 10000)} {
		require.NoError(t, WriteAtomic(path, []byte(content), 0o644), "write %d", i)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, content, string(got), "write %d", i)
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
		entries, err := os.ReadDir(filepath.Dir(path))
		require.NoError(t, err)
		assert.Len(t, entries, 1, "no temporary file left behind")
	}
}

func TestQueuedShortWritesEndWithTheNewest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		final string // "" closes without a ShortJSON of its own
		want  string
	}{
		{name: "close waits for the queue", want: `{"n":99,"token":"***"}`},
		{name: "ShortJSON comes after the queue", final: `{"n":"final"}`, want: `{"n":"final"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := Open(Options{Dir: t.TempDir(), Short: true, Redactor: NewRedactor([]string{"GH_TOKEN=ghp_abcdefgh"})})
			require.NoError(t, err)
			for i := range 100 {
				l.QueueShort(l.Redactor().JSON(fmt.Appendf(nil, `{"n":%d,"token":"ghp_abcdefgh"}`, i)))
			}
			if tt.final != "" {
				require.NoError(t, l.ShortJSON([]byte(tt.final)))
			}
			require.NoError(t, l.Close())
			got, err := os.ReadFile(filepath.Join(l.Dir, "short.json"))
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestQueuedShortErrorComesBack(t *testing.T) {
	t.Parallel()
	l, err := Open(Options{Dir: t.TempDir(), Short: true})
	require.NoError(t, err)
	// The run's directory removed under it: every write fails.
	require.NoError(t, os.RemoveAll(l.Dir))
	l.QueueShort([]byte(`{}`))
	assert.Error(t, l.Close(), "the failed background write is reported")
}

// Secrets that are also dtree's own words leave events.jsonl and short.json
// parseable, with their event names, times and run id whole.
func TestLogMasksValuesNotItsOwnWords(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 20, 45, 9, 0, time.UTC)
	r := NewRedactor([]string{"A_KEY=node", "B_KEY=2026", "C_KEY=true", "D_KEY=null"})
	l, err := Open(Options{Dir: t.TempDir(), Short: true, Redactor: r, Now: func() time.Time { return now }})
	require.NoError(t, err)
	require.NoError(t, l.Event(AgentCall{Node: "3", Error: "node 2026 true null", TimedOut: true}))
	require.NoError(t, l.ShortJSON(l.Redactor().JSON([]byte(`{"run_id":"`+l.RunID+`","events":"logs/`+l.RunID+`/events.jsonl","completed":true,"null":null,"node":"node"}`))))
	require.NoError(t, l.Close())

	lines := readLines(t, filepath.Join(l.Dir, "events.jsonl"))
	require.Len(t, lines, 1)
	assert.Equal(t, `{"time":"2026-11-24T20:45:09Z","event":"agent_call","argv":null,"attempt":0,"cli":"","duration_ms":0,`+
		`"error":"*** *** *** ***","exit_code":0,"node":"3","purpose":"","run_id":"`+l.RunID+`","stderr_bytes":0,"stderr_tail":"",`+
		`"stdout_bytes":0,"stopped_after_answer":false,"timed_out":true,`+
		`"usage":{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null}}`, lines[0])

	short, err := os.ReadFile(filepath.Join(l.Dir, "short.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(short, &doc), string(short))
	assert.Equal(t, map[string]any{"run_id": l.RunID, "events": "logs/" + l.RunID + "/events.jsonl", "completed": true,
		"null": nil, "node": "***"}, doc)
}

// A run killed while writing short.json leaves its temporary file; the
// next run in the same log directory removes it, and only a file of
// dtree's own name that is old enough to be no live run's.
func TestOpenRemovesWhatKilledRunsLeft(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(rel string, mtime time.Time) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		require.NoError(t, os.Chtimes(p, mtime, mtime))
		return p
	}
	stale := write("20261101T000000Z-aaaaaa/.short.json.tmp", old)
	mine := write("20261101T000000Z-aaaaaa/notes.tmp", old)
	require.NoError(t, os.Symlink("20261101T000000Z-aaaaaa", filepath.Join(dir, "latest")))
	l, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	assert.NoFileExists(t, stale)
	assert.FileExists(t, mine, "not a name dtree writes")

	// A run still going may be writing its own: a run started beside it
	// leaves it alone.
	going, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	fresh := write(filepath.Join(going.RunID, ".short.json.tmp"), time.Now())
	l, err = Open(Options{Dir: dir, RunID: "beside"})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	assert.FileExists(t, fresh, "its run still goes")

	// Once that run has ended (killed: its lock is gone with it), the next
	// start removes its file at once, however young.
	require.NoError(t, os.Symlink(going.RunID, filepath.Join(dir, "latest2")))
	require.NoError(t, os.Rename(filepath.Join(dir, "latest2"), filepath.Join(dir, "latest")))
	require.NoError(t, going.events.Close())
	l, err = Open(Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	if runtime.GOOS != "windows" {
		assert.NoFileExists(t, fresh, "the run that wrote it has ended")
	}
}

// A log directory dtree creates gets a .gitignore that ignores it all; one
// the user made is left as it is.
func TestOpenIgnoresTheLogDirItCreates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		exists bool
		want   bool
	}{
		{"created", false, true},
		{"already there", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), ".dtree", "runs")
			if tt.exists {
				require.NoError(t, os.MkdirAll(dir, 0o755))
			}
			l, err := Open(Options{Dir: dir})
			require.NoError(t, err)
			l.Close()
			b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
			if !tt.want {
				assert.ErrorIs(t, err, os.ErrNotExist)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "*", strings.Split(strings.TrimSpace(string(b)), "\n")[1])
			// A second run leaves it be.
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("mine\n"), 0o644))
			l, err = Open(Options{Dir: dir})
			require.NoError(t, err)
			l.Close()
			b, _ = os.ReadFile(filepath.Join(dir, ".gitignore"))
			assert.Equal(t, "mine\n", string(b))
		})
	}
}

// long.log keeps at most LongCallMax of one call's output and LongMax in
// all, and says where it cut and why; the agent's writer sees no error.
func TestLongLogIsCutAtItsBounds(t *testing.T) {
	t.Parallel()
	const callMark = "----- long.log: cut here: this call printed more than 1 KiB (long_log_call_max)"
	const runMark = "----- long.log: cut here: the run's long.log reached 4 KiB (long_log_max)"
	tests := []struct {
		name           string
		callMax, max   int64
		calls, printed int // calls of printed bytes each
		wantCallCuts   int
		wantRunCut     bool
		wantHeaders    int
	}{
		{name: "no bounds", calls: 3, printed: 10 << 10, wantHeaders: 3},
		{name: "each call cut", callMax: 1 << 10, calls: 3, printed: 10 << 10, wantCallCuts: 3, wantHeaders: 3},
		{name: "a call within its bound", callMax: 1 << 10, calls: 2, printed: 1 << 10, wantHeaders: 2},
		{name: "the run cut", max: 4 << 10, calls: 5, printed: 3 << 10, wantRunCut: true, wantHeaders: 2},
		{name: "both", callMax: 1 << 10, max: 4 << 10, calls: 8, printed: 10 << 10, wantCallCuts: 3, wantRunCut: true, wantHeaders: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := Open(Options{Dir: t.TempDir(), Long: true, LongCallMax: tt.callMax, LongMax: tt.max})
			require.NoError(t, err)
			line := []byte(strings.Repeat("x", 99) + "\n")
			for c := range tt.calls {
				w := l.Call(fmt.Sprint(c), "fake", 1, "run")
				for i := 0; i < tt.printed; i += len(line) {
					n, err := w.Write(line[:min(len(line), tt.printed-i)])
					require.NoError(t, err)
					require.Equal(t, min(len(line), tt.printed-i), n)
				}
				require.NoError(t, w.Close())
			}
			require.NoError(t, l.Close())
			b, err := os.ReadFile(filepath.Join(l.Dir, "long.log"))
			require.NoError(t, err)
			got := string(b)
			assert.Equal(t, tt.wantCallCuts, strings.Count(got, callMark), "calls cut")
			assert.Equal(t, tt.wantRunCut, strings.Contains(got, runMark), "run cut")
			assert.Equal(t, tt.wantHeaders, strings.Count(got, "\n===== node "), "calls with a section")
			if tt.max > 0 {
				assert.LessOrEqual(t, len(b), int(tt.max)+300, "long.log within long_log_max and its cut line")
			}
			if tt.callMax > 0 {
				for _, section := range strings.Split(got, "\n===== node ")[1:] {
					_, out, _ := strings.Cut(section, "=====\n")
					out, _, _ = strings.Cut(out, "\n----- long.log")
					assert.LessOrEqual(t, len(out), int(tt.callMax), "a call's output within long_log_call_max")
				}
			}
		})
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{1 << 30: "1 GiB", 16 << 20: "16 MiB", 1536: "1536 bytes", 3 << 10: "3 KiB", 7: "7 bytes"} {
		assert.Equal(t, want, Size(n))
	}
}
