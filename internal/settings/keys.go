package settings

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/nodeconf"
	"github.com/dtree-dev/dtree/types"
)

// Setting names (readme/settings.md#the-settings), as keys of the settings
// files.
const (
	KeyDefaultCLI         = "default_cli"
	KeyDefaultValidateCLI = "default_validate_cli"
	KeyDefaultRetryCLI    = "default_retry_cli"
	KeyDefaultRetryCount  = "default_retry_count"
	KeyDefaultTimeout     = "default_timeout"
	KeyLogDir             = "log_dir"
	KeyWriteLogShort      = "write_log_short"
	KeyWriteLogLong       = "write_log_long"
	KeyWriteLogGraph      = "write_log_graph"
	KeyLongLogCallMax     = "long_log_call_max"
	KeyLongLogMax         = "long_log_max"
	KeyStreamLogMax       = "stream_log_max"
	KeyMaxCost            = "max_cost"
	KeyMaxTokens          = "max_tokens"
	KeyAllowUnmetered     = "allow_unmetered"
	KeyMaxTurns           = "max_turns"
	KeyJUnit              = "junit"
	KeyWorktree           = "worktree"
	KeyKeepRuns           = "keep_runs"
	KeyRollback           = "rollback"
	KeyCheckpoints        = "checkpoints"
	KeyApprovals          = "approvals"
	KeyParallel           = "parallel"
	// KeyCLIs holds the custom CLI definitions; it is edited in the file,
	// not with `dtree settings set`.
	KeyCLIs = "clis"
)

// EnvPrefix starts every setting's environment variable: DTREE_ and the
// key in upper case (DTREE_LOG_DIR).
const EnvPrefix = "DTREE"

type kind int

const (
	kindCLI         kind = iota // a known CLI
	kindCLIOrEmpty              // a known CLI, or "" for the node's own
	kindCount                   // a whole number, 0 or more
	kindDuration                // nodeconf.ParseDuration
	kindPath                    // a non-empty path
	kindBool                    // true or false
	kindTokens                  // a whole number of tokens, 0 or more; 0: no budget
	kindMoney                   // US dollars, 0 or more; 0: no budget
	kindFileOrEmpty             // a file's path, or "" for none
	kindSize                    // bytes: 16MiB, 1GiB, 4096; 0: no bound
	kindTurns                   // a whole number of model turns, 0 or more; 0: no bound
	kindWorktree                // off, head or dirty (false, true)
	kindRollback                // attempt or keep
	kindApprovals               // ask, approve or reject
	kindParallel                // a whole number, 1 or more
)

// Key describes one scalar setting.
type Key struct {
	Name    string // in the files: default_cli
	Env     string // DTREE_DEFAULT_CLI
	Flag    string // the flag of dtree run without dashes, "" when none
	Default string // the built-in default, as text
	Help    string
	kind    kind
}

