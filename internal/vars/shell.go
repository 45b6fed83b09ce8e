package vars

import (
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A reference in a command is never pasted into it (readme/context.md#in-a-command):
// its value goes to the command in an environment variable, DTREE_REF_N,
// and the reference becomes an expansion of that variable written for
// the quoting it stands in, which a shell parser finds. The shell expands
// a variable once and never reads its value as code, so whatever an agent
// printed arrives as text.

// RefVarPrefix starts the name of each variable that carries a
// reference's value to a command.
const RefVarPrefix = "DTREE_REF_"

// MaxEnvChunk bounds one environment string of a value: Linux refuses
// a single string over 128 KiB (MAX_ARG_STRLEN), so a longer value is cut
// into DTREE_REF_N_1, DTREE_REF_N_2, …, which the script joins into
// DTREE_REF_N before the command (DTREE_REF_N="${DTREE_REF_N_1}…"; ).
const MaxEnvChunk = 64 << 10

// position is the quoting a reference stands in.
type position int

const (
	posBare         position = iota // an unquoted word: "${V}"
	posDouble                       // inside "…" or an unquoted here-document: ${V}
	posSingle                       // inside '…': '"${V}"'
	posSingleDollar                 // inside $'…': '"${V}"$'
	posComment                      // in a comment: left as written
)

// Command is a command step's command read by a shell parser, ready to
// be given the references' values (Script).
type Command struct {
	src   string // the command with each reference replaced by ${DTREE_REF_N}
	slots []slot
	// Refs are the distinct references, in order of first use: Refs[k]
	// is carried by DTREE_REF_{k+1}.
	Refs []Ref
}

// slot is one reference of the command.
type slot struct {
	start, end int // its placeholder in src
	ref        int // index in Refs
	pos        position
	raw        string // as written
	done       bool
}

// Problem is a reference written where no quoting can keep its value
// from being read as code, or where dtree cannot tell how the shell
// reads it: the lint error unsafe_reference.
type Problem struct {
	Ref  Ref
	Why  string // "is in a quoted here-document (<<'END'), where the shell expands nothing"
	Hint string // the safe form
}

func (p Problem) Error() string { return p.Ref.Raw + " " + p.Why }

// ParseCommand reads cmd with a shell parser (bash's grammar, a superset
// of /bin/sh's) and finds where each reference stands. It returns the
// references written where no form is safe; a command with problems must
// not run. Its time is linear in cmd.
func ParseCommand(cmd string) (*Command, []Problem) {
	c := &Command{src: cmd}
	refs := Refs(cmd)
	if len(refs) == 0 {
		return c, nil
	}
	var b strings.Builder
	b.Grow(len(cmd) + 8*len(refs))
	index := map[string]int{}
	last := 0
	for _, r := range refs {
		key := r.NS + "\x00" + r.Name + "\x00" + r.Field
		k, ok := index[key]
		if !ok {
			k = len(c.Refs)
			index[key] = k
			c.Refs = append(c.Refs, r)
		}
		b.WriteString(cmd[last:r.Start])
		s := slot{start: b.Len(), ref: k, raw: r.Raw}
		b.WriteString("${" + RefVarPrefix + strconv.Itoa(k+1) + "}")
		s.end = b.Len()
		c.slots = append(c.slots, s)
		last = r.End
	}
	b.WriteString(cmd[last:])
	c.src = b.String()

	var probs []Problem
	problem := func(i int, why, hint string) {
		if !c.slots[i].done {
			c.slots[i].done = true
			probs = append(probs, Problem{Ref: c.refOf(i), Why: why, Hint: hint})
		}
	}
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(c.src), "")
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(syntax.ParseError); ok {
			msg = pe.Text
		}
		for i := range c.slots {
			problem(i, "is in a command that does not parse as a shell command ("+msg+"), so dtree cannot tell how the shell would read it",
				"fix the command's shell syntax")
		}
		return c, probs
	}
	c.walk(f, problem)
	for i := range c.slots {
		problem(i, "stands where dtree cannot tell how the shell reads it", safeForms)
	}
	return c, probs
}

// safeForms is the hint of a reference with no safe form.
const safeForms = `write it outside quotes, inside "…" or '…', in $(…), or in a here-document whose delimiter is not quoted (<<END)`

func (c *Command) refOf(i int) Ref {
	r := c.Refs[c.slots[i].ref]
	r.Raw = c.slots[i].raw
	return r
}

