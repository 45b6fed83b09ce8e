package vars

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// hostile are agent outputs that would be code, or break the command
// around them, if pasted into a command.
var hostile = map[string]string{
	"dollar-paren":   "$(touch PWNED)",
	"backticks":      "`touch PWNED`",
	"single-quote":   "it's'; touch PWNED; '",
	"double-quote":   `say "hi"; touch PWNED; "`,
	"backslash":      `a\b\\c\`,
	"backslash-end":  `x\`,
	"newlines":       "line 1\nline 2\n\n",
	"lead-newline":   "\nx",
	"END":            "x\nEND\ntouch PWNED\n",
	"EOF":            "EOF\ntouch PWNED",
	"dash-n":         "-n",
	"dash-e":         "-e \\n",
	"glob-star":      "*",
	"glob-class":     "[a-z]* ?",
	"braces":         "{a,b} ~ ~root",
	"param":          "$HOME ${HOME} $1 $@",
	"escaped-param":  `\$(touch PWNED)`,
	"ansi-c":         `$'\x41' $"x"`,
	"semicolons":     "; touch PWNED; # ",
	"pipe":           "| touch PWNED &",
	"empty":          "",
	"spaces":         "  a   b  ",
	"tab":            "a\tb",
	"hash":           "# not a comment",
	"quote-mix":      `'"'"'` + "`" + `"'`,
	"utf8":           "héllo ✓ 日本",
	"8KiB":           strings.Repeat("$(touch PWNED)'\"`\\\nEND\n", 8<<10/24),
	"over-one-chunk": strings.Repeat("ab'\"$`\n", (MaxEnvChunk+100)/7),
}

// position is one place an author may write a reference, and what the
// command must print for a value v.
type positionCase struct {
	name string
	cmd  string
	want func(v string) string
	bash bool // bash only ($'…')
}

func trimNL(v string) string { return strings.TrimRight(v, "\n") }
func same(v string) string   { return v }

var positions = []positionCase{
	{name: "bare", cmd: `printf '%s' {{node.a.output}}`, want: same},
	{name: "bare-joined", cmd: `printf '%s' x{{node.a.output}}y`, want: func(v string) string { return "x" + v + "y" }},
	{name: "double", cmd: `printf '%s' "{{node.a.output}}"`, want: same},
	{name: "double-text", cmd: `printf '%s' "got: {{node.a.output}}!"`, want: func(v string) string { return "got: " + v + "!" }},
	{name: "single", cmd: `printf '%s' '{{node.a.output}}'`, want: same},
	{name: "single-text", cmd: `printf '%s' 'got: {{node.a.output}} $x'`, want: func(v string) string { return "got: " + v + " $x" }},
	{name: "single-in-double", cmd: `printf '%s' "'{{node.a.output}}'"`, want: func(v string) string { return "'" + v + "'" }},
	{name: "heredoc", cmd: "cat <<END\n{{node.a.output}}\nEND", want: func(v string) string { return v + "\n" }},
	{name: "heredoc-text", cmd: "cat <<END\ngot: '{{node.a.output}}' \"x\"\nEND\necho after", want: func(v string) string { return "got: '" + v + "' \"x\"\nafter\n" }},
	{name: "heredoc-dash", cmd: "cat <<-END\n\t{{node.a.output}}\n\tEND", want: func(v string) string { return v + "\n" }},
	{name: "heredoc-EOF", cmd: "cat > out.txt <<EOF\n{{node.a.output}}\nEOF\ncat out.txt", want: func(v string) string { return v + "\n" }},
	{name: "dollar-paren", cmd: `printf '%s' "$(printf '%s' {{node.a.output}})"`, want: trimNL},
	{name: "dollar-paren-double", cmd: `printf '%s' "$(printf '%s' "{{node.a.output}}")"`, want: trimNL},
	{name: "dollar-paren-single", cmd: `printf '%s' "$(printf '%s' '{{node.a.output}}')"`, want: trimNL},
	{name: "dollar-paren-bare", cmd: `x=$(printf '%s' {{node.a.output}}); printf '%s' "$x"`, want: trimNL},
	{name: "dollar-paren-heredoc", cmd: "printf '%s' \"$(cat <<END\n{{node.a.output}}\nEND\n)\"", want: trimNL},
	{name: "backticks", cmd: "x=`printf '%s' {{node.a.output}}`; printf '%s' \"$x\"", want: trimNL},
	{name: "backticks-in-double", cmd: "printf '%s' \"`printf '%s' {{node.a.output}}`\"", want: trimNL},
	{name: "backticks-double", cmd: "printf '%s' \"`printf '%s' \"{{node.a.output}}\"`\"", want: trimNL},
	{name: "backticks-single", cmd: "printf '%s' \"`printf '%s' '{{node.a.output}}'`\"", want: trimNL},
	{name: "assign", cmd: `x={{node.a.output}}; printf '%s' "$x"`, want: same},
	{name: "assign-double", cmd: `x="{{node.a.output}}"; printf '%s' "$x"`, want: same},
	{name: "case", cmd: `case {{node.a.output}} in *) printf '%s' {{node.a.output}};; esac`, want: same},
	{name: "redirect", cmd: `printf '%s' ok > {{node.a.output}}x; cat -- ./{{node.a.output}}x`, want: func(string) string { return "ok" }},
	{name: "twice", cmd: `printf '%s|%s' {{node.a.output}} "{{ node.a.output }}"`, want: func(v string) string { return v + "|" + v }},
	{name: "comment", cmd: "printf '%s' ok # {{node.a.output}}", want: func(string) string { return "ok" }},
	{name: "ansi-c", cmd: `printf '%s' $'a\t{{node.a.output}}b'`, want: func(v string) string { return "a\t" + v + "b" }, bash: true},
}