// keys are the scalar settings in the order `dtree settings list` shows
// them. Read-only: Keys hands out a copy.
var keys = []Key{
	{Name: KeyDefaultCLI, Env: "DTREE_DEFAULT_CLI", Flag: "cli", Default: types.DefaultCLI, kind: kindCLI,
		Help: "the CLI that runs a node whose tags and metadata name none"},
	{Name: KeyDefaultValidateCLI, Env: "DTREE_DEFAULT_VALIDATE_CLI", Flag: "validate-cli", kind: kindCLIOrEmpty,
		Help: `the CLI that validates a node's result; "" means the node's own CLI`},
	{Name: KeyDefaultRetryCLI, Env: "DTREE_DEFAULT_RETRY_CLI", Flag: "retry-cli", kind: kindCLIOrEmpty,
		Help: `the CLI that retries a node after a failed validation; "" means the node's own CLI`},
	{Name: KeyDefaultRetryCount, Env: "DTREE_DEFAULT_RETRY_COUNT", Flag: "retries", Default: strconv.Itoa(types.DefaultRetries), kind: kindCount,
		Help: "retries after a failed validation; 0 means one attempt and no retry"},
	{Name: KeyDefaultTimeout, Env: "DTREE_DEFAULT_TIMEOUT", Flag: "timeout", Default: types.DefaultTimeout.String(), kind: kindDuration,
		Help: "how long one agent call may take: seconds (600) or a Go duration (90s, 15m)"},
	{Name: KeyLogDir, Env: "DTREE_LOG_DIR", Flag: "log-dir", Default: types.DefaultLogDir, kind: kindPath,
		Help: "the directory each run's logs go under, relative to the working directory"},
	{Name: KeyWriteLogShort, Env: "DTREE_WRITE_LOG_SHORT", Default: "true", kind: kindBool,
		Help: "write short.json, the run's summary, in the run's log directory"},
	{Name: KeyWriteLogLong, Env: "DTREE_WRITE_LOG_LONG", Default: "true", kind: kindBool,
		Help: "write long.log, every agent call's full output, in the run's log directory"},
	{Name: KeyWriteLogGraph, Env: "DTREE_WRITE_LOG_GRAPH", Default: "true", kind: kindBool,
		Help: "write graph.svg, the chart with the run's path marked, in the run's log directory when it ends"},
	{Name: KeyLongLogCallMax, Env: "DTREE_LONG_LOG_CALL_MAX", Default: "16MiB", kind: kindSize,
		Help: "the most of one agent call's output long.log keeps, cut with a line that says so; 0 means no bound"},
	{Name: KeyLongLogMax, Env: "DTREE_LONG_LOG_MAX", Default: "1GiB", kind: kindSize,
		Help: "the most a run's long.log holds, cut with a line that says so; 0 means no bound"},
	{Name: KeyStreamLogMax, Env: "DTREE_STREAM_LOG_MAX", Default: "16MiB", kind: kindSize,
		Help: "the most of one agent call's event stream its file in streams/ keeps, cut with a line that says so; 0 means no bound"},
	{Name: KeyMaxCost, Env: "DTREE_MAX_COST", Flag: "max-cost", Default: "0", kind: kindMoney,
		Help: "the run's budget in US dollars, as the CLIs report cost; 0 means none"},
	{Name: KeyMaxTokens, Env: "DTREE_MAX_TOKENS", Flag: "max-tokens", Default: "0", kind: kindTokens,
		Help: "the run's budget in tokens, input and output, as the CLIs report them; 0 means none"},
	{Name: KeyAllowUnmetered, Env: "DTREE_ALLOW_UNMETERED", Flag: "allow-unmetered", Default: "false", kind: kindBool,
		Help: "let a run with a budget use CLIs that cannot report what it bounds (their calls go uncounted); false refuses such a run"},
	{Name: KeyMaxTurns, Env: "DTREE_MAX_TURNS", Flag: "max-turns", Default: "0", kind: kindTurns,
		Help: "the most model turns one agent call may take before it is stopped; 0 means no bound (a node's max_turns wins)"},
	{Name: KeyJUnit, Env: "DTREE_JUNIT", Flag: "junit", kind: kindFileOrEmpty,
		Help: `write a JUnit XML report of each run to this file, relative to the working directory; "" means none`},
	{Name: KeyWorktree, Env: "DTREE_WORKTREE", Flag: "worktree", Default: WorktreeOff, kind: kindWorktree,
		Help: "run in a new git worktree on branch dtree/RUN-ID: off, head (from HEAD) or dirty (from the working tree, uncommitted changes too)"},
	{Name: KeyKeepRuns, Env: "DTREE_KEEP_RUNS", Default: "100", kind: kindCount,
		Help: "how many runs log_dir keeps: each run removes the oldest finished ones past it; 0 means keep all"},
	{Name: KeyRollback, Env: "DTREE_ROLLBACK", Flag: "rollback", Default: types.RollbackKeep, kind: kindRollback,
		Help: "attempt undoes a failed attempt's change to the working tree before its retry (needs git); keep lets the retry build on it (a node's rollback wins)"},
	{Name: KeyCheckpoints, Env: "DTREE_CHECKPOINTS", Default: "true", kind: kindBool,
		Help: "in a git repository, record the working tree before the run and after each step (dtree docs workspace); false runs no git command"},
	{Name: KeyApprovals, Env: "DTREE_APPROVALS", Default: ApprovalsAsk, kind: kindApprovals,
		Help: "what a run does at an approval gate: ask (stop, exit 5, until dtree resume --approve or --reject), approve or reject every gate; --approve-all and --reject-all win"},
	{Name: KeyParallel, Env: "DTREE_PARALLEL", Flag: "parallel", Default: strconv.Itoa(types.DefaultParallel), kind: kindParallel,
		Help: "how many agent calls and command steps a run makes at once, across a fork's branches"},
}