// frame is a node on the walk's path, with what its place means for a
// reference under it.
type frame struct {
	node   syntax.Node
	unsafe string // why no reference under it can be safe; "" if none
	hint   string
	bq     int  // backquoted command substitutions around it
	hdoc   bool // a here-document's body (a Word), whose expansions are as in "…"
}

// walk finds the quoting of each slot.
func (c *Command) walk(f *syntax.File, problem func(i int, why, hint string)) {
	// slotsIn calls fn with each slot whose placeholder starts in [from, to).
	slotsIn := func(from, to int, fn func(i int)) {
		for i := c.firstSlot(from); i < len(c.slots) && c.slots[i].start < to; i++ {
			fn(i)
		}
	}
	stack := []frame{{}}
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		p := stack[len(stack)-1]
		fr := frame{node: n, unsafe: p.unsafe, hint: p.hint, bq: p.bq}
		from, to := int(n.Pos().Offset()), int(n.End().Offset())
		switch x := n.(type) {
		case *syntax.ParamExp:
			if i, ok := c.slotStarting(from); ok && to == c.slots[i].end && !c.slots[i].done {
				if from > 0 && c.src[from-1] == '\\' {
					// In backquotes \$ is $; any backslash before a
					// reference is an escape whose layers dtree does not
					// rewrite.
					problem(i, unexpanded, unexpandedHint)
					return false
				}
				c.place(i, p, problem)
				return false
			}
			if fr.unsafe == "" {
				fr.unsafe, fr.hint = "is inside another parameter expansion (${…})",
					`set a shell variable first and use it there: v={{…}}; echo "${x:-$v}"`
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
			fr.unsafe, fr.hint = "is in shell arithmetic, which bash evaluates as code ($(( a[$(cmd)] )) runs cmd)", arithHint
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				fr.unsafe, fr.hint = "is compared as a number in [[ … ]], which bash evaluates as arithmetic, as code", arithHint
			}
		case *syntax.DeclClause:
			flags := ""
			for _, a := range x.Args {
				if f := a.Value; a.Naked && f != nil && strings.HasPrefix(f.Lit(), "-") {
					flags += f.Lit()[1:]
				}
			}
			if strings.Contains(flags, "i") {
				fr.unsafe, fr.hint = "is assigned to an integer variable ("+x.Variant.Value+" -i), which bash evaluates as arithmetic, as code", arithHint
			}
			decl := x.Variant.Value
			nameref := strings.Contains(flags, "n") && decl != "export" // export -n unexports
			for _, a := range x.Args {
				w, why := a.Value, ""
				switch {
				case w == nil:
				case a.Naked && !strings.HasPrefix(w.Lit(), "-"):
					// declare "$v": a name, or a whole NAME=VALUE
					why = "is a variable's name for " + decl + ", " + nameWhy
				case a.Naked:
				case nameref:
					why = "is assigned to a name reference (" + decl + " -n), whose value is a variable's name: " + nameWhy
				case strings.ContainsAny(flags, "aA"):
					f := "-a"
					if strings.Contains(flags, "A") {
						f = "-A"
					}
					why = "is assigned whole to an array (" + decl + " " + f + "), which bash reads as (…), its $(…) run"
				}
				if why != "" {
					slotsIn(int(w.Pos().Offset()), int(w.End().Offset()), func(i int) { problem(i, why, nameHint) })
				}
			}
		case *syntax.CallExpr:
			c.call(x, &fr, slotsIn, problem)
		case *syntax.UnaryTest:
			if (x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar) && fr.unsafe == "" {
				fr.unsafe, fr.hint = "is a variable's name in [[ "+x.Op.String()+" … ]], "+nameWhy, nameHint
			}
		case *syntax.Assign:
			if x.Name != nil && promptVars[x.Name.Value] && x.Value != nil {
				slotsIn(int(x.Value.Pos().Offset()), int(x.Value.End().Offset()), func(i int) {
					problem(i, "is assigned to "+x.Name.Value+", whose $(…) bash runs each time it prints it (set -x prints PS4)",
						"do not put a value in "+x.Name.Value+": print it with printf '%s\\n' {{…}}")
				})
			}
		case *syntax.CmdSubst:
			if x.Backquotes {
				fr.bq++
				if fr.bq > 1 && fr.unsafe == "" {
					fr.unsafe, fr.hint = "is in nested backquotes (`…\\`…\\`…`), whose quoting dtree does not rewrite",
						"write the inner command substitution as $(…)"
				}
			}
		case *syntax.Word:
			switch par := p.node.(type) {
			case *syntax.Redirect:
				fr.hdoc = x == par.Hdoc // a delimiter with an expansion does not parse
			case *syntax.Assign:
				if par.Index == syntax.ArithmExpr(x) && fr.unsafe == "" {
					fr.unsafe, fr.hint = "is an array index, which bash evaluates as arithmetic, as code", arithHint
				}
			case *syntax.ArrayElem: // a=([i]=v)
				if par.Index == syntax.ArithmExpr(x) && fr.unsafe == "" {
					fr.unsafe, fr.hint = "is an array index, which bash evaluates as arithmetic, as code", arithHint
				}
			}
		case *syntax.SglQuoted:
			pos := posSingle
			if x.Dollar {
				pos = posSingleDollar
			}
			slotsIn(from, to, func(i int) {
				if fr.unsafe != "" {
					problem(i, fr.unsafe, fr.hint)
					return
				}
				if x.Dollar && c.src[c.slots[i].start-1] == '\\' {
					// $'\{{…}}': the ' that would end $'…' before the
					// expansion is escaped, and the quoting after it shifts.
					problem(i, unexpanded, unexpandedHint)
					return
				}
				c.slots[i].pos, c.slots[i].done = pos, true
			})
		case *syntax.Comment:
			slotsIn(from, to, func(i int) { // stays as written
				c.slots[i].pos, c.slots[i].done = posComment, true
			})
		case *syntax.Lit:
			slotsIn(from, to, func(i int) {
				if fr.unsafe != "" {
					problem(i, fr.unsafe, fr.hint)
					return
				}
				problem(i, unexpanded, unexpandedHint)
			})
		}
		stack = append(stack, fr)
		return true
	})
}

