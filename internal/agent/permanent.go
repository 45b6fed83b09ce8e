package agent

import (
	"errors"
	"regexp"
)

// Failures that the next attempt cannot mend (SPEC §9): the CLI's key is
// wrong, its folder is not trusted, it refuses to run as root, or it is
// not logged in. Retrying one of them only repeats it, after a backoff and
// often after the CLI's own retries, so the node fails at once with the
// CLI's words and a hint (readme/clis.md, "Errors that are not retried").
const (
	PermanentAuth      = "bad credentials"
	PermanentUntrusted = "untrusted folder"
	PermanentRoot      = "refused as root"
	PermanentLogin     = "not logged in"
)

// permanentRule recognizes one failure that cannot change. A rule matches
// a failed call when its exit status is exit (0: any) and its pattern, if
// any, is found in what the CLI said: the error message it reported and
// the kept tail of stderr, and with stdout set the kept tail of stdout too
// (which otherwise holds the agent's work, not its errors).
type permanentRule struct {
	exit    int
	pattern *regexp.Regexp
	stdout  bool
	kind    string // one of the Permanent* kinds
	hint    string
}

// permanentRules are the built-ins' own rules, by codename, tried before
// commonPermanent. Each comes from what the real CLI was seen to print
// (agent-clis.md, "Verified against the real binaries").
var permanentRules = map[string][]permanentRule{}

// commonPermanent are rules for every CLI, custom ones included: the
// wording of HTTP 401 and 403 answers that model APIs and CLIs print.
var commonPermanent = []permanentRule{
	{pattern: regexp.MustCompile(`(?i)\b401\b.{0,40}unauthori[sz]ed|unauthori[sz]ed.{0,40}\b401\b|invalid[ _-]?(?:x-)?api[ _-]?key|incorrect api key|authentication[ _]error|api key not valid`),
		kind: PermanentAuth, hint: "check the CLI's API key or login: the same call will fail again"},
}

// classify says whether a failed call cannot be mended by another attempt:
// the kind of failure and a hint, or "" when a retry may help.
func classify(name string, exit int, message, stderr, stdout string) (kind, hint string) {
	said := message + "\n" + stderr
	for _, rules := range [][]permanentRule{permanentRules[name], commonPermanent} {
		for _, r := range rules {
			if r.exit != 0 && r.exit != exit {
				continue
			}
			text := said
			if r.stdout {
				text += "\n" + stdout
			}
			if r.pattern != nil && !r.pattern.MatchString(text) {
				continue
			}
			return r.kind, r.hint
		}
	}
	return "", ""
}

// Permanent returns the kind of failure an error from Run is when no
// retry can mend it (PermanentAuth, …), and the hint that says what can;
// "" for errors a retry may mend.
func Permanent(err error) (kind, hint string) {
	var ae *AgentError
	if errors.As(err, &ae) {
		return ae.Permanent, ae.Hint
	}
	return "", ""
}
