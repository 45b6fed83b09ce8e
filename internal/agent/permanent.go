package agent

import (
	"errors"
	"path/filepath"
	"regexp"
	"slices"
)

// Failures that the next attempt cannot mend
// (readme/clis.md#errors-that-are-not-retried): the CLI's key is wrong, its
// folder is not trusted, it refuses to run as root, or it is not logged in.
// Retrying one of them only repeats it, after a backoff and often after the
// CLI's own retries, so the node fails at once with the CLI's words and a
// hint (readme/clis.md, "Errors that are not retried").
const (
	PermanentAuth      = "bad credentials"
	PermanentUntrusted = "untrusted folder"
	PermanentRoot      = "refused as root"
	PermanentLogin     = "not logged in"
	// PermanentQuota is a usage limit: the account's quota is spent until
	// it resets (a quota 429, or a "usage limit reached · resets …" notice
	// in place of an answer). A retry on the same CLI only meets it again.
	PermanentQuota = "quota"
	// PermanentRecordingEnds is the replay agent at the end of an answers
	// file recorded by a run that stopped early: the calls after it
	// were never answered.
	PermanentRecordingEnds = "end of the recording"
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
// (readme/clis.md#errors-that-are-not-retried).
var permanentRules = map[string][]permanentRule{
	"claude": {
		// As root, --dangerously-skip-permissions is refused before any
		// work (anthropics/claude-code #3490, #9184).
		{exit: 1, stdout: true, pattern: regexp.MustCompile(`cannot be used with root/sudo privileges`),
			kind: PermanentRoot, hint: RootHint},
		// API errors exit 1 with the is_error envelope; its result is the
		// message ("Invalid API key · Please run /login", "API Error: 401 …").
		{pattern: regexp.MustCompile(`(?i)invalid api key|please run /login|authentication_error|oauth token has expired|api error: 401\b`),
			kind: PermanentAuth, hint: "check ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN, from claude setup-token), or log in by running claude once"},
	},
	"gemini": {
		{exit: 55, kind: PermanentUntrusted,
			hint: "trust the working directory: set GEMINI_CLI_TRUST_WORKSPACE=true in dtree's environment, or add the folder to gemini's trusted folders"},
		// Gemini exits with the HTTP status it gave up on, cut to a byte:
		// 145 is a 401 (formats.go, geminiExits).
		{exit: 145, kind: PermanentAuth,
			hint: "check GEMINI_API_KEY (or GOOGLE_API_KEY): the API refused it"},
		{exit: 41, kind: PermanentAuth,
			hint: "set GEMINI_API_KEY and security.auth.selectedType (gemini-api-key) in ~/.gemini/settings.json, or log in by running gemini once"},
	},
	"copilot": {
		{pattern: regexp.MustCompile(`No authentication information found`), kind: PermanentLogin,
			hint: "run copilot and /login, or set COPILOT_GITHUB_TOKEN (a token with the Copilot Requests permission)"},
	},
	"codex": {
		{pattern: regexp.MustCompile(`(?i)\b401\b|unauthori[sz]ed|incorrect api key|invalid_api_key`), kind: PermanentAuth,
			hint: "check CODEX_API_KEY or OPENAI_API_KEY, or run codex login"},
	},
	"amp": {
		// Without a login amp prints a login URL on stdout and asks for a
		// code (stopped at once while it waits: waiting.go); on an empty
		// stdin it may give up instead.
		{stdout: true, pattern: ampLogin, kind: PermanentLogin, hint: ampLoginHint},
	},
	"qodo": {
		{stdout: true, pattern: regexp.MustCompile(`(?i)not logged in|qodo login|unauthenticated|invalid api key`), kind: PermanentLogin,
			hint: "run qodo login, or set QODO_API_KEY"},
	},
}

// RootHint says how to run claude as root: Claude Code accepts
// --dangerously-skip-permissions as root only inside a sandbox it is told of.
const RootHint = "as root, claude runs unattended only with IS_SANDBOX=1: set it in dtree's environment in a container or CI sandbox, or run dtree as a normal user"

// commonPermanent are rules for every CLI, custom ones included: the
// wording of HTTP 401 and 403 answers that model APIs and CLIs print.
var commonPermanent = []permanentRule{
	{pattern: regexp.MustCompile(`(?i)\b401\b.{0,40}unauthori[sz]ed|unauthori[sz]ed.{0,40}\b401\b|invalid[ _-]?(?:x-)?api[ _-]?key|incorrect api key|authentication[ _]error|api key not valid|\bapi error:? 401\b`),
		kind: PermanentAuth, hint: "check the CLI's API key or login: the same call will fail again"},
}

// classify says whether a failed call cannot be mended by another attempt:
// the kind of failure and a hint, or "" when a retry may help.
func classify(name string, exit int, message, stderr, stdout string) (kind, hint string) {
	said := message + "\n" + stderr
	if kind, hint := quota(said); kind != "" {
		return kind, hint
	}
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

// ampLogin is amp's login prompt: a URL on ampcode.com/auth, or advice to
// run amp login.
var ampLogin = regexp.MustCompile(`(?i)ampcode\.com/auth|\bamp login\b`)

const ampLoginHint = "run amp login once, or set AMP_API_KEY"

// RefusesRoot reports whether a CLI will refuse to start when dtree runs
// as root with env: Claude Code's --dangerously-skip-permissions, which
// the built-in claude passes, is refused as root unless IS_SANDBOX=1 (the
// rule above, once it has started). `dtree run` checks it before any agent
// starts.
func RefusesRoot(def Definition, getenv func(string) string) bool {
	if filepath.Base(def.Binary) != "claude" || getenv("IS_SANDBOX") == "1" || def.Env["IS_SANDBOX"] == "1" {
		return false
	}
	return slices.Contains(def.Args, "--dangerously-skip-permissions") || slices.Contains(def.FallbackArgs, "--dangerously-skip-permissions")
}

// silentExits say, by codename, why a CLI may exit non-zero having
// printed nothing at all, and what to do: said after "printed nothing".
var silentExits = map[string]string{
	// With -q, qodo prints nothing when it cannot start: not logged in,
	// a bad configuration (readme/clis.md#qodo).
	"qodo": "qodo -q prints nothing when it cannot start: run qodo once without -q to see why, or run qodo login",
}