// TestCommandHostileCorpus runs every hostile value in every position
// through /bin/sh (and bash, where there is one): each must arrive as
// text, and nothing may run from it.
func TestCommandHostileCorpus(t *testing.T) {
	t.Parallel()
	shells := []string{"/bin/sh"}
	if p, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, p)
	}
	for _, pc := range positions {
		c, probs := ParseCommand(pc.cmd)
		require.Empty(t, probs, pc.name)
		for name, v := range hostile {
			if pc.name == "redirect" && (strings.ContainsAny(v, "/\x00") || v == "" || len(v) > 200) {
				continue // not a file name
			}
			for _, sh := range shells {
				if pc.bash && sh == "/bin/sh" {
					continue
				}
				t.Run(pc.name+"/"+name+"/"+filepath.Base(sh), func(t *testing.T) {
					t.Parallel()
					dir := t.TempDir()
					script, env := c.Script([]string{v})
					cmd := exec.Command(sh, "-c", script)
					cmd.Dir, cmd.Env = dir, append(env, "PATH="+os.Getenv("PATH"), "HOME=/nonexistent")
					out, err := cmd.CombinedOutput()
					require.NoError(t, err, "script %q: %s", script, out)
					assert.Equal(t, pc.want(v), string(out), "script %q", script)
					assert.NoFileExists(t, filepath.Join(dir, "PWNED"), "script %q", script)
				})
			}
		}
	}
}

func TestCommandScript(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cmd, want string }{
		{"make test", "make test"},
		// The table of readme/context.md#in-a-command.
		{`git tag -a v{{var.version}}`, `git tag -a v"${DTREE_REF_1}"`},
		{`echo "$(echo {{var.x}})"`, `echo "$(echo "${DTREE_REF_1}")"`},
		{"cat <<-END\n\t{{var.x}}\n\tEND", "cat <<-END\n\t${DTREE_REF_1}\n\tEND"},
		{`echo {{var.v}}`, `echo "${DTREE_REF_1}"`},
		{`echo "got: {{var.v}}"`, `echo "got: ${DTREE_REF_1}"`},
		{`echo 'got: {{var.v}}'`, `echo 'got: '"${DTREE_REF_1}"''`},
		{`echo $'a{{var.v}}'`, `echo $'a'"${DTREE_REF_1}"$''`},
		{"cat <<END\n{{var.v}}\nEND", "cat <<END\n${DTREE_REF_1}\nEND"},
		{`echo {{var.v}} {{run.id}} {{ var.v }}`, `echo "${DTREE_REF_1}" "${DTREE_REF_2}" "${DTREE_REF_1}"`},
		{"echo ok # {{var.v}}", "echo ok # {{var.v}}"},
		{"if true; then\n  # {{var.v}}\n  echo {{var.v}}\nfi # {{var.v}}\n# {{var.v}}", "if true; then\n  # {{var.v}}\n  echo \"${DTREE_REF_1}\"\nfi # {{var.v}}\n# {{var.v}}"},
		{"echo \"$(\n# {{var.v}}\necho {{var.v}})\"", "echo \"$(\n# {{var.v}}\necho \"${DTREE_REF_1}\")\""},
		{`echo {{other.x}} {{var.v}}`, `echo {{other.x}} "${DTREE_REF_1}"`},
	} {
		c, probs := ParseCommand(tc.cmd)
		require.Empty(t, probs, tc.cmd)
		got, _ := c.Script(make([]string, len(c.Refs)))
		assert.Equal(t, tc.want, got, tc.cmd)
	}
}

