package agent

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// invocation is a Definition's argv filled in for one prompt.
type invocation struct {
	args    []string
	shown   []string // args with the prompt elided, for logs
	stdin   string
	file    string // the prompt file, if any
	cleanup func()
}

// prepare builds the argv, choosing where the prompt goes: argv, stdin or
// a file. A prompt over MaxArgPrompt for an argv CLI goes on stdin with
// FallbackArgs when the CLI reads stdin (or, without FallbackArgs, Args
// minus the elements holding {prompt}), else to a file when FallbackArgs
// has {prompt_file}. The file is in the temporary directory, or in
// workdir (the agent's) for a CLI with PromptFileInWorkdir.
func prepare(def Definition, prompt, model, workdir string) (invocation, error) {
	inv := invocation{cleanup: func() {}}
	tmpl := def.Args
	switch def.PromptVia {
	case PromptArg, "":
		// A prompt over the limit cannot be an argument; one that starts
		// with '-' and is an argument of its own could be taken for an
		// option, so it goes the same other way when there is one.
		long := len(prompt) > MaxArgPrompt
		dash := strings.HasPrefix(prompt, "-") && slices.Contains(def.Args, "{prompt}")
		if !long && !dash {
			break
		}
		switch {
		case def.StdinFallback && def.FallbackArgs != nil:
			tmpl, inv.stdin = def.FallbackArgs, prompt
		case def.StdinFallback:
			tmpl = slices.DeleteFunc(slices.Clone(def.Args), func(a string) bool {
				return strings.Contains(a, "{prompt}")
			})
			inv.stdin = prompt
		case hasPlaceholder(def.FallbackArgs, "{prompt_file}"):
			tmpl = def.FallbackArgs
		case long:
			return inv, fmt.Errorf("prompt of %d bytes is too long for argv (max %d) and CLI %s has neither stdin_fallback nor {prompt_file} in fallback_args",
				len(prompt), MaxArgPrompt, def.Name)
		}
	case PromptStdin:
		inv.stdin = prompt
	case PromptFile:
		if !hasPlaceholder(tmpl, "{prompt_file}") {
			return inv, fmt.Errorf("CLI %s takes its prompt from a file but its args have no {prompt_file}", def.Name)
		}
	default:
		return inv, fmt.Errorf("CLI %s: unknown prompt_via %q", def.Name, def.PromptVia)
	}

	file := ""
	if hasPlaceholder(tmpl, "{prompt_file}") {
		dir, pattern := "", "dtree-prompt-*.txt"
		if def.PromptFileInWorkdir {
			// Hidden, and named by its absolute path, which a CLI
			// confined to its workspace can check is inside.
			// The pid says whose it is (RemoveStalePromptFiles).
			dir, pattern = workdir, fmt.Sprintf("%s%d-*.txt", promptFilePrefix, os.Getpid())
			if dir == "" {
				dir = "."
			}
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs
			}
		}
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return inv, fmt.Errorf("write prompt file: %w", err)
		}
		file = f.Name()
		inv.file = file
		inv.cleanup = func() { _ = os.Remove(file) }
		_, err = f.WriteString(prompt)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			inv.cleanup()
			return inv, fmt.Errorf("write prompt file: %w", err)
		}
	}
	tmpl = dropModel(tmpl, model)
	shownPrompt := fmt.Sprintf("<prompt: %d bytes>", len(prompt))
	if def.ShowPrompt {
		shownPrompt = prompt
	}
	for _, a := range tmpl {
		inv.args = append(inv.args, fillArg(a, prompt, file, model))
		inv.shown = append(inv.shown, fillArg(a, shownPrompt, file, model))
	}
	return inv, nil
}

// fillArg replaces {prompt}, {prompt_file} and {model} in an argument in
// one pass, so a prompt holding "{model}" stays as written. It is what a
// strings.Replacer of the three does, without building one for every
// argument of every call.
func fillArg(arg, prompt, file, model string) string {
	i := strings.IndexByte(arg, '{')
	if i < 0 {
		return arg
	}
	var b strings.Builder
	for ; i >= 0; i = strings.IndexByte(arg, '{') {
		b.WriteString(arg[:i])
		arg = arg[i:]
		switch {
		case strings.HasPrefix(arg, "{prompt}"):
			b.WriteString(prompt)
			arg = arg[len("{prompt}"):]
		case strings.HasPrefix(arg, "{prompt_file}"):
			b.WriteString(file)
			arg = arg[len("{prompt_file}"):]
		case strings.HasPrefix(arg, "{model}"):
			b.WriteString(model)
			arg = arg[len("{model}"):]
		default:
			b.WriteByte('{')
			arg = arg[1:]
		}
	}
	b.WriteString(arg)
	return b.String()
}

