package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdFakeBin: fakebin DIR NAME... — puts in DIR an executable for each
// NAME that runs `fakecli NAME ARGS...` (internal/testagent.CLIMain) with
// its own arguments, stdin and environment, so that dtree finds a CLI of
// that name on PATH. `NAME --version` is answered by the script itself,
// at once ("NAME 1.2.3 (fake)"), or never when FAKECLI_HANG lists NAME
// (dtree clis gives a CLI a second, which a loaded test machine can take
// just to start a Go binary), or, when FAKECLI_NOVERSION lists NAME, with
// a complaint on stderr and exit status 2, as a CLI without --version.
// With FAKECLI_DIR set, `NAME --version` leaves FAKECLI_DIR/NAME.version.
func cmdFakeBin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: fakebin DIR NAME...")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	for _, name := range args[1:] {
		script := strings.NewReplacer("NAME", name).Replace(`#!/bin/sh
if [ "$#" = 1 ] && [ "$1" = --version ]; then
	if [ -n "$FAKECLI_DIR" ]; then : > "$FAKECLI_DIR/NAME.version"; fi
	case ",$FAKECLI_HANG," in *,NAME,*) exec sleep 3600 ;; esac
	case ",$FAKECLI_NOVERSION," in *,NAME,*) echo "error: unknown option '--version'" >&2; exit 2 ;; esac
	echo "NAME 1.2.3 (fake)"
	exit 0
fi
exec fakecli NAME "$@"
`)
		ts.Check(os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755))
	}
}

// cmdHasPrefix: hasprefix FILE PREFIXFILE — FILE starts with the content
// of PREFIXFILE, byte for byte (for prompts too long to compare in a
// script).
func cmdHasPrefix(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: hasprefix FILE PREFIXFILE")
	}
	got, want := ts.ReadFile(args[0]), ts.ReadFile(args[1])
	want = strings.TrimSuffix(want, "\n")
	if strings.HasPrefix(got, want) == neg {
		ts.Fatalf("%s (%d bytes) starts with the %d bytes of %s: %v", args[0], len(got), len(want), args[1], !neg)
	}
}

// usageFigures are the four figures of a usage object, in order.
var usageFigures = []string{"input_tokens", "output_tokens", "cost_usd", "duration_ms"}

// cmdUsage: usage FILE IN OUT COST DURATION — every usage in FILE, a run
// of one agent call, is that call's: IN OUT COST DURATION as the JSON
// says them (null for a figure the CLI did not report, never 0). FILE is
// events.jsonl (the agent_call, node_end and run_end events), or short.json
// or a --json summary (the run's usage, each node's, each attempt's). A
// node's or the run's usage also has calls 1 and counts each null figure
// as unreported.
func cmdUsage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: usage FILE IN OUT COST DURATION")
	}
	file, want := args[0], args[1:]
	check := func(where string, raw json.RawMessage, total bool) {
		var u map[string]json.RawMessage
		if err := json.Unmarshal(raw, &u); err != nil {
			ts.Fatalf("%s: usage %s: %v", where, raw, err)
		}
		unreported := map[string]json.RawMessage{}
		if total {
			if string(u["calls"]) != "1" {
				ts.Fatalf("%s: calls %s, want 1", where, u["calls"])
			}
			if err := json.Unmarshal(u["unreported"], &unreported); err != nil {
				ts.Fatalf("%s: unreported %s: %v", where, u["unreported"], err)
			}
		}
		for i, k := range usageFigures {
			if got, ok := u[k]; !ok || string(got) != want[i] {
				ts.Fatalf("%s: %s is %s, want %s (usage %s)", where, k, got, want[i], raw)
			}
			if !total {
				continue
			}
			n := "0"
			if want[i] == "null" {
				n = "1"
			}
			if string(unreported[k]) != n {
				ts.Fatalf("%s: unreported %s is %s, want %s", where, k, unreported[k], n)
			}
		}
	}
	content := ts.ReadFile(file)
	if strings.HasSuffix(file, ".jsonl") {
		seen := map[string]int{}
		for line := range strings.SplitSeq(strings.TrimSpace(content), "\n") {
			var ev struct {
				Event string          `json:"event"`
				Usage json.RawMessage `json:"usage"`
			}
			ts.Check(json.Unmarshal([]byte(line), &ev))
			switch ev.Event {
			case "agent_call":
				check(ev.Event, ev.Usage, false)
			case "node_end", "run_end":
				check(ev.Event, ev.Usage, true)
			default:
				continue
			}
			seen[ev.Event]++
		}
		for _, e := range []string{"agent_call", "node_end", "run_end"} {
			if seen[e] != 1 {
				ts.Fatalf("%s: %d %s events, want 1", file, seen[e], e)
			}
		}
		return
	}
	var doc struct {
		Usage json.RawMessage `json:"usage"`
		Nodes []struct {
			ID       string          `json:"id"`
			Usage    json.RawMessage `json:"usage"`
			Attempts []struct {
				Usage json.RawMessage `json:"usage"`
			} `json:"attempts"`
		} `json:"nodes"`
	}
	ts.Check(json.Unmarshal([]byte(content), &doc))
	check("the run", doc.Usage, true)
	if len(doc.Nodes) == 0 {
		ts.Fatalf("%s: no nodes", file)
	}
	for _, n := range doc.Nodes {
		check("node "+n.ID, n.Usage, true)
		for i, a := range n.Attempts {
			check(fmt.Sprintf("node %s attempt %d", n.ID, i+1), a.Usage, false)
		}
	}
}

// cmdStderrTail: stderrtail FILE WANTFILE — every agent call recorded in
// FILE kept the CLI's stderr: the stderr_tail of each agent_call event
// (FILE events.jsonl) or each attempt (FILE a --json summary) is the
// content of WANTFILE, byte for byte.
func cmdStderrTail(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: stderrtail FILE WANTFILE")
	}
	content, want := ts.ReadFile(args[0]), ts.ReadFile(args[1])
	var tails []string
	if strings.HasSuffix(args[0], ".jsonl") {
		for line := range strings.SplitSeq(strings.TrimSpace(content), "\n") {
			var ev struct {
				Event string  `json:"event"`
				Tail  *string `json:"stderr_tail"`
			}
			ts.Check(json.Unmarshal([]byte(line), &ev))
			if ev.Event == "agent_call" {
				if ev.Tail == nil {
					ts.Fatalf("agent_call without stderr_tail: %s", line)
				}
				tails = append(tails, *ev.Tail)
			}
		}
	} else {
		var doc struct {
			Nodes []struct {
				Attempts []struct {
					Tail *string `json:"stderr_tail"`
				} `json:"attempts"`
			} `json:"nodes"`
		}
		ts.Check(json.Unmarshal([]byte(content), &doc))
		for _, n := range doc.Nodes {
			for _, a := range n.Attempts {
				if a.Tail == nil {
					ts.Fatalf("an attempt without stderr_tail")
				}
				tails = append(tails, *a.Tail)
			}
		}
	}
	if len(tails) == 0 {
		ts.Fatalf("%s records no agent call", args[0])
	}
	for _, got := range tails {
		if got != want {
			ts.Fatalf("%s: stderr_tail is %q, want %q", args[0], got, want)
		}
	}
}