// TestCommandProblems: where no quoting is safe, ParseCommand says so
// and names the safe form.
func TestCommandProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cmd, why, hint string }{
		{"cat <<'END'\n{{var.v}}\nEND", "quoted, <<'END'", "unquote the here-document's delimiter"},
		{"cat <<\"END\"\n{{var.v}}\nEND", "quoted, <<'END'", "printf"},
		{"cat <<\\END\n{{var.v}}\nEND", "quoted, <<'END'", "<<END"},
		{`echo \{{var.v}}`, "after a \\", "<<END"},
		{"echo `echo \\{{var.v}}`", "after a \\", "<<END"},
		{`echo "\{{var.v}}"`, "after a \\", "<<END"},
		{`echo $'\{{var.v}}'`, "after a \\", "<<END"},
		{`echo $'a\\\{{var.v}}'`, "after a \\", "<<END"},
		{`echo $(( {{var.v}} + 1 ))`, "arithmetic", "[ {{…}} -eq 1 ]"},
		{`(( {{var.v}} > 1 ))`, "arithmetic", "[ {{…}} -eq 1 ]"},
		{`[[ {{var.v}} -eq 1 ]]`, "as a number", "[ {{…}} -eq 1 ]"},
		{`a[{{var.v}}]=1`, "array index", "test"},
		{`echo "${x:-{{var.v}}}"`, "another parameter expansion", "set a shell variable first"},
		{`eval "echo {{var.v}}"`, "eval", "argument"},
		{`declare -i n={{var.v}}`, "integer variable (declare -i)", "[ {{…}} -eq 1 ]"},
		{`local -ri n="{{var.v}}"`, "integer variable (local -i)", "[ {{…}} -eq 1 ]"},
		{"echo `echo \\`echo {{var.v}}\\``", "nested backquotes", "$(…)"},
		{"cat <<{{var.v}}\nx\n", "expansions not allowed in heredoc words", "shell syntax"},
		{`echo "{{var.v}}`, "does not parse", "shell syntax"},
		// Builtins that run an argument as code, however their name is
		// written.
		{`trap {{var.v}} EXIT`, "trap, which runs its argument as shell code", "pass it to a command"},
		{`trap 'echo {{var.v}}' EXIT`, "trap", "pass it to a command"},
		{`trap "echo {{var.v}}" EXIT`, "trap", "pass it to a command"},
		{"alias x={{var.v}}; x", "alias, whose value the shell runs", "pass it to a command"},
		{`command eval {{var.v}}`, "eval", "pass it to a command"},
		{`command -p eval {{var.v}}`, "eval", "pass it to a command"},
		{`builtin eval {{var.v}}`, "eval", "pass it to a command"},
		{`"eval" {{var.v}}`, "eval", "pass it to a command"},
		{`e\val {{var.v}}`, "eval", "pass it to a command"},
		{`'let' x={{var.v}}`, "arithmetic (let)", "[ {{…}} -eq 1 ]"},
		// A variable's name, whose array index bash evaluates: a[$(cmd)].
		{`read -r {{var.v}} <<< x`, "an argument of read, which takes variables' names", "x={{…}}"},
		{`unset {{var.v}}`, "an argument of unset", "a variable of your own"},
		{`mapfile -C {{var.v}} a < f`, "an argument of mapfile", "a variable of your own"},
		{`compgen -W {{var.v}} x`, "an argument of compgen", "a variable of your own"},
		{`printf -v {{var.v}} '%s' x`, "a variable's name (printf -v)", "a variable of your own"},
		{`printf -v{{var.v}} '%s' x`, "a variable's name (printf -v)", "a variable of your own"},
		{`wait -n -p {{var.v}}`, "(wait -p)", "a variable of your own"},
		{`[ -v {{var.v}} ]`, "([ -v)", "a variable of your own"},
		{`test -v "{{var.v}}"`, "(test -v)", "a variable of your own"},
		{`[[ -v {{var.v}} ]]`, "name in [[ -v … ]]", "a variable of your own"},
		{`declare {{var.v}}`, "a variable's name for declare", "a variable of your own"},
		{`export "{{var.v}}"`, "a variable's name for export", "a variable of your own"},
		{`"declare" {{var.v}}`, "an argument of declare", "a variable of your own"},
		{`declare -n r={{var.v}}`, "name reference (declare -n)", "a variable of your own"},
		{`local -a x="{{var.v}}"`, "assigned whole to an array (local -a)", "a variable of your own"},
		{`readonly -A x={{var.v}}`, "assigned whole to an array (readonly -A)", "a variable of your own"},
		{`a=([{{var.v}}]=1)`, "array index", "test"},
		{`PS4={{var.v}}; set -x`, "assigned to PS4, whose $(…) bash runs", "printf"},
		{`export PROMPT_COMMAND="{{var.v}}"`, "assigned to PROMPT_COMMAND", "printf"},
	} {
		_, probs := ParseCommand(tc.cmd)
		require.Len(t, probs, 1, tc.cmd)
		assert.Equal(t, "{{var.v}}", probs[0].Ref.Raw)
		assert.Contains(t, probs[0].Why, tc.why, tc.cmd)
		assert.Contains(t, probs[0].Hint, tc.hint, tc.cmd)
	}
}