// modelFor is the model to pass the CLI: any, or for a CLI that takes only
// some (Definition.ModelValues) one of those as listed, else "" (none).
func modelFor(def Definition, model string) string {
	if model == "" || len(def.ModelValues) == 0 {
		return model
	}
	for _, v := range def.ModelValues {
		if strings.EqualFold(v, strings.TrimSpace(model)) {
			return v
		}
	}
	return ""
}

// dropModel removes the elements holding {model} when there is no model,
// and a flag just before a bare "{model}" ("-m", "{model}") with it.
func dropModel(args []string, model string) []string {
	if model != "" {
		return args
	}
	var out []string
	for i, a := range args {
		if strings.Contains(a, "{model}") {
			continue
		}
		if i+1 < len(args) && args[i+1] == "{model}" && strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

func hasPlaceholder(args []string, p string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, p) })
}

// childEnv is base minus the definition's UnsetEnv, plus its Env, plus
// what keeps CLIs from printing colour and terminal control codes, plus its
// EnvDefaults that base does not set (even to "": a value the user set
// empty is theirs too).
func childEnv(base []string, def Definition) []string {
	set := map[string]string{"NO_COLOR": "1", "TERM": "dumb"}
	for k, v := range def.EnvDefaults {
		if !slices.ContainsFunc(base, func(kv string) bool { return strings.HasPrefix(kv, k+"=") }) {
			set[k] = v
		}
	}
	for k, v := range def.Env {
		set[k] = v
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok || slices.Contains(def.UnsetEnv, name) {
			continue
		}
		env = append(env, kv)
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		env = append(env, k+"="+set[k])
	}
	return env
}

// promptFilePrefix starts the name of a prompt file in the workdir:
// ".dtree-prompt-PID-RANDOM.txt", PID the dtree that wrote it.
const promptFilePrefix = ".dtree-prompt-"

// RemoveStalePromptFiles removes the prompt files that a dtree killed
// during an agent call left in dir: those whose dtree is no longer
// running. Call it before this dtree writes any. A file of a dtree still running (another run in the same
// directory) is left alone. It returns the names removed.
func RemoveStalePromptFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, promptFilePrefix+"*.txt"))
	var removed []string
	for _, f := range files {
		rest := strings.TrimPrefix(filepath.Base(f), promptFilePrefix)
		pidText, _, _ := strings.Cut(rest, "-")
		if pid, err := strconv.Atoi(pidText); err == nil && pid != os.Getpid() && processAlive(pid) {
			continue
		}
		if os.Remove(f) == nil {
			removed = append(removed, filepath.Base(f))
		}
	}
	return removed
}

// addMaxCost adds the CLI's budget arguments (Definition.MaxCostArgs)
// with "{max_cost}" replaced by usd, when usd is over 0. It is written
// with up to 4 decimals, rounded down, and at least $0.0001: a CLI is
// never told more than is left.
func (inv *invocation) addMaxCost(def Definition, usd float64) {
	if usd <= 0 || math.IsNaN(usd) || len(def.MaxCostArgs) == 0 {
		return
	}
	v := strconv.FormatFloat(max(math.Floor(usd*1e4)/1e4, 0.0001), 'f', -1, 64)
	for _, a := range def.MaxCostArgs {
		a = strings.ReplaceAll(a, "{max_cost}", v)
		inv.args = append(inv.args, a)
		inv.shown = append(inv.shown, a)
	}
}

// addMaxTurns adds the CLI's max_turns arguments (Definition.MaxTurnsArgs)
// with "{max_turns}" replaced by n, when n is over 0.
func (inv *invocation) addMaxTurns(def Definition, n int) {
	if n <= 0 {
		return
	}
	v := strconv.Itoa(n)
	for _, a := range def.MaxTurnsArgs {
		a = strings.ReplaceAll(a, "{max_turns}", v)
		inv.args = append(inv.args, a)
		inv.shown = append(inv.shown, a)
	}
}
