package run

import (
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/runlog"
	"github.com/dtree-dev/dtree/internal/vars"
	"github.com/dtree-dev/dtree/types"
)

// text is the node's text with its {{…}} references expanded
// (readme/context.md#variables), as its prompts carry it.
func (s *step) text() string { return s.expand(s.n.Text, false) }

// validatePrompt is the node's validate_prompt, expanded.
func (s *step) validatePrompt() string { return s.expand(s.n.ValidatePrompt, false) }

// commandText is a command step's command, expanded with each value
// quoted for /bin/sh: a value is one word, never code, whatever an agent
// or a --var put in it.
func (s *step) commandText() string { return s.expand(s.n.Command, true) }

// expand replaces the references in text: {{var.NAME}} with the run's
// value, {{run.id}} and {{run.workdir}}, and {{node.ID.FIELD}} with what
// that node's latest visit left. A node not yet run on this path gives ""
// and a var_unset event. A reference the chart check refused stays as
// written.
func (s *step) expand(text string, shell bool) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	w := s.w
	return vars.Expand(text, func(r vars.Ref) (string, bool) {
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
				v = w.o.Workdir
			default:
				ok = false
			}
		case vars.NSNode:
			p, ran := w.lastOf(r.Name)
			if !ran {
				w.event(runlog.VarUnset{Node: s.n.ID, Ref: types.Clip(r.Raw, maxName)})
				break
			}
			v, ok = p.field(r.Field)
		}
		if ok && shell {
			v = vars.ShellQuote(v)
		}
		return v, ok
	})
}

// field is what {{node.ID.FIELD}} of this step gives.
func (p *pastStep) field(name string) (string, bool) {
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
	case "exit_code":
		if p.Command {
			return strconv.Itoa(p.ExitCode), true
		}
		return "", true
	}
	return "", false
}