// A variable's name with an array index, a[$(cmd)], is evaluated by
// bash as arithmetic, which runs cmd: a value must never be a name.
const (
	nameWhy  = "and bash evaluates an array index in a name (a[$(cmd)]) as arithmetic, as code"
	nameHint = `name a variable of your own and give it the value: x={{…}}`
)

// promptVars are the variables whose value bash expands, $(…) and all,
// each time it prints them.
var promptVars = map[string]bool{"PS0": true, "PS1": true, "PS2": true, "PS4": true, "PROMPT_COMMAND": true}

// codeBuiltins run their arguments as shell code: eval now, trap when its
// signal comes, alias where the alias is used; nameBuiltins take
// variables' names (and compgen and complete code too: -C, -F, -W).
var (
	codeBuiltins = map[string]string{"eval": "eval, which runs its arguments as shell code",
		"trap":  "trap, which runs its argument as shell code when the signal comes",
		"alias": "alias, whose value the shell runs as code where the alias is used"}
	nameBuiltins = map[string]bool{"read": true, "unset": true, "mapfile": true, "readarray": true,
		"compgen": true, "complete": true, "declare": true, "typeset": true, "local": true,
		"export": true, "readonly": true}
	// optName are the options whose argument is a variable's name.
	optName = map[string]string{"printf": "-v", "wait": "-p", "test": "-v", "[": "-v"}
)

// call marks the references a simple command reads as code or as a
// variable's name: an argument of eval, trap or alias, of a builtin that
// takes names, or the argument of printf -v and the like. The command's
// name is read unquoted, after command and builtin ("eval", e\val and
// command eval are eval); a name in a variable ($x) cannot be told.
func (c *Command) call(x *syntax.CallExpr, fr *frame, slotsIn func(from, to int, fn func(i int)), problem func(i int, why, hint string)) {
	args := x.Args
	name := ""
	for len(args) > 0 {
		name, _ = unquoted(args[0])
		args = args[1:]
		if name != "command" && name != "builtin" {
			break
		}
		for len(args) > 0 && strings.HasPrefix(args[0].Lit(), "-") { // command -p
			args = args[1:]
		}
	}
	mark := func(w *syntax.Word, why, hint string) {
		slotsIn(int(w.Pos().Offset()), int(w.End().Offset()), func(i int) { problem(i, why, hint) })
	}
	switch {
	case codeBuiltins[name] != "":
		if fr.unsafe == "" {
			fr.unsafe, fr.hint = "is an argument of "+codeBuiltins[name],
				"do not give a value to "+name+" as code: pass it to a command as an argument"
		}
	case name == "let":
		if fr.unsafe == "" {
			fr.unsafe, fr.hint = "is in shell arithmetic (let), which bash evaluates as code", arithHint
		}
	case nameBuiltins[name]:
		for _, w := range args {
			mark(w, "is an argument of "+name+", which takes variables' names, "+nameWhy, nameHint)
		}
	case optName[name] != "":
		opt := optName[name]
		for k, w := range args {
			why := "is a variable's name (" + name + " " + opt + "), " + nameWhy
			switch {
			case w.Lit() == opt && k+1 < len(args):
				mark(args[k+1], why, nameHint)
			case strings.HasPrefix(litPrefix(w), opt): // -v{{…}}
				mark(w, why, nameHint)
			}
		}
	}
}