// TestCommandSafeBesideBuiltins: a value is data in the positions beside
// those that take code or names: an assignment's value, an array's
// elements, a here-string of read, printf's arguments, test's operands.
func TestCommandSafeBesideBuiltins(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{
		`export X={{var.v}}`, `X={{var.v}} make`, `declare -a x=({{var.v}})`, `local x="{{var.v}}"`,
		`export -n X={{var.v}}`, `read -r x <<< {{var.v}}`, `printf '%s\n' {{var.v}}`, `printf -v x '%s' {{var.v}}`,
		`[ -n {{var.v}} ]`, `test {{var.v}} = -v`, `[[ {{var.v}} == x* ]]`, `command printf '%s' {{var.v}}`,
		`echo $'a{{var.v}}'`, `wait {{var.v}}`, `trapper {{var.v}}`, `echo trap {{var.v}}`,
	} {
		_, probs := ParseCommand(cmd)
		assert.Empty(t, probs, cmd)
	}
}

// TestCommandLinear: a huge value and a huge command cost time in
// proportion to their size: a script's size does not grow with a value's
// size times its references. Not parallel, so the corpus does not time
// it; each size's best of three runs.
func TestCommandLinear(t *testing.T) {
	cost := func(n int) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			cmd := strings.Repeat(`echo "{{var.a}}" '{{node.b.output}}' {{run.id}}; `, n)
			v := strings.Repeat("x'\"$`\n", n*20) // 2000: 240 KB, 32000: 3.8 MB
			start := time.Now()
			c, probs := ParseCommand(cmd)
			require.Empty(t, probs)
			script, env := c.Script([]string{v, v, v})
			best = min(best, time.Since(start))
			require.Less(t, len(script), 2*len(cmd)+1000)
			require.Equal(t, 3*((len(v)+MaxEnvChunk-1)/MaxEnvChunk), len(env))
		}
		return best
	}
	small, big := cost(2000), cost(32000)
	// 16 times the input: linear is 16 times the time; allow 3x over that
	// for a loaded machine, far under the 256 of a quadratic cost.
	assert.Less(t, big, 48*small+50*time.Millisecond, "2000: %v, 32000: %v", small, big)
}

// FuzzParseCommand: no command makes ParseCommand or Script panic, and
// in the script of a command without problems every expansion of a
// reference's variable is in "…" or a here-document's body, where the
// shell expands it once and never reads its value as code.
func FuzzParseCommand(f *testing.F) {
	for _, pc := range positions {
		f.Add(pc.cmd)
	}
	for _, s := range []string{"cat <<'END'\n{{var.v}}\nEND", `echo $(( {{var.v}} ))`, "echo `echo \\`echo {{var.v}}\\``",
		`echo "${x:-{{var.v}}}"`, `f() { echo {{var.v}}; }; f`, `[[ {{var.v}} == x* ]] && echo {{run.id}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		c, probs := ParseCommand(cmd)
		values := make([]string, len(c.Refs))
		for k := range values {
			values[k] = "$(x)'\"`\nEND\n"
		}
		script, _ := c.Script(values)
		if len(probs) > 0 || len(c.Refs) == 0 || strings.Contains(cmd, RefVarPrefix) || !utf8.ValidString(cmd) {
			return
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
		if err != nil {
			t.Fatalf("command %q parses, its script %q does not: %v", cmd, script, err)
		}
		var stack []syntax.Node
		syntax.Walk(file, func(n syntax.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if pe, ok := n.(*syntax.ParamExp); ok && strings.HasPrefix(pe.Param.Value, RefVarPrefix) {
				parent := stack[len(stack)-1]
				_, dq := parent.(*syntax.DblQuoted)
				hdoc := false
				if w, ok := parent.(*syntax.Word); ok && len(stack) > 1 {
					if r, ok := stack[len(stack)-2].(*syntax.Redirect); ok && r.Hdoc == w {
						hdoc = true
					}
				}
				if !dq && !hdoc {
					t.Fatalf("command %q: script %q expands %s outside \"…\" and a here-document", cmd, script, pe.Param.Value)
				}
			}
			stack = append(stack, n)
			return true
		})
	})
}