// The values of the approvals setting (readme/charts.md#approval-gates).
const (
	ApprovalsAsk     = "ask"
	ApprovalsApprove = "approve"
	ApprovalsReject  = "reject"
)

// The values of the worktree setting (readme/workspace.md#worktrees).
const (
	WorktreeOff   = "off"
	WorktreeHead  = "head"
	WorktreeDirty = "dirty"
)

// Keys returns the scalar settings, in the order `dtree settings list`
// shows them (clis is not among them).
func Keys() []Key { return slices.Clone(keys) }

// KeyNames returns the names of every setting, clis last.
func KeyNames() []string { return append(scalarNames(), KeyCLIs) }

func scalarNames() []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.Name)
	}
	return out
}

// LookupKey returns the scalar setting called name.
func LookupKey(name string) (Key, bool) {
	i := slices.IndexFunc(keys, func(k Key) bool { return k.Name == name })
	if i < 0 {
		return Key{}, false
	}
	return keys[i], true
}

// parse checks a value given as text and returns it in canonical form: a
// CLI's codename, a whole number, a Go duration, true or false. The error
// says what is wrong; hint says what the key takes.
func (k Key) parse(raw string, names agent.Names) (string, error) {
	v := strings.TrimSpace(raw)
	switch k.kind {
	case kindCLI:
		// A list is a fallback list (readme/run.md#fallback-clis).
		list := types.SplitCLIs(v)
		if len(list) == 0 {
			return "", errors.New("the value is empty, and must name a CLI")
		}
		for i, name := range list {
			c, ok := names.Canonical(name)
			if !ok {
				return "", fmt.Errorf("%q is not a CLI dtree knows%s", name, types.DidYouMean(name, names.List()))
			}
			list[i] = c
		}
		return strings.Join(list, ","), nil
	case kindCLIOrEmpty:
		if v == "" {
			return "", nil
		}
		c, ok := names.Canonical(v)
		if !ok {
			return "", fmt.Errorf("%q is not a CLI dtree knows%s", v, types.DidYouMean(v, names.List()))
		}
		return c, nil
	case kindCount, kindTurns:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return "", fmt.Errorf("%q is not a whole number of 0 or more", raw)
		}
		return strconv.Itoa(n), nil
	case kindParallel:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", fmt.Errorf("%q is not a whole number of 1 or more", raw)
		}
		return strconv.Itoa(n), nil
	case kindTokens:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return "", fmt.Errorf("%q is not a whole number of 0 or more", raw)
		}
		return strconv.FormatInt(n, 10), nil
	case kindMoney:
		f, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", fmt.Errorf("%q is not an amount of dollars, 0 or more", raw)
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case kindDuration:
		d, err := nodeconf.ParseDuration(v)
		if err != nil {
			return "", err
		}
		return d.String(), nil
	case kindPath:
		if v == "" {
			return "", errors.New("the value is empty, and must be a directory")
		}
		return raw, nil
	case kindFileOrEmpty:
		return v, nil
	case kindWorktree:
		switch strings.ToLower(v) {
		case WorktreeOff, "false", "no", "0":
			return WorktreeOff, nil
		case WorktreeHead, "true", "yes", "1":
			return WorktreeHead, nil
		case WorktreeDirty:
			return WorktreeDirty, nil
		}
		return "", fmt.Errorf("%q is not off, head or dirty", raw)
	case kindSize:
		n, err := ParseSize(v)
		if err != nil {
			return "", err
		}
		return FormatSize(n), nil
	case kindRollback:
		switch r := strings.ToLower(v); r {
		case types.RollbackAttempt, types.RollbackKeep:
			return r, nil
		}
		return "", fmt.Errorf("%q is not attempt or keep", raw)
	case kindApprovals:
		switch r := strings.ToLower(v); r {
		case ApprovalsAsk, ApprovalsApprove, ApprovalsReject:
			return r, nil
		}
		return "", fmt.Errorf("%q is not ask, approve or reject", raw)
	case kindBool:
		switch strings.ToLower(v) {
		case "true", "yes", "on", "1":
			return "true", nil
		case "false", "no", "off", "0":
			return "false", nil
		}
		return "", fmt.Errorf("%q is not true or false", raw)
	}
	return "", fmt.Errorf("unknown kind of setting %d", k.kind)
}

