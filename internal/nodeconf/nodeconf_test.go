package nodeconf_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/nodeconf"
	"github.com/dtree-dev/dtree/types"
)

var names = agent.Names{}.With("mybot")

// node builds a node on page "p" from its tags and "key=value" metadata.
func node(tags []string, meta ...string) *types.Node {
	n := &types.Node{ID: "7", Page: "p", Kind: types.KindProcess, Shape: "Process", Text: "Fix the tests", Tags: tags, Line: 9}
	for _, kv := range meta {
		if n.Metadata == nil {
			n.Metadata = types.Metadata{}
		}
		k, v, _ := strings.Cut(kv, "=")
		n.Metadata[k] = v
	}
	return n
}

func tags(t ...string) []string { return t }

// classes lists the diagnostics' classes, in order.
func classes(ds []types.Diagnostic) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Class)
	}
	return out
}

func TestResolveCLI(t *testing.T) {
	t.Parallel()
	builtin := types.BuiltinDefaults()
	withCodex := builtin
	withCodex.CLI = "codex"
	tests := []struct {
		name string
		node *types.Node
		def  types.Defaults
		want string
		errs []string
		warn []string
	}{
		{name: "no tags: default CLI", node: node(nil), def: builtin, want: "claude"},
		{name: "no tags: configured default", node: node(nil), def: withCodex, want: "codex"},
		{name: "tag names a CLI", node: node(tags("gemini")), def: builtin, want: "gemini"},
		{name: "tag any case", node: node(tags("GEMINI")), def: builtin, want: "gemini"},
		{name: "tag is an alias", node: node(tags("claude-code")), def: withCodex, want: "claude"},
		{name: "tag cursor-agent alias", node: node(tags("Cursor-Agent")), def: builtin, want: "cursor"},
		{name: "tag custom CLI", node: node(tags("MyBot")), def: builtin, want: "mybot"},
		{name: "tag beside other tags", node: node(tags("urgent", "codex", "NoValidation")), def: builtin, want: "codex"},
		{name: "cli:NAME tag", node: node(tags("cli:aider")), def: builtin, want: "aider"},
		{name: "cli=NAME tag", node: node(tags("cli=aider")), def: builtin, want: "aider"},
		{name: "CLI: NAME tag, spaced and upper case", node: node(tags("CLI: Qodo")), def: builtin, want: "qodo"},
		{name: "cli:NAME tag with an alias", node: node(tags("cli:agent")), def: builtin, want: "cursor"},
		{name: "cli:NAME tag unknown", node: node(tags("cli:gpt")), def: builtin, want: "claude", errs: []string{"unknown_cli"}},
		{name: "cli:NAME tag empty", node: node(tags("cli:")), def: builtin, want: "claude", errs: []string{"unknown_cli"}},
		{name: "unrelated tag ignored silently", node: node(tags("urgent", "backend")), def: builtin, want: "claude"},
		{name: "near miss warns, keeps the default", node: node(tags("Geminii")), def: builtin, want: "claude", warn: []string{"unknown_cli_tag"}},
		{name: "near miss of a short name", node: node(tags("codexx")), def: builtin, want: "claude", warn: []string{"unknown_cli_tag"}},
		{name: "common words near short names are left alone", node: node(tags("code", "todo", "camp")), def: builtin, want: "claude"},
		{name: "a CLI name with spaces or separators", node: node(tags("Claude Code")), def: withCodex, want: "claude"},
		{name: "cli tag with spaces around the separator", node: node(tags("cli = gemini")), def: builtin, want: "gemini"},
		{name: "cli tag with no name", node: node(tags("cli:")), def: builtin, want: "claude", errs: []string{"unknown_cli"}},
		{name: "near miss two edits on a long name", node: node(tags("opncod")), def: builtin, want: "claude", warn: []string{"unknown_cli_tag"}},
		{name: "short tag is not a near miss", node: node(tags("amx")), def: builtin, want: "claude"},
		{name: "two CLI tags conflict", node: node(tags("gemini", "codex")), def: builtin, want: "gemini", errs: []string{"conflicting_cli_tags"}},
		{name: "bare and cli: tags conflict", node: node(tags("gemini", "cli:codex")), def: builtin, want: "gemini", errs: []string{"conflicting_cli_tags"}},
		{name: "same CLI twice is no conflict", node: node(tags("claude", "Claude", "claude-code", "cli:claude")), def: withCodex, want: "claude"},
		{name: "metadata cli settles a conflict", node: node(tags("gemini", "codex"), "cli=aider"), def: builtin, want: "aider"},
		{name: "metadata beats tag", node: node(tags("gemini"), "cli=codex"), def: builtin, want: "codex"},
		{name: "metadata beats default", node: node(nil, "cli=gemini"), def: withCodex, want: "gemini"},
		{name: "metadata key in upper case", node: node(nil, "CLI=gemini"), def: builtin, want: "gemini"},
		{name: "metadata value any case and padded", node: node(nil, "cli= Copilot "), def: builtin, want: "copilot"},
		{name: "metadata alias", node: node(nil, "cli=claude-code"), def: withCodex, want: "claude"},
		{name: "metadata unknown CLI keeps the tag", node: node(tags("gemini"), "cli=gpt"), def: builtin, want: "gemini", errs: []string{"unknown_cli"}},
		{name: "metadata unknown CLI keeps the default", node: node(nil, "cli=gpt"), def: withCodex, want: "codex", errs: []string{"unknown_cli"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, types.RoleProcess, tt.def, names)
			assert.Equal(t, tt.want, p.CLI)
			assert.Equal(t, append([]string{}, tt.errs...), classes(f.Errors))
			assert.Equal(t, append([]string{}, tt.warn...), classes(f.Warnings))
		})
	}
}