// unquoted is the word as the shell reads it when it holds no
// expansion: quotes and backslashes removed.
func unquoted(w *syntax.Word) (string, bool) {
	var b strings.Builder
	var lit func(parts []syntax.WordPart) bool
	lit = func(parts []syntax.WordPart) bool {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				for i := 0; i < len(p.Value); i++ {
					if p.Value[i] == '\\' && i+1 < len(p.Value) {
						i++
					}
					b.WriteByte(p.Value[i])
				}
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if !lit(p.Parts) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	ok := lit(w.Parts)
	return b.String(), ok
}

// litPrefix is the literal text a word starts with.
func litPrefix(w *syntax.Word) string {
	if l, ok := w.Parts[0].(*syntax.Lit); ok {
		return l.Value
	}
	return ""
}

// unexpanded is the problem of a reference where the shell expands
// nothing.
const (
	unexpanded     = "is where the shell expands nothing (a here-document whose delimiter is quoted, <<'END', or after a \\), so its value cannot be put in as text"
	unexpandedHint = `unquote the here-document's delimiter (<<END, and write \$ for each $ of your own in it), or write the value outside it: printf '%s\n' {{…}} > FILE`
)

const arithHint = `compare with test instead, which reads a number and never code: [ {{…}} -eq 1 ]`

// place sets the quoting of slot i, a placeholder the parser read as an
// expansion under p.
func (c *Command) place(i int, p frame, problem func(i int, why, hint string)) {
	if p.unsafe != "" {
		problem(i, p.unsafe, p.hint)
		return
	}
	pos := posBare
	if _, dq := p.node.(*syntax.DblQuoted); dq || p.hdoc {
		pos = posDouble
	}
	c.slots[i].pos, c.slots[i].done = pos, true
}

// firstSlot is the index of the first slot starting at or after off.
func (c *Command) firstSlot(off int) int {
	lo, hi := 0, len(c.slots)
	for lo < hi {
		m := (lo + hi) / 2
		if c.slots[m].start < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (c *Command) slotStarting(off int) (int, bool) {
	i := c.firstSlot(off)
	return i, i < len(c.slots) && c.slots[i].start == off
}

// Script is the command to run and the environment that carries the
// references' values (values[k] for Refs[k]): each reference replaced
// by an expansion of its variable written for its quoting. A command
// without references is itself.
func (c *Command) Script(values []string) (script string, env []string) {
	if len(c.slots) == 0 {
		return c.src, nil
	}
	// A value over MaxEnvChunk comes in parts, joined into its variable
	// once, before the command, so that each reference stays short.
	var join strings.Builder
	for k := range c.Refs {
		v := ""
		if k < len(values) {
			v = values[k]
		}
		name := RefVarPrefix + strconv.Itoa(k+1)
		if len(v) <= MaxEnvChunk {
			env = append(env, name+"="+v)
			continue
		}
		join.WriteString(name + `="`)
		for j := 1; len(v) > 0; j++ {
			n := min(len(v), MaxEnvChunk)
			part := fmt.Sprintf("%s_%d", name, j)
			join.WriteString("${" + part + "}")
			env = append(env, part+"="+v[:n])
			v = v[n:]
		}
		join.WriteString(`"; `)
	}
	var b strings.Builder
	b.WriteString(join.String())
	last := 0
	for _, s := range c.slots {
		b.WriteString(c.src[last:s.start])
		e := "${" + RefVarPrefix + strconv.Itoa(s.ref+1) + "}"
		switch s.pos {
		case posBare:
			b.WriteString(`"` + e + `"`)
		case posDouble:
			b.WriteString(e)
		case posSingle:
			b.WriteString(`'"` + e + `"'`)
		case posSingleDollar:
			b.WriteString(`'"` + e + `"$'`)
		case posComment:
			b.WriteString(s.raw)
		}
		last = s.end
	}
	b.WriteString(c.src[last:])
	return b.String(), env
}
