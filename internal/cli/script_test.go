package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dtree-dev/dtree/internal/golden"
	"github.com/dtree-dev/dtree/internal/testagent"
)

// TestMain lets the test binary act as dtree, and as the helper programs the
// scripts use, when testscript runs it under those names. After the tests
// it fails the run if any of those programs is still running (nothing left
// behind: readme/run.md#what-dtree-stops-and-when).
func TestMain(m *testing.M) {
	testscript.Main(nothingLeft{m}, map[string]func(){
		"dtree":       func() { os.Exit(Main()) },
		"expect-exit": expectExit,
		"pipeclose":   pipeClose,
		"fakeagent":   func() { os.Exit(testagent.Main()) },
		"fakecli":     func() { os.Exit(testagent.CLIMain()) },
	})
}

// TestScript runs the end-to-end scripts in testdata/script against the real
// dtree binary (this test binary, run as dtree).
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		UpdateScripts:       golden.Update(),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("DTREE_RETRY_BACKOFF", "0s")
			// Under -race dtree and the fake agents are this race-built test
			// binary, whose race runtime sleeps a second at every exit
			// (atexit_sleep_ms): most of what the scripts took.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// CI containers run the tests as root, where `dtree run`
			// refuses the built-in claude without it (run_permanent.txtar).
			env.Setenv("IS_SANDBOX", "1")
			repo, err := filepath.Abs("../..")
			env.Setenv("REPO", repo) // the repository, for its example charts
			// A run in a directory of the repository makes no checkpoints
			// in it (readme/workspace.md).
			env.Setenv("GIT_CEILING_DIRECTORIES", repo)
			env.Values["clock"] = new(time.Time)
			return err
		},
		// [root]: the tests run as root (in a container, say).
		// [tmpfs]: they may mount a tmpfs of 4 KiB pages, a disk to fill
		// (tmpfs DIR SIZE).
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "tmpfs":
				return canMountTmpfs(), nil
			case "pty":
				return ptyCmds["ptyrun"] != nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: merged(map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"promptcheck":   cmdPromptCheck,
			"promptsize":    cmdPromptSize,
			"bigchart":      cmdBigChart,
			"tokenchart":    cmdTokenChart,
			"aliaschart":    cmdAliasChart,
			"pidsgone":      cmdPidsGone,
			"sendsig":       cmdSendSig,
			"clock":         cmdClock,
			"waitfile":      cmdWaitFile,
			"samerun":       cmdSameRun,
			"samesummary":   cmdSameSummary,
			"samejsonfield": cmdSameJSONField,
			"fakebin":       cmdFakeBin,
			"hasprefix":     cmdHasPrefix,
			"usage":         cmdUsage,
			"stderrtail":    cmdStderrTail,
			"svgcheck":      cmdSVGCheck,
			"tmpfs":         cmdTmpfs,
			"jsonl":         cmdJSONL,
			"masked":        cmdMasked,
			"jsonok":        cmdJSONOK,
			"steady":        cmdSteady,
			"xmlok":         cmdXMLOK,
			"markerchart":   cmdMarkerChart,
		}, merged(ptyCmds, resumeCmds)),
	})
}

// expectExit runs `expect-exit [-stderr FILE] CODE PROGRAM ARGS...`: it
// runs the program with the same streams and succeeds only if it exits
// with CODE, so scripts can check exact exit codes rather than "non-zero".
// With -stderr, what the program writes to stderr also goes to FILE as it
// comes, so that a script can wait for a line (waitfile -match) while the
// program runs in the background.
func expectExit() {
	args := os.Args[1:]
	var tee *os.File
	if len(args) > 2 && args[0] == "-stderr" {
		f, err := os.Create(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "expect-exit:", err)
			os.Exit(2)
		}
		defer f.Close()
		tee, args = f, args[2:]
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: expect-exit [-stderr FILE] CODE PROGRAM [ARGS...]")
		os.Exit(2)
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "expect-exit: bad code:", err)
		os.Exit(2)
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if tee != nil {
		cmd.Stderr = io.MultiWriter(os.Stderr, tee)
	}
	// Pass on the signals a script sends, so `kill -INT` reaches the
	// program under test.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "expect-exit:", err)
		os.Exit(2)
	}
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	err = cmd.Wait()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "expect-exit:", err)
		os.Exit(2)
	}
	if got != want {
		fmt.Fprintf(os.Stderr, "expect-exit: %s exited %d, want %d\n", args[1], got, want)
		os.Exit(1)
	}
	// EXPECT_MAX_RSS_MB bounds the program's peak resident memory.
	if limit, err := strconv.Atoi(os.Getenv("EXPECT_MAX_RSS_MB")); err == nil && cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			mb := ru.Maxrss / 1024
			fmt.Fprintf(os.Stderr, "expect-exit: %s peak RSS %d MiB\n", args[1], mb)
			if mb > int64(limit) {
				fmt.Fprintf(os.Stderr, "expect-exit: over the %d MiB limit\n", limit)
				os.Exit(1)
			}
		}
	}
}

// ptyCmds are the script commands that need a pseudo-terminal
// (scriptcmds_pty_test.go), where there is one.
var ptyCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}

func merged(a, b map[string]func(ts *testscript.TestScript, neg bool, args []string)) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	for k, v := range b {
		a[k] = v
	}
	return a
}