func TestResolveValidateAndRetryCLI(t *testing.T) {
	t.Parallel()
	builtin := types.BuiltinDefaults()
	configured := builtin
	configured.ValidateCLI, configured.RetryCLI = "gemini", "aider"
	tests := []struct {
		name                 string
		node                 *types.Node
		def                  types.Defaults
		cli, validate, retry string
		errs                 []string
	}{
		{name: "default to the default CLI", node: node(nil), def: builtin, cli: "claude", validate: "claude", retry: "claude"},
		{name: "follow the tag CLI", node: node(tags("codex")), def: builtin, cli: "codex", validate: "codex", retry: "codex"},
		{name: "follow the metadata CLI", node: node(tags("codex"), "cli=qodo"), def: builtin, cli: "qodo", validate: "qodo", retry: "qodo"},
		{name: "configured defaults win over the node's CLI", node: node(tags("codex")), def: configured, cli: "codex", validate: "gemini", retry: "aider"},
		{name: "snake_case metadata", node: node(tags("codex"), "validate_cli=copilot", "retry_cli=amp"), def: configured, cli: "codex", validate: "copilot", retry: "amp"},
		{name: "camelCase metadata", node: node(nil, "validateCli=copilot", "retryCli=amp"), def: builtin, cli: "claude", validate: "copilot", retry: "amp"},
		{name: "spaced and dashed keys", node: node(nil, "Validate CLI=copilot", "Retry-CLI=amp"), def: builtin, cli: "claude", validate: "copilot", retry: "amp"},
		{name: "alias in metadata", node: node(nil, "validate_cli=claude-code", "retry_cli=agent"), def: configured, cli: "claude", validate: "claude", retry: "cursor"},
		{name: "unknown validate_cli", node: node(tags("codex"), "validate_cli=gpt"), def: builtin, cli: "codex", validate: "codex", retry: "codex", errs: []string{"unknown_cli"}},
		{name: "unknown retry_cli", node: node(nil, "retry_cli=gpt"), def: configured, cli: "claude", validate: "gemini", retry: "aider", errs: []string{"unknown_cli"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, types.RoleProcess, tt.def, names)
			assert.Equal(t, tt.cli, p.CLI, "cli")
			assert.Equal(t, tt.validate, p.ValidateCLI, "validate cli")
			assert.Equal(t, tt.retry, p.RetryCLI, "retry cli")
			assert.Equal(t, append([]string{}, tt.errs...), classes(f.Errors))
		})
	}
}

func TestResolveValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		role string
		node *types.Node
		want bool
		errs []string
	}{
		{name: "process is validated", role: types.RoleProcess, node: node(nil), want: true},
		{name: "NoValidation", role: types.RoleProcess, node: node(tags("NoValidation")), want: false},
		{name: "no_validation", role: types.RoleProcess, node: node(tags("no_validation")), want: false},
		{name: "novalidation", role: types.RoleProcess, node: node(tags("novalidation")), want: false},
		{name: "No-Validation", role: types.RoleProcess, node: node(tags("No-Validation")), want: false},
		{name: "NO VALIDATION padded", role: types.RoleProcess, node: node(tags(" NO VALIDATION ")), want: false},
		{name: "NoValidation beside a CLI tag", role: types.RoleProcess, node: node(tags("gemini", "NoValidation")), want: false},
		{name: "validate false", role: types.RoleProcess, node: node(nil, "validate=false"), want: false},
		{name: "Validate FALSE", role: types.RoleProcess, node: node(nil, "Validate=FALSE"), want: false},
		{name: "validate true", role: types.RoleProcess, node: node(nil, "validate=true"), want: true},
		{name: "validate metadata overrides the NoValidation tag", role: types.RoleProcess, node: node(tags("NoValidation"), "validate=true"), want: true},
		{name: "validate accepts yes and no", role: types.RoleProcess, node: node(nil, "validate=No"), want: false},
		{name: "validate not a bool", role: types.RoleProcess, node: node(nil, "validate=maybe"), want: true, errs: []string{"bad_metadata"}},
		{name: "decision is not validated", role: types.RoleDecision, node: node(nil), want: false},
		{name: "decision with validate true", role: types.RoleDecision, node: node(nil, "validate=true"), want: false},
		{name: "terminator is not validated", role: types.RoleTerminator, node: node(nil), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, tt.role, types.BuiltinDefaults(), names)
			assert.Equal(t, tt.want, p.Validate)
			assert.Equal(t, tt.role, p.Role)
			assert.Equal(t, append([]string{}, tt.errs...), classes(f.Errors))
		})
	}
}

func TestResolveTerminatorHasNoCLI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		node *types.Node
	}{
		{name: "plain", node: node(nil)},
		{name: "tagged", node: node(tags("gemini"))},
		{name: "metadata", node: node(nil, "cli=codex", "validate_cli=gemini", "retry_cli=aider")},
	}
	def := types.BuiltinDefaults()
	def.ValidateCLI, def.RetryCLI = "gemini", "aider"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, _ := nodeconf.Resolve(tt.node, types.RoleTerminator, def, names)
			assert.Empty(t, p.CLI)
			assert.Empty(t, p.ValidateCLI)
			assert.Empty(t, p.RetryCLI)
			assert.False(t, p.Validate)
		})
	}
	// The same nodes as processes do get a CLI: the emptiness above is the
	// role's doing.
	p, _ := nodeconf.Resolve(node(nil), types.RoleProcess, def, names)
	assert.Equal(t, "claude", p.CLI)
}

func TestResolveNumbers(t *testing.T) {
	t.Parallel()
	def := types.Defaults{CLI: "claude", Retries: 3, Timeout: 600 * time.Second, MaxVisits: 10}
	tests := []struct {
		name      string
		node      *types.Node
		retries   int
		timeout   time.Duration
		maxVisits int
		errs      []string
	}{
		{name: "defaults", node: node(nil), retries: 3, timeout: 600 * time.Second, maxVisits: 10},
		{name: "retries", node: node(nil, "retries=1"), retries: 1, timeout: 600 * time.Second, maxVisits: 10},
		{name: "retries zero means no retry", node: node(nil, "retries=0"), retries: 0, timeout: 600 * time.Second, maxVisits: 10},
		{name: "Retries padded", node: node(nil, "Retries= 5 "), retries: 5, timeout: 600 * time.Second, maxVisits: 10},
		{name: "retries negative", node: node(nil, "retries=-1"), retries: 3, timeout: 600 * time.Second, maxVisits: 10, errs: []string{"bad_metadata"}},
		{name: "retries many", node: node(nil, "retries=many"), retries: 3, timeout: 600 * time.Second, maxVisits: 10, errs: []string{"bad_metadata"}},
		{name: "retries fraction", node: node(nil, "retries=1.5"), retries: 3, timeout: 600 * time.Second, maxVisits: 10, errs: []string{"bad_metadata"}},
		{name: "timeout Go duration", node: node(nil, "timeout=15m"), retries: 3, timeout: 15 * time.Minute, maxVisits: 10},
		{name: "timeout seconds", node: node(nil, "timeout=90"), retries: 3, timeout: 90 * time.Second, maxVisits: 10},
		{name: "Timeout key upper case", node: node(nil, "TIMEOUT=1h30m"), retries: 3, timeout: 90 * time.Minute, maxVisits: 10},
		{name: "timeout words", node: node(nil, "timeout=ten minutes"), retries: 3, timeout: 600 * time.Second, maxVisits: 10, errs: []string{"bad_metadata"}},
		{name: "timeout zero", node: node(nil, "timeout=0"), retries: 3, timeout: 600 * time.Second, maxVisits: 10, errs: []string{"bad_metadata"}},
		{name: "max_visits", node: node(nil, "max_visits=3"), retries: 3, timeout: 600 * time.Second, maxVisits: 3},
		{name: "maxVisits", node: node(nil, "maxVisits=4"), retries: 3, timeout: 600 * time.Second, maxVisits: 4},
		{name: "max_visits zero", node: node(nil, "max_visits=0"), retries: 3, timeout: 600 * time.Second, maxVisits: 10, errs: []string{"bad_metadata"}},
		{name: "max_visits word", node: node(nil, "max_visits=lots"), retries: 3, timeout: 600 * time.Second, maxVisits: 10, errs: []string{"bad_metadata"}},
		{name: "max_visits too large", node: node(nil, "max_visits=99999999999999999999"), retries: 3, timeout: 600 * time.Second, maxVisits: 10, errs: []string{"bad_metadata"}},
		{name: "all bad at once", node: node(nil, "retries=x", "timeout=y", "max_visits=z"), retries: 3, timeout: 600 * time.Second, maxVisits: 10,
			errs: []string{"bad_metadata", "bad_metadata", "bad_metadata"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, types.RoleProcess, def, names)
			assert.Equal(t, tt.retries, p.Retries, "retries")
			assert.Equal(t, tt.timeout, p.Timeout, "timeout")
			assert.InDelta(t, tt.timeout.Seconds(), p.TimeoutS, 1e-9, "timeout_s")
			assert.Equal(t, tt.maxVisits, p.MaxVisits, "max_visits")
			assert.Equal(t, append([]string{}, tt.errs...), classes(f.Errors))
		})
	}
}

func TestResolveValidatePrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		node *types.Node
		want string
	}{
		{name: "unset", node: node(nil), want: ""},
		{name: "snake_case", node: node(nil, "validate_prompt=Are the tests green?"), want: "Are the tests green?"},
		{name: "camelCase", node: node(nil, "validatePrompt=Is the diff small?"), want: "Is the diff small?"},
		{name: "spaced", node: node(nil, "Validate Prompt=Check the docs"), want: "Check the docs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, types.RoleProcess, types.BuiltinDefaults(), names)
			assert.Equal(t, tt.want, p.ValidatePrompt)
			assert.Empty(t, f.Errors)
		})
	}
}

// Findings point at the node so lint can print FILE:LINE and the class.
func TestResolveFindingsNameTheNode(t *testing.T) {
	t.Parallel()
	n := node(tags("gemini", "codex", "Geminii"), "retries=many", "validate_cli=gpt")
	p, f := nodeconf.Resolve(n, types.RoleProcess, types.BuiltinDefaults(), names)
	assert.Same(t, n, p.Node)
	require.Len(t, f.Errors, 3)
	require.Len(t, f.Warnings, 1)
	for _, d := range append(f.Errors, f.Warnings...) {
		assert.Equal(t, "7", d.ID, d.Class)
		assert.Equal(t, []string{"7"}, d.IDs, d.Class)
		assert.Equal(t, "p", d.Page, d.Class)
		assert.Equal(t, 9, d.Line, d.Class)
		assert.NotEmpty(t, d.Hint, d.Class)
	}
	assert.ElementsMatch(t, []string{"conflicting_cli_tags", "unknown_cli", "bad_metadata"}, classes(f.Errors))
	assert.Contains(t, f.Warnings[0].Message, "gemini", "the warning suggests the CLI meant")
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "600", want: 600 * time.Second},
		{in: "1.5", want: 1500 * time.Millisecond},
		{in: " 90 ", want: 90 * time.Second},
		{in: "90s", want: 90 * time.Second},
		{in: "15m", want: 15 * time.Minute},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "250ms", want: 250 * time.Millisecond},
		{in: "0", wantErr: true},
		{in: "0s", wantErr: true},
		{in: "-5", wantErr: true},
		{in: "-90s", wantErr: true},
		{in: "", wantErr: true},
		{in: "ten minutes", wantErr: true},
		{in: "15 m", wantErr: true},
		{in: "NaN", wantErr: true},
		{in: "Inf", wantErr: true},
		{in: "1e12", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := nodeconf.ParseDuration(tt.in)
			if tt.wantErr {
				assert.Error(t, err)
				assert.Zero(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{in: "validate_cli", want: "validatecli"},
		{in: "validateCli", want: "validatecli"},
		{in: "Validate-CLI", want: "validatecli"},
		{in: " Validate CLI ", want: "validatecli"},
		{in: "NoValidation", want: "novalidation"},
		{in: "max_visits", want: "maxvisits"},
		{in: "cli:codex", want: "cli:codex"},
		{in: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, nodeconf.Normalize(tt.in))
		})
	}
}

