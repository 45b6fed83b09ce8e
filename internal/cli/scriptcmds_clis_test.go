package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdFakeBin: fakebin DIR NAME... — puts in DIR an executable for each
// NAME that runs `fakecli NAME ARGS...` (internal/testagent.CLIMain) with
// its own arguments, stdin and environment, so that dtree finds a CLI of
// that name on PATH. `NAME --version` is answered by the script itself,
// at once ("NAME 1.2.3 (fake)"), or never when FAKECLI_HANG lists NAME:
// dtree clis gives a CLI a second, which a loaded test machine can take
// just to start a Go binary.
func cmdFakeBin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: fakebin DIR NAME...")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	for _, name := range args[1:] {
		script := strings.NewReplacer("NAME", name).Replace(`#!/bin/sh
if [ "$#" = 1 ] && [ "$1" = --version ]; then
	case ",$FAKECLI_HANG," in *,NAME,*) exec sleep 3600 ;; esac
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
