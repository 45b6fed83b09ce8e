package response

import (
	"fmt"
	"strconv"

	"github.com/dtree-dev/dtree/types"
)

// The words a command decision's labels route exit statuses by
// (readme/context.md#command-steps), as CleanLabel leaves them.
var (
	passWords = []string{"yes", "pass", "passed", "success", "ok", "true"}
	failWords = []string{"no", "fail", "failed", "failure", "error", "false", "else"}
)

// ExitOutcome is what a command decision's label stands for: one exit
// status (Code), every zero status (Pass), or every non-zero one (Fail).
type ExitOutcome struct {
	Code int
	Pass bool
	Fail bool
}

// ExitLabel reads a command decision's label: a whole number is that exit
// status, a pass word is exit 0, a fail word any other status. ok is false
// for a label that is none of these.
func ExitLabel(label string) (ExitOutcome, bool) {
	l := CleanLabel(label)
	if n, err := strconv.Atoi(l); err == nil && n >= 0 && n <= 255 {
		return ExitOutcome{Code: n}, true
	}
	for _, w := range passWords {
		if l == w {
			return ExitOutcome{Pass: true}, true
		}
	}
	for _, w := range failWords {
		if l == w {
			return ExitOutcome{Fail: true}, true
		}
	}
	return ExitOutcome{}, false
}

// RouteExit picks the label a command decision takes for an exit status:
// the label that is the status itself wins; otherwise 0 takes the pass
// label and any other status the fail label. ok is false when no label
// fits (a status the labels do not cover).
func RouteExit(labels []string, code int) (string, bool) {
	word := ""
	for _, l := range labels {
		o, ok := ExitLabel(l)
		switch {
		case !ok:
		case !o.Pass && !o.Fail && o.Code == code:
			return l, true
		case word == "" && (o.Pass && code == 0 || o.Fail && code != 0):
			word = l
		}
	}
	return word, word != ""
}

// CheckExitLabels says what is wrong with a command decision's labels, ""
// when each label stands for an exit status or a pass or fail word, no
// two stand for the same, and exit 0 has a branch.
func CheckExitLabels(labels []string) string {
	seen := map[ExitOutcome]string{}
	zero := false
	for _, l := range labels {
		o, ok := ExitLabel(l)
		if !ok {
			return fmt.Sprintf("label %q is neither an exit status (0-255) nor a pass word (yes, pass, passed, success, ok, true) or fail word (no, fail, failed, failure, error, false, else)", types.Excerpt(l, 60))
		}
		if prev, dup := seen[o]; dup {
			return fmt.Sprintf("labels %q and %q take the same exit statuses", types.Excerpt(prev, 60), types.Excerpt(l, 60))
		}
		seen[o] = l
		zero = zero || o.Pass || (!o.Fail && o.Code == 0)
	}
	if !zero {
		return "no label takes exit status 0: label a branch yes (or pass, ok, 0)"
	}
	return ""
}