func TestResolveKeepRunning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		node    *types.Node
		want    bool
		wantBad bool
	}{
		{name: "unset", node: node(nil), want: false},
		{name: "true", node: node(nil, "keep_running=true"), want: true},
		{name: "camelCase yes", node: node(nil, "keepRunning=yes"), want: true},
		{name: "false", node: node(nil, "keep_running=false"), want: false},
		{name: "not a bool", node: node(nil, "keep_running=forever"), wantBad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, types.RoleProcess, types.BuiltinDefaults(), names)
			assert.Equal(t, tt.want, p.KeepRunning)
			if tt.wantBad {
				require.Len(t, f.Errors, 1)
				assert.Equal(t, "bad_metadata", f.Errors[0].Class)
				assert.Contains(t, f.Errors[0].Message, "keep_running")
			} else {
				assert.Empty(t, f.Errors)
			}
		})
	}
}

func TestResolveModel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		role string
		node *types.Node
		want string
	}{
		{name: "none", role: types.RoleProcess, node: node(nil), want: ""},
		{name: "metadata model", role: types.RoleProcess, node: node(nil, "model=opus"), want: "opus"},
		{name: "any key case, value trimmed", role: types.RoleDecision, node: node(nil, "Model= gpt-5.1-codex "), want: "gpt-5.1-codex"},
		{name: "kept as written", role: types.RoleProcess, node: node(nil, "model=anthropic/Claude-Sonnet-4"), want: "anthropic/Claude-Sonnet-4"},
		{name: "empty is unset", role: types.RoleProcess, node: node(nil, "model=  "), want: ""},
		{name: "terminators have none", role: types.RoleTerminator, node: node(nil, "model=opus"), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, tt.role, types.BuiltinDefaults(), names)
			assert.Empty(t, f.Errors)
			assert.Equal(t, tt.want, p.Model)
		})
	}
}

// A number too large to hold is said so, not called "not a whole number".
func TestResolveNumberTooLarge(t *testing.T) {
	t.Parallel()
	_, f := nodeconf.Resolve(node(nil, "max_visits=99999999999999999999"), types.RoleProcess, types.BuiltinDefaults(), agent.Names{})
	require.Len(t, f.Errors, 1)
	assert.Equal(t, `node 7: max_visits is "99999999999999999999", a whole number too large to count to`, f.Errors[0].Message)
}

func TestResolveMaxTurns(t *testing.T) {
	t.Parallel()
	d := types.BuiltinDefaults()
	d.MaxTurns = 30 // the max_turns setting
	tests := []struct {
		name    string
		node    *types.Node
		want    int
		wantBad bool
	}{
		{name: "unset: the setting", node: node(nil), want: 30},
		{name: "custom data wins", node: node(nil, "max_turns=5"), want: 5},
		{name: "0 is no bound", node: node(nil, "maxTurns=0"), want: 0},
		{name: "negative", node: node(nil, "max_turns=-1"), want: 30, wantBad: true},
		{name: "not a number", node: node(nil, "max_turns=many"), want: 30, wantBad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, types.RoleProcess, d, names)
			assert.Equal(t, tt.want, p.MaxTurns)
			if tt.wantBad {
				require.Len(t, f.Errors, 1)
				assert.Equal(t, "bad_metadata", f.Errors[0].Class)
				assert.Contains(t, f.Errors[0].Message, "max_turns")
			} else {
				assert.Empty(t, f.Errors)
			}
		})
	}
}

