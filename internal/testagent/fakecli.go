package testagent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// promptFile matches the path of a prompt file dtree wrote, where it
// stands in an argument.
var promptFile = regexp.MustCompile(`\S*dtree-prompt-[^\s/]*\.txt`)

// CLIMain stands in for a real agent CLI in the built-in CLIs' end-to-end
// tests: a script named like the CLI (codex, cursor-agent, …) runs
// `fakecli NAME ARGS...`, so dtree starts "codex" and this sees what codex
// would. It records each call in FAKECLI_DIR and prints a canned envelope:
//
//	NAME.N.args    the arguments, one a line; one holding a newline (a
//	               prompt) is written <prompt>, and dtree's prompt file
//	               where a path of it stands is written <prompt_file>
//	NAME.N.prompt  the prompt given in an argument or in the prompt file
//	NAME.N.stdin   all of stdin
//	NAME.N.promptfile  where dtree's prompt file was: "in the working
//	               directory" or "outside the working directory"; empty
//	               when there was none
//	NAME.N.env     for each variable FAKECLI_ENV names (comma-separated)
//	               "VAR=value", or "VAR unset"
//
// N counts the calls from 1. It then copies the file FAKECLI_STDOUT to
// stdout and FAKECLI_STDERR to stderr, in small writes, sleeps for
// FAKECLI_SLEEP_AFTER when it is set (a Go duration: a CLI that answers
// and never exits), and exits with FAKECLI_EXIT.
func CLIMain() int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fakecli NAME [ARGS...]")
		return 2
	}
	name, args := os.Args[1], os.Args[2:]
	if err := record(name, args); err != nil {
		fmt.Fprintln(os.Stderr, "fakecli:", err)
		return 2
	}
	for _, f := range []struct {
		env string
		w   io.Writer
	}{{"FAKECLI_STDOUT", os.Stdout}, {"FAKECLI_STDERR", os.Stderr}} {
		if path := os.Getenv(f.env); path != "" {
			b, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "fakecli:", err)
				return 2
			}
			for len(b) > 0 {
				k := min(len(b), 113)
				_, _ = f.w.Write(b[:k])
				b = b[k:]
			}
		}
	}
	if d, err := time.ParseDuration(os.Getenv("FAKECLI_SLEEP_AFTER")); err == nil {
		time.Sleep(d)
	}
	code, _ := strconv.Atoi(os.Getenv("FAKECLI_EXIT"))
	return code
}

func record(name string, args []string) error {
	dir := os.Getenv("FAKECLI_DIR")
	if dir == "" {
		return errors.New("FAKECLI_DIR is not set")
	}
	stdin, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var shown []string
	prompt, where := "", ""
	for _, a := range args {
		switch {
		case strings.Contains(a, "\n"):
			prompt, a = a, "<prompt>"
		case promptFile.MatchString(a):
			path := promptFile.FindString(a)
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			prompt, a = string(b), promptFile.ReplaceAllString(a, "<prompt_file>")
			where = "outside the working directory\n"
			if inWorkdir(path) {
				where = "in the working directory\n"
			}
		}
		shown = append(shown, a)
	}
	var env strings.Builder
	for v := range strings.SplitSeq(os.Getenv("FAKECLI_ENV"), ",") {
		if v == "" {
			continue
		}
		if val, ok := os.LookupEnv(v); ok {
			fmt.Fprintf(&env, "%s=%s\n", v, val)
		} else {
			fmt.Fprintf(&env, "%s unset\n", v)
		}
	}
	for n := 1; ; n++ {
		base := filepath.Join(dir, fmt.Sprintf("%s.%d.", name, n))
		f, err := os.OpenFile(base+"args", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = io.WriteString(f, strings.Join(shown, "\n")+"\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		for _, w := range []struct{ ext, content string }{{"prompt", prompt}, {"stdin", string(stdin)}, {"env", env.String()}, {"promptfile", where}} {
			if werr := os.WriteFile(base+w.ext, []byte(w.content), 0o644); err == nil {
				err = werr
			}
		}
		return err
	}
}

// inWorkdir reports whether path is in the current directory itself.
func inWorkdir(path string) bool {
	wd, err := os.Getwd()
	if err != nil {
		return false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return false
	}
	wd, err = filepath.EvalSymlinks(wd)
	return err == nil && dir == wd
}