// settable are the CLIs a setting may name: not replay, which answers
// only a run given --answers, and picks itself then.
func settable(names agent.Names) []string {
	return slices.DeleteFunc(names.List(), func(n string) bool { return n == agent.ReplayName })
}

// hint says what the key takes, for error hints.
func (k Key) hint(names agent.Names) string { return k.hintAs(k.Name, names) }

// hintAs is hint said of subject: the setting, or the flag that gave it.
func (k Key) hintAs(subject string, names agent.Names) string {
	switch k.kind {
	case kindCLI:
		return fmt.Sprintf("%s takes one of: %s (or a CLI defined under clis:)", subject, strings.Join(settable(names), ", "))
	case kindCLIOrEmpty:
		return fmt.Sprintf(`%s takes one of: %s (or a CLI defined under clis:), or "" for the node's own CLI`, subject, strings.Join(settable(names), ", "))
	case kindCount:
		return subject + " takes a whole number, 0 or more (0 means one attempt and no retry)"
	case kindTurns:
		return subject + " takes a whole number of model turns (30), or 0 for no bound"
	case kindParallel:
		return subject + " takes a whole number of calls at once, 1 or more (1 runs one call at a time)"
	case kindTokens:
		return subject + " takes a whole number of tokens (200000), or 0 for no budget"
	case kindMoney:
		return subject + " takes US dollars (2.50), or 0 for no budget"
	case kindDuration:
		return subject + " takes seconds (600) or a Go duration (90s, 15m)"
	case kindPath:
		return subject + " takes a directory (.dtree/runs)"
	case kindFileOrEmpty:
		return subject + ` takes a file's path (reports/dtree.xml), or "" for none`
	case kindBool:
		return subject + " takes true or false"
	case kindWorktree:
		return subject + " takes off, head (a worktree from HEAD) or dirty (from the working tree, uncommitted changes too)"
	case kindRollback:
		return subject + " takes attempt (undo a failed attempt's change before its retry) or keep"
	case kindApprovals:
		return subject + " takes ask (a gate stops the run until it is answered), approve or reject (every gate)"
	case kindSize:
		return subject + " takes a size in bytes, KiB, MiB or GiB (16MiB, 1GiB), or 0 for no bound"
	}
	return ""
}

// sizeUnits are the units a size setting takes, largest first.
var sizeUnits = []struct {
	name string
	size int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// ParseSize reads a size setting: a whole number of bytes, or of KiB, MiB
// or GiB (16MiB, 1 GiB; the case of the unit does not matter).
func ParseSize(v string) (int64, error) {
	num, mult := strings.TrimSpace(v), int64(1)
	for _, u := range sizeUnits {
		if len(num) > len(u.name) && strings.EqualFold(num[len(num)-len(u.name):], u.name) {
			num, mult = strings.TrimSpace(num[:len(num)-len(u.name)]), u.size
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size: a whole number of bytes, KiB, MiB or GiB, 0 or more", v)
	}
	return n * mult, nil
}

// FormatSize is a size as settings show it: in the largest unit it is a
// whole number of (16MiB), else in bytes.
func FormatSize(n int64) string {
	for _, u := range sizeUnits[:3] {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// Values are the values the setting takes when they are few (true and
// false), for completion; nil otherwise.
func (k Key) Values() []string {
	switch k.kind {
	case kindBool:
		return []string{"true", "false"}
	case kindWorktree:
		return []string{WorktreeOff, WorktreeHead, WorktreeDirty}
	case kindApprovals:
		return []string{ApprovalsAsk, ApprovalsApprove, ApprovalsReject}
	}
	if k.kind == kindRollback {
		return []string{types.RollbackAttempt, types.RollbackKeep}
	}
	return nil
}

// IsCLI reports whether the setting names a CLI.
func (k Key) IsCLI() bool { return k.kind == kindCLI || k.kind == kindCLIOrEmpty }

// IsPath reports whether the setting is a path: a directory or a file.
func (k Key) IsPath() bool { return k.kind == kindPath || k.kind == kindFileOrEmpty }