func TestResolvePathsAndRollback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		node         *types.Node
		wantPaths    []string
		wantRollback string
		wantBad      string // in the error's message
	}{
		{name: "unset", node: node(nil)},
		{name: "globs", node: node(nil, "paths=src/, *.go\n!src/gen/ "), wantPaths: []string{"src/", "*.go", "!src/gen/"}},
		{name: "rollback", node: node(nil, "Rollback= Attempt"), wantRollback: "attempt"},
		{name: "rollback keep", node: node(nil, "rollback=keep"), wantRollback: "keep"},
		{name: "rollback bad", node: node(nil, "rollback=always"), wantBad: `rollback is "always", not attempt or keep`},
		{name: "empty paths", node: node(nil, "paths= , "), wantBad: "paths: it lists no pattern"},
		{name: "bad glob", node: node(nil, "paths=src/[a"), wantBad: `paths: "src/[a" is not a glob`},
		{name: "never matches", node: node(nil, "paths=../other/*"), wantBad: `paths: "../other/*" has a ".." segment`},
		{name: "only negations", node: node(nil, "paths=!a"), wantBad: "every pattern is negated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, f := nodeconf.Resolve(tt.node, types.RoleProcess, types.BuiltinDefaults(), names)
			if tt.wantBad != "" {
				require.Len(t, f.Errors, 1)
				assert.Equal(t, "bad_metadata", f.Errors[0].Class)
				assert.Contains(t, f.Errors[0].Message, tt.wantBad)
				return
			}
			assert.Empty(t, f.Errors)
			assert.Equal(t, tt.wantPaths, p.Paths)
			assert.Equal(t, tt.wantRollback, p.Rollback)
		})
	}
}

// TestStep: a node's step kind is its role's unless its command key marks
// it a command step; a blank command marks nothing, and a terminator
// never runs, whatever it says.
func TestStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		role string
		meta types.Metadata
		want types.Step
	}{
		{"a process", types.RoleProcess, nil, types.StepProcess},
		{"a decision", types.RoleDecision, nil, types.StepDecision},
		{"a command", types.RoleProcess, types.Metadata{"Command": "make"}, types.StepCommand},
		{"a command decision", types.RoleDecision, types.Metadata{"command": "make test"}, types.StepCommand},
		{"a blank command", types.RoleProcess, types.Metadata{"command": "  "}, types.StepProcess},
		{"a terminator's command", types.RoleTerminator, types.Metadata{"command": "make"}, types.StepTerminator},
		{"a gate", types.RoleDecision, types.Metadata{"approval": "true"}, types.StepApproval},
		{"a gate, yes", types.RoleDecision, types.Metadata{"Approval": "yes"}, types.StepApproval},
		{"no gate", types.RoleDecision, types.Metadata{"approval": "false"}, types.StepDecision},
		{"a gate with a command", types.RoleDecision, types.Metadata{"approval": "true", "command": "make"}, types.StepApproval},
	}
	for _, tt := range tests {
		p, _ := nodeconf.Resolve(&types.Node{ID: "n", Metadata: tt.meta}, tt.role, types.BuiltinDefaults(), names)
		assert.Equal(t, tt.want, nodeconf.Step(p), tt.name)
	}
}

// TestApprovalGate: a Manual operation shape is a gate unless approval:
// false says otherwise; a gate has no CLI, no validation and no retries,
// and an approval key that is no boolean is an error that says what to
// write.
func TestApprovalGate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, shape string
		meta        types.Metadata
		want        types.Step
		wantBad     string
	}{
		{"Lucid CSV's Manual operation", "Manual operation", nil, types.StepApproval, ""},
		{"Lucid JSON's class", "ManualOperationBlockNew", nil, types.StepApproval, ""},
		{"a Manual operation kept an agent's", "Manual operation", types.Metadata{"approval": "false"}, types.StepProcess, ""},
		{"Manual input is not a gate", "Manual input", nil, types.StepProcess, ""},
		{"approval: maybe", "Process", types.Metadata{"approval": "maybe"}, types.StepProcess, `approval is "maybe", not true or false`},
	}
	for _, tt := range tests {
		p, f := nodeconf.Resolve(&types.Node{ID: "n", Shape: tt.shape, Metadata: tt.meta}, types.RoleProcess, types.BuiltinDefaults(), names)
		assert.Equal(t, tt.want, nodeconf.Step(p), tt.name)
		if tt.wantBad != "" {
			require.Len(t, f.Errors, 1, tt.name)
			assert.Contains(t, f.Errors[0].Message, tt.wantBad, tt.name)
			continue
		}
		assert.Empty(t, f.Errors, tt.name)
		if tt.want == types.StepApproval {
			assert.Empty(t, p.CLI, tt.name)
			assert.False(t, p.Validate, tt.name)
			assert.Zero(t, p.Retries, tt.name)
		}
	}
}
