package run

import (
	"fmt"
	"strings"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/vars"
	"github.com/dtree-dev/dtree/types"
)

// text is the node's text with its {{…}} references expanded
// (readme/context.md#variables), as its prompts carry it.
func (s *step) text() string { return s.expand(s.n.Text) }

// validatePrompt is the node's validate_prompt, expanded.
func (s *step) validatePrompt() string { return s.expand(s.n.ValidatePrompt) }

// commandScript is a command step's command as it runs
// (readme/context.md#in-a-command): each reference replaced by an
// expansion of a DTREE_REF_N variable written for the quoting it stands
// in, and env, those variables, each carrying a reference's value. A
// value is text to the shell, never code. A reference where no quoting
// is safe is an error (lint's unsafe_reference refuses the chart first).
func (s *step) commandScript() (script string, env map[string]string, err error) {
	c, probs := vars.ParseCommand(s.n.Command)
	if len(probs) > 0 {
		return "", nil, fmt.Errorf("%s (%s)", probs[0].Error(), probs[0].Hint)
	}
	values := make([]string, len(c.Refs))
	for k, r := range c.Refs {
		v, ok := s.value(r)
		if !ok {
			v = r.Raw // a reference the chart check refused: as written, as text
		}
		values[k] = v
	}
	script, kv := c.Script(values)
	if len(kv) > 0 {
		env = make(map[string]string, len(kv))
		for _, e := range kv {
			name, v, _ := strings.Cut(e, "=")
			env[name] = v
		}
	}
	return script, env, nil
}

// expand replaces the references in text: {{var.NAME}} with the run's
// value, {{run.id}} and {{run.workdir}}, and {{node.ID.FIELD}} with what
// that node's latest visit left. A reference the chart check refused
// stays as written.
func (s *step) expand(text string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	return vars.Expand(text, s.value)
}

// value is what reference r gives this step. A node not yet run on this
// path gives "" and a var_unset event. A NUL, which no argv or
// environment string can hold, is replaced by U+FFFD with a var_nul
// event.
func (s *step) value(r vars.Ref) (string, bool) {
	w := s.w
	v, ok := "", true
	switch r.NS {
	case vars.NSVar:
		v, ok = w.o.Vars[r.Name]
	case vars.NSRun:
		switch r.Name {
		case "id":
			if w.o.Log != nil {
				v = w.o.Log.RunID
			}
		case "workdir":
			v = s.b.tree.dir
		default:
			ok = false
		}
	case vars.NSNode:
		p, ran := s.b.lastOf(r.Name)
		if !ran {
			w.event(runlog.VarUnset{Node: s.n.ID, Ref: types.Clip(r.Raw, maxName)})
			break
		}
		v, ok = p.field(r.Field)
	}
	if n := strings.Count(v, "\x00"); n > 0 {
		v = strings.ReplaceAll(v, "\x00", "\uFFFD")
		w.event(runlog.VarNUL{Node: s.n.ID, Ref: types.Clip(r.Raw, maxName), NULs: n})
	}
	return v, ok
}

// field is what {{node.ID.FIELD}} of this step gives: as its kind says.
func (p *pastStep) field(name string) (string, bool) { return p.kind().field(p, name) }

// common is what {{node.ID.FIELD}} gives of a step whose kind has no
// field of its own by that name: its comments, its answer, its output,
// and no exit status.
func (p *pastStep) common(name string) (string, bool) {
	switch name {
	case "comments":
		if r, ok := p.Response.(types.ProcessResponse); ok {
			return strings.Join(r.Comments, "\n"), true
		}
		return "", true
	case "answer":
		if p.Label != "" {
			return p.Label, true
		}
		if r, ok := p.Response.(types.DecisionResponse); ok {
			return r.Answer, true
		}
		return "", true
	case "output":
		return p.Output, true
	case "exit_code", "reason": // a command's, a gate's
		return "", true
	}
	return "", false
}
