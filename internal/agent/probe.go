package agent

import (
	"context"
	"errors"
	"github.com/dtree-dev/dtree/internal/response"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/types"
)

// VersionTimeout is how long `dtree clis` waits for a CLI's --version. The
// node-based CLIs take 0.6–7.5 s to start cold (gemini, qwen, opencode, qodo,
// amp: readme/clis.md#dtree-clis); `dtree clis` runs all its probes at once,
// so the whole list takes at most about this long.
const VersionTimeout = 10 * time.Second

// Probe is what `dtree clis` found out about one CLI on this machine.
type Probe struct {
	Path    string // the binary's absolute path; "" when it is not found
	Binary  string // the name it was found under: Binary or one of AltBinaries
	Version string // the first line --version printed; "" when it gave none
	// VersionError says why there is no version: not installed, no answer
	// in time, an exit status (with the first line it printed).
	VersionError string
	// Slow says --version did not answer in time: the CLI may well work,
	// only slower to start than the probe waits.
	Slow bool
}

// ProbeVersion finds a CLI's binary and asks it for its version the way Run
// starts agents: no shell, stdin empty, env as an agent gets it, in a
// process group of its own that is killed whole when timeout is up. It
// runs BINARY with the definition's VersionArgs (--version when it has
// none) alone, never with its arguments, so no prompt is sent. The caller
// asks a custom CLI only when it has VersionArgs.
func ProbeVersion(ctx context.Context, def Definition, env []string, timeout time.Duration) Probe {
	var p Probe
	path, name, err := LookPath(def)
	if err != nil {
		p.VersionError = "not installed"
		return p
	}
	p.Path, p.Binary = path, name
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errNoAnswer)
	defer cancel()
	stdout, stderr := &tail{max: 4 << 10}, &tail{max: 4 << 10}
	args := def.VersionArgs
	if len(args) == 0 {
		args = []string{"--version"}
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = childEnv(env, def)
	cmd.Stdout, cmd.Stderr = tailWriter{stdout}, tailWriter{stderr}
	setProcessGroup(cmd)
	cmd.Cancel = func() error {
		killGroup(cmd.Process.Pid)
		_ = cmd.Process.Kill() // where there are no process groups
		return nil
	}
	cmd.WaitDelay = 100 * time.Millisecond
	if err := cmd.Start(); err != nil {
		p.VersionError = err.Error()
		return p
	}
	err = cmd.Wait()
	killGroup(cmd.Process.Pid) // what it left behind, holding a pipe or not
	var exit *exec.ExitError
	switch {
	case context.Cause(ctx) == errNoAnswer:
		p.VersionError = "no answer to --version within " + types.ShortDuration(timeout)
		p.Slow = true
		return p
	case errors.As(err, &exit):
		// What a failing --version prints is its complaint ("error:
		// unknown option"), not a version: it is the reason.
		p.VersionError = "--version exited with status " + strconv.Itoa(exit.ExitCode())
		if line := firstNonEmpty(versionLine(stderr.String()), versionLine(stdout.String())); line != "" {
			p.VersionError += ": " + line
		}
		return p
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		p.VersionError = err.Error()
		return p
	}
	p.Version = versionLine(stdout.String())
	if p.Version == "" {
		p.Version = versionLine(stderr.String())
	}
	if p.Version == "" {
		p.VersionError = "--version printed nothing"
	}
	return p
}

var errNoAnswer = errors.New("no answer")

// tailWriter keeps the end of a probe's output.
type tailWriter struct{ t *tail }

func (w tailWriter) Write(p []byte) (int, error) {
	w.t.add(p)
	return len(p), nil
}

// versionLine is the first non-blank line, escapes removed, kept short.
func versionLine(s string) string {
	for line := range strings.SplitSeq(response.StripANSI(s), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 80 {
				line = clip(line[:80])
			}
			return line
		}
	}
	return ""
}

// KeyVar is one of a CLI's API key variables and whether it is set.
type KeyVar struct {
	Name string `json:"name"`
	Set  bool   `json:"set"`
}

// Traits are what a definition says about a CLI, for `dtree clis`.
type Traits struct {
	// Prompt says where the prompt goes: "argv", "stdin" or "file".
	Prompt string
	// Long says where a prompt over MaxArgPrompt goes: "stdin", "file",
	// or "" when it cannot go anywhere.
	Long string
	// Usage are the figures its output can report (input_tokens,
	// output_tokens, cost_usd, duration_ms); empty when none.
	Usage []string
	// ModelFlag is the argument that carries the model ("--model={model}");
	// "" when there is none.
	ModelFlag string
	KeyVars   []KeyVar
}

// TraitsOf reads a CLI's traits from its definition; getenv tells which
// key variables are set.
func TraitsOf(e Entry, getenv func(string) string) Traits {
	def := e.Def
	var t Traits
	switch {
	case def.InProcess:
		t.Prompt, t.Long = "none", "none" // the replay agent reads no prompt
	case def.PromptVia == PromptStdin:
		t.Prompt, t.Long = "stdin", "stdin"
	case def.PromptVia == PromptFile:
		t.Prompt, t.Long = "file", "file"
	default:
		t.Prompt = "argv"
		switch {
		case def.StdinFallback:
			t.Long = "stdin"
		case hasPlaceholder(def.FallbackArgs, "{prompt_file}"):
			t.Long = "file"
		}
	}
	t.Usage = []string{}
	if f, err := formatOf(def); err == nil && f.reports != nil {
		t.Usage = slices.Clone(f.reports)
		if r, ok := builtinReports[def.Name]; ok && e.Builtin && !e.Custom {
			t.Usage = slices.Clone(r)
		}
	} else if def.Output == OutputJSON {
		for _, u := range []struct{ name, path string }{{usageInput, def.InputTokensPath}, {usageOutput, def.OutputTokensPath},
			{usageCost, def.CostPath}, {usageDuration, def.DurationPath}} {
			if u.path != "" {
				t.Usage = append(t.Usage, u.name)
			}
		}
	}
	for i, a := range def.Args {
		if !strings.Contains(a, "{model}") {
			continue
		}
		t.ModelFlag = a
		if a == "{model}" && i > 0 && strings.HasPrefix(def.Args[i-1], "-") {
			t.ModelFlag = def.Args[i-1] + " " + a
		}
		break
	}
	t.KeyVars = []KeyVar{}
	for _, k := range def.KeyVars {
		t.KeyVars = append(t.KeyVars, KeyVar{Name: k, Set: getenv(k) != ""})
	}
	return t
}
