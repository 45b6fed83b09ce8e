package runlog_test

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/types"
)

// The lines the run wrote before events had types, when it passed each
// event as a map (encoding/json sorts a map's keys): every event must be
// written byte for byte as before.
const (
	runStart                   = `{"time":"2026-11-24T20:00:00.000000005Z","event":"run_start","chart":"Keep \u003cgreen\u003e","graph_digest":"abc","max_steps":200,"no_validate":false,"page":"2","run_id":"r1","settings":{"clis":"fake","log_dir":".dtree/runs"},"source":"build-green.csv","start":"3","workdir":"/tmp/demo"}`
	runStartEmpty              = `{"time":"2026-11-24T20:00:00.000000005Z","event":"run_start","chart":"","graph_digest":"","max_steps":0,"no_validate":true,"page":"","run_id":"r1","settings":null,"source":"stdin","start":"","workdir":""}`
	nodeStart                  = `{"time":"2026-11-24T20:00:00.000000005Z","event":"node_start","cli":"fake","node":"4","role":"process","run_id":"r1","visit":1}`
	agentCall                  = `{"time":"2026-11-24T20:00:00.000000005Z","event":"agent_call","argv":["/bin/fake","\u003cprompt: 352 bytes\u003e"],"attempt":2,"cli":"fake","duration_ms":12,"error":"fake exited with status 3","exit_code":-1,"node":"4","purpose":"validate","run_id":"r1","stderr_bytes":7,"stderr_tail":"oops ***\n","stdout_bytes":81,"stopped_after_answer":true,"timed_out":true,"usage":{"input_tokens":5,"output_tokens":null,"cost_usd":0.5,"duration_ms":null}}`
	agentCallEmpty             = `{"time":"2026-11-24T20:00:00.000000005Z","event":"agent_call","argv":null,"attempt":1,"cli":"fake","duration_ms":0,"error":"","exit_code":0,"node":"4","purpose":"run","run_id":"r1","stderr_bytes":0,"stderr_tail":"","stdout_bytes":0,"stopped_after_answer":false,"timed_out":false,"usage":{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null}}`
	decision                   = `{"time":"2026-11-24T20:00:00.000000005Z","event":"decision","answer":"No, two fail","label":"No","next":"6","node":"5","run_id":"r1"}`
	validation                 = `{"time":"2026-11-24T20:00:00.000000005Z","event":"validation","attempt":1,"node":"6","run_id":"r1","validation":{"fully_completed":false,"partially_completed":false,"should_retry":true,"warnings":["skipped"]}}`
	validationFailed           = `{"time":"2026-11-24T20:00:00.000000005Z","event":"validation_failed","attempt":1,"call":2,"error":"no JSON object","node":"8","run_id":"r1"}`
	retry                      = `{"time":"2026-11-24T20:00:00.000000005Z","event":"retry","attempt":1,"attempts_left":2,"node":"6","reason":"validation did not pass","run_id":"r1"}`
	nodeEndProcess             = `{"time":"2026-11-24T20:00:00.000000005Z","event":"node_end","label":"","next":"4","node":"6","output":"{\"completed\": true}","response":{"completed":true,"secs_taken":0,"tokens_used":0,"comments":["a \u003cb\u003e \u0026 c","***"]},"run_id":"r1","status":"succeeded","usage":{"input_tokens":1520,"output_tokens":88,"cost_usd":0.0123,"duration_ms":4210,"calls":2,"wall_ms":11,"unreported":{"input_tokens":1,"output_tokens":1,"cost_usd":1,"duration_ms":1}},"validation":{"fully_completed":true,"partially_completed":false,"should_retry":false,"warnings":[]},"visit":1}`
	nodeEndDecision            = `{"time":"2026-11-24T20:00:00.000000005Z","event":"node_end","command":"make test","label":"Yes","next":"7","node":"5","output":"ok\n","response":{"choices":[],"answer":"Yes","reasons":null},"run_id":"r1","status":"succeeded","usage":{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null,"calls":0,"wall_ms":0,"unreported":{"input_tokens":0,"output_tokens":0,"cost_usd":0,"duration_ms":0}},"validation":null,"visit":2}`
	nodeEndLogFailed           = `{"time":"2026-11-24T20:00:00.000000005Z","event":"node_end","error":"cannot write","node":"8","response":{"completed":true,"secs_taken":0,"tokens_used":0,"comments":["a \u003cb\u003e \u0026 c","***"]},"run_id":"r1","status":"log_write_failed","usage":{"input_tokens":1520,"output_tokens":88,"cost_usd":0.0123,"duration_ms":4210,"calls":2,"wall_ms":11,"unreported":{"input_tokens":1,"output_tokens":1,"cost_usd":1,"duration_ms":1}},"validation":null,"visit":1}`
	nodeEndLogFailedNoResponse = `{"time":"2026-11-24T20:00:00.000000005Z","event":"node_end","error":"cannot write","node":"8","response":null,"run_id":"r1","status":"log_write_failed","usage":{"input_tokens":1520,"output_tokens":88,"cost_usd":0.0123,"duration_ms":4210,"calls":2,"wall_ms":11,"unreported":{"input_tokens":1,"output_tokens":1,"cost_usd":1,"duration_ms":1}},"validation":{"fully_completed":true,"partially_completed":false,"should_retry":false,"warnings":[]},"visit":1}`
	nodeEndFailed              = `{"time":"2026-11-24T20:00:00.000000005Z","event":"node_end","error":"the answer \"Maybe\" is not","node":"8","run_id":"r1","status":"failed","usage":{"input_tokens":1520,"output_tokens":88,"cost_usd":0.0123,"duration_ms":4210,"calls":2,"wall_ms":11,"unreported":{"input_tokens":1,"output_tokens":1,"cost_usd":1,"duration_ms":1}},"visit":1}`
	nodeEndInterrupted         = `{"time":"2026-11-24T20:00:00.000000005Z","event":"node_end","error":"interrupted","node":"8","run_id":"r1","status":"interrupted","usage":{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null,"calls":0,"wall_ms":0,"unreported":{"input_tokens":0,"output_tokens":0,"cost_usd":0,"duration_ms":0}},"visit":3}`
	end                        = `{"time":"2026-11-24T20:00:00.000000005Z","event":"end","node":"9","run_id":"r1"}`
	runEnd                     = `{"time":"2026-11-24T20:00:00.000000005Z","event":"run_end","error":"","exit_code":0,"path":["3","4"],"run_id":"r1","status":"succeeded","steps":7,"usage":{"input_tokens":1520,"output_tokens":88,"cost_usd":0.0123,"duration_ms":4210,"calls":2,"wall_ms":11,"unreported":{"input_tokens":1,"output_tokens":1,"cost_usd":1,"duration_ms":1}}}`
	runEndFailed               = `{"time":"2026-11-24T20:00:00.000000005Z","event":"run_end","error":"node 8 failed","exit_code":1,"path":null,"run_id":"r1","status":"failed","steps":0,"usage":{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null,"calls":0,"wall_ms":0,"unreported":{"input_tokens":0,"output_tokens":0,"cost_usd":0,"duration_ms":0}}}`
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

// TestEventsRoundTrip writes each kind of event, compares the line with
// the one written before events had types, and reads it back.
func TestEventsRoundTrip(t *testing.T) {
	t.Parallel()
	var tot types.UsageTotal
	tot.Add(types.Usage{InputTokens: i64(1520), OutputTokens: i64(88), CostUSD: f64(0.0123), DurationMS: i64(4210)}, 8)
	tot.Add(types.Usage{}, 3)
	val := &types.ValidationResponse{FullyCompleted: true, Warnings: []string{}}
	proc, masked := `{"completed":true,"secs_taken":0,"tokens_used":0,"comments":["a \u003cb\u003e \u0026 c","ghp_secret1"]}`,
		`{"completed":true,"secs_taken":0,"tokens_used":0,"comments":["a \u003cb\u003e \u0026 c","***"]}`
	for _, tc := range []struct {
		name string
		ev   runlog.Event
		line string
		back runlog.Event // what reads back when not ev with the run id: secrets masked
	}{
		{name: "run_start", ev: runlog.RunStart{Chart: "Keep <green>", Source: "build-green.csv", Page: "2", GraphDigest: "abc",
			Start: "3", Workdir: "/tmp/demo", MaxSteps: 200, Settings: map[string]string{"clis": "fake", "log_dir": ".dtree/runs"}}, line: runStart},
		{name: "run_start empty", ev: runlog.RunStart{Source: "stdin", NoValidate: true}, line: runStartEmpty},
		{name: "node_start", ev: runlog.NodeStart{Node: "4", Visit: 1, Role: "process", CLI: "fake"}, line: nodeStart},
		{name: "agent_call", ev: runlog.AgentCall{Node: "4", Attempt: 2, Purpose: "validate", CLI: "fake",
			Argv: []string{"/bin/fake", "<prompt: 352 bytes>"}, DurationMS: 12, ExitCode: -1, TimedOut: true,
			StoppedAfterAnswer: true, StdoutBytes: 81, StderrBytes: 7, Usage: types.Usage{InputTokens: i64(5), CostUSD: f64(0.5)},
			Error: "fake exited with status 3", StderrTail: "oops ghp_secret1\n"}, line: agentCall,
			back: runlog.AgentCall{Node: "4", Attempt: 2, Purpose: "validate", CLI: "fake",
				Argv: []string{"/bin/fake", "<prompt: 352 bytes>"}, DurationMS: 12, ExitCode: -1, TimedOut: true,
				StoppedAfterAnswer: true, StdoutBytes: 81, StderrBytes: 7, Usage: types.Usage{InputTokens: i64(5), CostUSD: f64(0.5)},
				Error: "fake exited with status 3", StderrTail: "oops ***\n", RunID: "r1"}},
		{name: "agent_call empty", ev: runlog.AgentCall{Node: "4", Attempt: 1, Purpose: "run", CLI: "fake"}, line: agentCallEmpty},
		{name: "decision", ev: runlog.Decision{Node: "5", Answer: "No, two fail", Label: "No", Next: "6"}, line: decision},
		{name: "validation", ev: runlog.Validation{Node: "6", Attempt: 1,
			Validation: types.ValidationResponse{ShouldRetry: true, Warnings: []string{"skipped"}}}, line: validation},
		{name: "validation_failed", ev: runlog.ValidationFailed{Node: "8", Attempt: 1, Call: 2, Error: "no JSON object"}, line: validationFailed},
		{name: "retry", ev: runlog.Retry{Node: "6", Attempt: 1, Reason: "validation did not pass", AttemptsLeft: 2}, line: retry},
		{name: "node_end process", ev: runlog.NodeEnd{Node: "6", Visit: 1, Status: "succeeded", Response: json.RawMessage(proc),
			Validation: val, Next: "4", Usage: tot, Output: `{"completed": true}`}, line: nodeEndProcess,
			back: runlog.NodeEnd{Node: "6", Visit: 1, Status: "succeeded", Response: json.RawMessage(masked),
				Validation: val, Next: "4", Usage: tot, RunID: "r1", Output: `{"completed": true}`}},
		{name: "node_end decision", ev: runlog.NodeEnd{Node: "5", Visit: 2, Status: "succeeded", Command: "make test", Output: "ok\n",
			Response: json.RawMessage(`{"choices":[],"answer":"Yes","reasons":null}`), Next: "7", Label: "Yes"}, line: nodeEndDecision},
		{name: "node_end log_write_failed", ev: runlog.NodeEnd{Node: "8", Visit: 1, Status: "log_write_failed", Response: json.RawMessage(proc),
			Error: "cannot write", Usage: tot}, line: nodeEndLogFailed,
			back: runlog.NodeEnd{Node: "8", Visit: 1, Status: "log_write_failed", Response: json.RawMessage(masked),
				Error: "cannot write", Usage: tot, RunID: "r1"}},
		{name: "node_end log_write_failed, no response", ev: runlog.NodeEnd{Node: "8", Visit: 1, Status: "log_write_failed",
			Response: json.RawMessage("null"), Validation: val, Error: "cannot write", Usage: tot}, line: nodeEndLogFailedNoResponse},
		{name: "node_end failed", ev: runlog.NodeEnd{Node: "8", Visit: 1, Status: "failed", Error: `the answer "Maybe" is not`, Usage: tot},
			line: nodeEndFailed},
		{name: "node_end interrupted", ev: runlog.NodeEnd{Node: "8", Visit: 3, Status: "interrupted", Error: "interrupted"}, line: nodeEndInterrupted},
		{name: "end", ev: runlog.End{Node: "9"}, line: end},
		{name: "var_nul", ev: runlog.VarNUL{Node: "9", Ref: "{{node.4.output}}", NULs: 2},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"var_nul","node":"9","nuls":2,"ref":"{{node.4.output}}","run_id":"r1"}`},
		{name: "tool_call", ev: runlog.ToolCall{Node: "4", Attempt: 1, Purpose: "run", CLI: "claude", N: 3, Tool: "Bash",
			Arg: "curl -H 'Authorization: ghp_secret1' x", Status: runlog.ToolOK},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"tool_call","arg":"curl -H 'Authorization: ***' x","attempt":1,"cli":"claude","n":3,"node":"4","purpose":"run","run_id":"r1","status":"ok","tool":"Bash"}`,
			back: runlog.ToolCall{Node: "4", Attempt: 1, Purpose: "run", CLI: "claude", N: 3, Tool: "Bash",
				Arg: "curl -H 'Authorization: ***' x", Status: runlog.ToolOK, RunID: "r1"}},
		{name: "tool_call edit", ev: runlog.ToolCall{Node: "4", Attempt: 2, Purpose: "run", CLI: "claude", N: 1, Tool: "Edit",
			Arg: "gotenv.go", File: "gotenv.go", Status: runlog.ToolUnfinished},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"tool_call","arg":"gotenv.go","attempt":2,"cli":"claude","file":"gotenv.go","n":1,"node":"4","purpose":"run","run_id":"r1","status":"unfinished","tool":"Edit"}`},
		{name: "tool_calls_left_out", ev: runlog.ToolCallsLeftOut{Node: "4", Attempt: 1, Purpose: "run", CLI: "claude", LeftOut: 9800},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"tool_calls_left_out","attempt":1,"cli":"claude","left_out":9800,"node":"4","purpose":"run","run_id":"r1"}`},
		{name: "workspace", ev: runlog.Workspace{Repo: "/src/app", Ref: "refs/dtree/runs/r1", Checkpoint: "5e1f"},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"workspace","checkpoint":"5e1f","ref":"refs/dtree/runs/r1","repo":"/src/app","run_id":"r1"}`},
		{name: "workspace worktree", ev: runlog.Workspace{Repo: "/src/app/.dtree/worktrees/r1", Ref: "refs/dtree/runs/r1", Checkpoint: "5e1f",
			Worktree: "/src/app/.dtree/worktrees/r1", Branch: "dtree/r1"},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"workspace","branch":"dtree/r1","checkpoint":"5e1f","ref":"refs/dtree/runs/r1","repo":"/src/app/.dtree/worktrees/r1","run_id":"r1","worktree":"/src/app/.dtree/worktrees/r1"}`},
		{name: "workspace off", ev: runlog.Workspace{Off: "not in a git repository"},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"workspace","off":"not in a git repository","run_id":"r1"}`},
		{name: "node_end change", ev: runlog.NodeEnd{Node: "8", Visit: 1, Status: "failed", Error: "no", Change: &types.Change{
			From: "aa", To: "bb", Files: 1, Added: 2, Removed: 1, Paths: []types.PathChange{{Path: "a.go", Status: "M", Added: 2, Removed: 1}}}},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"node_end","change":{"added":2,"files":1,"from":"aa","paths":[{"added":2,"path":"a.go","removed":1,"status":"M"}],"removed":1,"to":"bb"},"error":"no","node":"8","run_id":"r1","status":"failed","usage":{"input_tokens":null,"output_tokens":null,"cost_usd":null,"duration_ms":null,"calls":0,"wall_ms":0,"unreported":{"input_tokens":0,"output_tokens":0,"cost_usd":0,"duration_ms":0}},"visit":1}`},
		{name: "retry kept", ev: runlog.Retry{Node: "6", Attempt: 1, Reason: "no", AttemptsLeft: 1, Rollback: "keep",
			Change: &types.Change{From: "aa", To: "bb", Files: 1, Paths: []types.PathChange{{Path: "a", Status: "A"}}}},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"retry","attempt":1,"attempts_left":1,"change":{"added":0,"files":1,"from":"aa","paths":[{"added":0,"path":"a","removed":0,"status":"A"}],"removed":0,"to":"bb"},"node":"6","reason":"no","rollback":"keep","run_id":"r1"}`},
		{name: "rollback", ev: runlog.Rollback{Node: "6", Attempt: 2, Checkpoint: "aa", Change: &types.Change{From: "aa", To: "bb", Files: 0, Paths: []types.PathChange{}}},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"rollback","attempt":2,"change":{"added":0,"files":0,"from":"aa","paths":[],"removed":0,"to":"bb"},"checkpoint":"aa","node":"6","run_id":"r1"}`},
		{name: "out_of_scope", ev: runlog.OutOfScope{Node: "6", Attempt: 1, Checkpoint: "cc", Files: 101, Paths: []types.PathStatus{{Path: "x", Status: "M"}}, PathsLeftOut: 100},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"out_of_scope","attempt":1,"checkpoint":"cc","files":101,"node":"6","paths":[{"path":"x","status":"M"}],"paths_left_out":100,"run_id":"r1"}`},
		{name: "tree_restored", ev: runlog.TreeRestored{Node: "5", Attempt: 1, By: "decision", Checkpoint: "aa", Change: &types.Change{From: "aa", To: "bb", Files: 1, Paths: []types.PathChange{}}},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"tree_restored","attempt":1,"by":"decision","change":{"added":0,"files":1,"from":"aa","paths":[],"removed":0,"to":"bb"},"checkpoint":"aa","node":"5","run_id":"r1"}`},
		{name: "approval_asked", ev: runlog.ApprovalAsked{Node: "5", Resume: "approve it: dtree resume r1 --approve"},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"approval_asked","node":"5","resume":"approve it: dtree resume r1 --approve","run_id":"r1"}`},
		{name: "approval_given", ev: runlog.ApprovalGiven{Node: "5", Answer: "rejected", Label: "No", Next: "6", Who: "flag", Reason: "no tests"},
			line: `{"time":"2026-11-24T20:00:00.000000005Z","event":"approval_given","answer":"rejected","label":"No","next":"6","node":"5","reason":"no tests","run_id":"r1","who":"flag"}`},
		{name: "run_end", ev: runlog.RunEnd{Status: "succeeded", Path: []string{"3", "4"}, Steps: 7, Usage: tot}, line: runEnd},
		{name: "run_end failed", ev: runlog.RunEnd{Status: "failed", ExitCode: 1, Error: "node 8 failed"}, line: runEndFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 11, 24, 20, 0, 0, 5, time.UTC)
			l, err := runlog.Open(runlog.Options{Dir: t.TempDir(), RunID: "r1", Now: func() time.Time { return now },
				Redactor: runlog.NewRedactor([]string{"GH_TOKEN=ghp_secret1"})})
			require.NoError(t, err)
			require.NoError(t, l.Event(tc.ev))
			require.NoError(t, l.Close())
			b, err := os.ReadFile(filepath.Join(l.Dir, "events.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, tc.line+"\n", string(b))

			evs, err := runlog.ReadEvents(l.Dir)
			require.NoError(t, err)
			want := tc.back
			if want == nil {
				want = withRunID(tc.ev, "r1")
			}
			assert.Equal(t, []runlog.Event{want}, evs)

			r := runlog.NewEventReader(strings.NewReader(string(b)))
			_, err = r.Next()
			require.NoError(t, err)
			assert.Equal(t, now, r.Time())
			// The same line with its head in another order.
			var fields map[string]any
			require.NoError(t, json.Unmarshal(b, &fields))
			b, err = json.Marshal(fields)
			require.NoError(t, err)
			r = runlog.NewEventReader(strings.NewReader(string(b)))
			ev, err := r.Next()
			require.NoError(t, err)
			assert.Equal(t, want.Type(), ev.Type())
			assert.Equal(t, now, r.Time())
		})
	}
}

// withRunID is ev as it reads back from a log whose run id is id.
func withRunID(ev runlog.Event, id string) runlog.Event {
	switch e := ev.(type) {
	case runlog.RunStart:
		e.RunID = id
		return e
	case runlog.NodeStart:
		e.RunID = id
		return e
	case runlog.AgentCall:
		e.RunID = id
		return e
	case runlog.Decision:
		e.RunID = id
		return e
	case runlog.Validation:
		e.RunID = id
		return e
	case runlog.ValidationFailed:
		e.RunID = id
		return e
	case runlog.Retry:
		e.RunID = id
		return e
	case runlog.Rollback:
		e.RunID = id
		return e
	case runlog.OutOfScope:
		e.RunID = id
		return e
	case runlog.TreeRestored:
		e.RunID = id
		return e
	case runlog.ApprovalAsked:
		e.RunID = id
		return e
	case runlog.ApprovalGiven:
		e.RunID = id
		return e
	case runlog.NodeEnd:
		e.RunID = id
		return e
	case runlog.VarNUL:
		e.RunID = id
		return e
	case runlog.End:
		e.RunID = id
		return e
	case runlog.RunEnd:
		e.RunID = id
		return e
	case runlog.ToolCall:
		e.RunID = id
		return e
	case runlog.ToolCallsLeftOut:
		e.RunID = id
		return e
	case runlog.Workspace:
		e.RunID = id
		return e
	}
	return ev
}

// readAll reads every event and error of a log, as strings.
func readAll(t *testing.T, r *runlog.EventReader) (evs []runlog.Event, errs []string) {
	t.Helper()
	for range 100 {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return evs, errs
		}
		var le *runlog.LineError
		if errors.As(err, &le) {
			errs = append(errs, err.Error())
			continue
		}
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	t.Fatal("no io.EOF")
	return nil, nil
}

func TestEventReaderTornAndUnknown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, log string
		want      []runlog.Event
		errs      []string
		torn      bool
	}{
		{name: "torn last line", log: end + "\n" + runEnd[:40], want: []runlog.Event{runlog.End{Node: "9", RunID: "r1"}}, torn: true},
		{name: "last line whole without its newline", log: end,
			want: []runlog.Event{runlog.End{Node: "9", RunID: "r1"}}},
		{name: "last line whole but not an event", log: end + "\n" + `{"format_version":1}`,
			want: []runlog.Event{runlog.End{Node: "9", RunID: "r1"}},
			errs: []string{`events.jsonl line 2: no "event" name`}},
		{name: "blank lines", log: "\n" + end + "\n\n  \n", want: []runlog.Event{runlog.End{Node: "9", RunID: "r1"}}},
		{name: "unknown event", log: `{"time":"2027-01-01T00:00:00Z","event":"checkpoint","node":"4","run_id":"r1"}` + "\n" + end + "\n",
			want: []runlog.Event{
				runlog.Unknown{Name: "checkpoint", Line: json.RawMessage(`{"time":"2027-01-01T00:00:00Z","event":"checkpoint","node":"4","run_id":"r1"}`)},
				runlog.End{Node: "9", RunID: "r1"},
			}},
		{name: "a known event with new fields", log: `{"event":"end","node":"9","run_id":"r1","why":"new"}`,
			want: []runlog.Event{runlog.End{Node: "9", RunID: "r1"}}},
		{name: "lines that are not events, mid-file", log: "not json\n" + `{"node":"4"}` + "\n" + `{"event":"node_start","visit":"1"}` + "\n[1]\n" + end + "\n",
			want: []runlog.Event{runlog.End{Node: "9", RunID: "r1"}},
			errs: []string{
				"events.jsonl line 1: invalid character 'o' in literal null (expecting 'u')",
				`events.jsonl line 2: no "event" name`,
				"events.jsonl line 3: json: cannot unmarshal string into Go struct field NodeStart.visit of type int",
				"events.jsonl line 4: json: cannot unmarshal array into Go value of type runlog.jsonHead",
			}},
		{name: "a line too long", log: `{"event":"end","node":"` + strings.Repeat("x", runlog.MaxEventLine) + `"}` + "\n" + end,
			want: []runlog.Event{runlog.End{Node: "9", RunID: "r1"}},
			errs: []string{"events.jsonl line 1: line longer than 16777216 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runlog.NewEventReader(strings.NewReader(tc.log))
			evs, errs := readAll(t, r)
			assert.Equal(t, tc.want, evs)
			assert.Equal(t, tc.errs, errs)
			assert.Equal(t, tc.torn, r.Torn())
		})
	}
}

// Only skips the other events, unknown ones too, without decoding them.
func TestEventReaderOnly(t *testing.T) {
	t.Parallel()
	log := strings.Join([]string{runStart, nodeStart, agentCall, `{"event":"agent_call","argv":"not a list"}`,
		`{"event":"checkpoint"}`, nodeEndFailed, end}, "\n")
	r := runlog.NewEventReader(strings.NewReader(log)).Only(runlog.EventNodeStart, runlog.EventEnd)
	evs, errs := readAll(t, r)
	assert.Empty(t, errs)
	assert.Equal(t, []runlog.Event{runlog.NodeStart{Node: "4", Visit: 1, Role: "process", CLI: "fake", RunID: "r1"},
		runlog.End{Node: "9", RunID: "r1"}}, evs)
	assert.False(t, r.Torn())

	// A torn last line is torn, whatever its event.
	r = runlog.NewEventReader(strings.NewReader(end + "\n" + agentCall[:200])).Only(runlog.EventEnd)
	evs, errs = readAll(t, r)
	assert.Empty(t, errs)
	assert.Len(t, evs, 1)
	assert.True(t, r.Torn())
}

func TestReadEventsStopsAtALineError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(end+"\nnot json\n"+end+"\n"), 0o644))
	evs, err := runlog.ReadEvents(dir)
	var le *runlog.LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 2, le.Line)
	assert.Len(t, evs, 1)

	_, err = runlog.ReadEvents(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestUnknownIsNotWritten(t *testing.T) {
	t.Parallel()
	l, err := runlog.Open(runlog.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	assert.Error(t, l.Event(runlog.Unknown{Name: "checkpoint"}))
	require.NoError(t, l.Close())
}

// Branch reads each event's fork branch as Log.EventOn writes it, and as
// any JSON writer would; the run's own events have none, and a workspace
// event's "branch" is --worktree's git branch, not a fork's.
func TestEventReaderBranch(t *testing.T) {
	t.Parallel()
	lines := []string{
		nodeStart,
		`{"time":"2026-11-24T20:00:00Z","event":"node_start","branch":"plan/tests","cli":"fake","node":"4","role":"process","run_id":"r1","visit":1}`,
		`{"event":"node_start","node":"5","branch":"plan#2/d\u00e9j\u00e0","visit":1}`,
		`{"time":"2026-11-24T20:00:00Z","event":"node_start","branch":"plan/a\"b","node":"6","visit":1}`,
		`{"time":"2026-11-24T20:00:00Z","event":"workspace","branch":"dtree/run-r1","run_id":"r1"}`,
		end,
	}
	r := runlog.NewEventReader(strings.NewReader(strings.Join(lines, "\n")))
	var got []string
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, r.Branch())
	}
	assert.Equal(t, []string{"", "plan/tests", "plan#2/déjà", `plan/a"b`, "", ""}, got)

	// What Log.EventOn writes reads back.
	l, err := runlog.Open(runlog.Options{Dir: t.TempDir(), RunID: "r1"})
	require.NoError(t, err)
	require.NoError(t, l.EventOn("plan/docs", runlog.NodeStart{Node: "7", Visit: 1}))
	require.NoError(t, l.Event(runlog.End{Node: "9"}))
	require.NoError(t, l.Close())
	f, err := os.Open(filepath.Join(l.Dir, "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	r = runlog.NewEventReader(f)
	_, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, "plan/docs", r.Branch())
	_, err = r.Next()
	require.NoError(t, err)
	assert.Empty(t, r.Branch())
}
